"""Checks and known mistakes for exercise 4 (the Bahdanau attention decoder)."""

import torch

from solutions.ex04_bahdanau import Seq2SeqAttentionDecoder

from .base import (
    Check,
    Mistake,
    generator,
    init_text,
    number_checks,
    randn,
    reference_state,
    tensor_desc,
    weights_locator,
    weights_property,
)
from .demo import demo_check


def _decoder(vocab, embed, H, layers, B, T_src, T_tgt, valid_lens, dtype, seed, train=False):
    """init_state + forward over a target sequence, against the reference (in training mode
    with the random stream seeded the same on both sides)."""
    g = generator(seed)
    init_args = (vocab, embed, H, layers, 0.2 if layers > 1 or train else 0.0)
    enc_outputs = randn(g, B, T_src, H, dtype=dtype)
    enc_hidden = randn(g, layers, B, H, dtype=dtype)
    X = torch.randint(0, vocab, (B, T_tgt), generator=g)
    spec = {"module": "ex04_bahdanau", "cls": "Seq2SeqAttentionDecoder", "init_args": init_args,
            "state": reference_state(Seq2SeqAttentionDecoder, init_args, dtype), "dtype": dtype,
            "enc_outputs": enc_outputs, "enc_hidden": enc_hidden, "enc_valid_lens": valid_lens,
            "X": X, "grad_seed": seed, "args": [None, None, None, valid_lens],
            "train": train, "train_seed": seed}
    dt = str(dtype).replace("torch.", "")
    lens = ("check.no_lens", {}) if valid_lens is None else f"enc_valid_lens={valid_lens.tolist()}"
    name = ("check.gru_decoder", {"layers": layers, "sizes": f"B={B}, T_src={T_src}, T_tgt={T_tgt}", "lens": lens,
                                  "dtype": dt})
    if train:
        name = ("check.train_mode", {"what": name, "p": init_args[-1]})
    call = ("call.in_mode", {
        "module": init_text("Seq2SeqAttentionDecoder", init_args), "mode": ("mode.train" if train else "mode.eval", {}),
        "call": (f"state = init_state(({tensor_desc('outputs', enc_outputs)}, {tensor_desc('hidden', enc_hidden)}), "
                 f"{tensor_desc('enc_valid_lens', valid_lens)}); forward({tensor_desc('X', X)}, state)")})
    return Check(name, call, "seq2seq_decoder", spec,
                 properties=(weights_property("attention_weights", 3),), target="Seq2SeqAttentionDecoder",
                 locate=weights_locator(kind="decoder"))


def variant_checks(chosen, rng):
    """Off the published exercise: the decoder at sizes drawn for the variant (its temperature given by
    grader/variants.py), every source length at least 2 so that the weights' temperature shows."""
    checks = []
    for layers, dtype in ((rng.randint(1, 2), torch.float32), (rng.randint(1, 3), torch.float64)):
        B, T_src = rng.randint(1, 3), rng.randint(3, 7)
        lens = torch.tensor([rng.randint(2, T_src) for _ in range(B)])
        checks.append(_decoder(rng.randint(5, 16), rng.randint(2, 6), rng.randint(2, 8), layers, B, T_src,
                               rng.randint(1, 4), lens, dtype, rng.randrange(2**31)))
    return checks


def build():
    """The exercise's checks, in the order they are reported."""
    return number_checks("ex04", [
        _decoder(11, 5, 6, 1, 2, 4, 3, None, torch.float32, 1),
        _decoder(11, 5, 6, 2, 2, 4, 3, torch.tensor([4, 2]), torch.float32, 2),
        _decoder(13, 3, 4, 2, 3, 5, 2, torch.tensor([1, 5, 3]), torch.float64, 3),
        _decoder(7, 4, 8, 3, 1, 6, 5, torch.tensor([6]), torch.float32, 4),
        _decoder(11, 5, 6, 2, 2, 4, 3, torch.tensor([4, 2]), torch.float32, 5, train=True),
        demo_check("ex04", "bahdanau"),  # the demo stage (grader/checks/demo.py)
        # appended (the checks above keep their ids and draws): batches as long as their target (B = T_tgt), which
        # the cases above never have, so code that mixes the batch and time axes runs on these and its hint can
        # name B != T_tgt
        _decoder(9, 4, 5, 1, 2, 4, 2, torch.tensor([3, 4]), torch.float32, 6),
        _decoder(10, 3, 6, 2, 3, 5, 3, None, torch.float64, 7),
    ])


MISTAKES = (
    Mistake(
        "query_bottom_layer",
        "query = hidden_state[-1].unsqueeze(1)",
        "query = hidden_state[0].unsqueeze(1)",
    ),
    Mistake(
        "cat_order",
        "rnn_input = torch.cat((context, embs[:, t : t + 1]), dim=-1)",
        "rnn_input = torch.cat((embs[:, t : t + 1], context), dim=-1)",
    ),
    Mistake(
        "no_valid_lens",
        "context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)",
        "context = self.attention(query, enc_outputs, enc_outputs, None)",
    ),
    Mistake(
        "state_not_updated",
        "out, hidden_state = self.rnn(rnn_input, hidden_state)",
        "out, _ = self.rnn(rnn_input, hidden_state)",
    ),
    Mistake(
        "state_not_carried",
        "out, hidden_state = self.rnn(rnn_input, hidden_state)",
        "out, step_state = self.rnn(rnn_input, hidden_state)",
        also=(("return logits, (enc_outputs, hidden_state, enc_valid_lens)",
               "return logits, (enc_outputs, step_state, enc_valid_lens)"),),
    ),
    Mistake(
        "deep_output_order",
        "torch.cat((outputs, contexts, embs), dim=-1)",
        "torch.cat((outputs, embs, contexts), dim=-1)",
    ),
    Mistake(
        "deep_output_no_tanh",
        "features = torch.tanh(self.deep_output(torch.cat((outputs, contexts, embs), dim=-1)))",
        "features = self.deep_output(torch.cat((outputs, contexts, embs), dim=-1))",
    ),
    Mistake(
        "weights_last_step_only",
        "self.attention_weights = torch.cat(step_weights, dim=1)",
        "self.attention_weights = step_weights[-1]",
    ),
    Mistake(
        "deep_output_context_first",
        "torch.cat((outputs, contexts, embs), dim=-1)",
        "torch.cat((contexts, outputs, embs), dim=-1)",
    ),
    Mistake(
        "deep_output_embs_first",
        "torch.cat((outputs, contexts, embs), dim=-1)",
        "torch.cat((embs, outputs, contexts), dim=-1)",
    ),
    Mistake(
        "query_not_updated",
        "for t in range(X.shape[1]):\n            query = hidden_state[-1].unsqueeze(1)  # (B, 1, H): top layer, previous step\n",
        "query = hidden_state[-1].unsqueeze(1)  # (B, 1, H): the initial state's top layer, never updated\n"
        "        for t in range(X.shape[1]):\n",
    ),
)
