"""Checks and known mistakes for exercise 4 (the Bahdanau attention decoder)."""

import torch

from solutions.ex04_bahdanau import Seq2SeqAttentionDecoder

from .base import Check, Mistake, generator, randn, reference_state, tensor_desc, weights_property
from .demo import demo_check


def _decoder(vocab, embed, H, layers, B, T_src, T_tgt, valid_lens, dtype, seed):
    """init_state + forward over a target sequence, against the reference."""
    g = generator(seed)
    init_args = (vocab, embed, H, layers, 0.2 if layers > 1 else 0.0)
    enc_outputs = randn(g, B, T_src, H, dtype=dtype)
    enc_hidden = randn(g, layers, B, H, dtype=dtype)
    X = torch.randint(0, vocab, (B, T_tgt), generator=g)
    spec = {"module": "ex04_bahdanau", "cls": "Seq2SeqAttentionDecoder", "init_args": init_args,
            "state": reference_state(Seq2SeqAttentionDecoder, init_args, dtype), "dtype": dtype,
            "enc_outputs": enc_outputs, "enc_hidden": enc_hidden, "enc_valid_lens": valid_lens,
            "X": X, "grad_seed": seed, "args": [None, None, None, valid_lens]}
    dt = str(dtype).replace("torch.", "")
    lens = "no valid_lens" if valid_lens is None else f"enc_valid_lens={valid_lens.tolist()}"
    name = f"decoder with {layers} GRU layer(s): B={B}, T_src={T_src}, T_tgt={T_tgt}, {lens}, {dt}"
    call = (f"Seq2SeqAttentionDecoder{init_args} in eval mode: state = init_state(("
            f"{tensor_desc('outputs', enc_outputs)}, {tensor_desc('hidden', enc_hidden)}), "
            f"{tensor_desc('enc_valid_lens', valid_lens)}); forward({tensor_desc('X', X)}, state)")
    return Check(name, call, "seq2seq_decoder", spec,
                 properties=(weights_property("attention_weights", 3),))


def build():
    """The exercise's checks, in the order they are reported."""
    return [
        _decoder(11, 5, 6, 1, 2, 4, 3, None, torch.float32, 1),
        _decoder(11, 5, 6, 2, 2, 4, 3, torch.tensor([4, 2]), torch.float32, 2),
        _decoder(13, 3, 4, 2, 3, 5, 2, torch.tensor([1, 5, 3]), torch.float64, 3),
        _decoder(7, 4, 8, 3, 1, 6, 5, torch.tensor([6]), torch.float32, 4),
        demo_check("ex04", "bahdanau"),  # the demo stage (grader/checks/demo.py)
    ]


MISTAKES = (
    Mistake(
        "query_bottom_layer",
        "The query is the TOP GRU layer's previous hidden state, hidden_state[-1]; "
        "hidden_state[0] is the bottom layer.",
        "query = hidden_state[-1].unsqueeze(1)",
        "query = hidden_state[0].unsqueeze(1)",
    ),
    Mistake(
        "cat_order",
        "The GRU input is torch.cat((context, embedding), dim=-1) in that order: the trained "
        "weights expect the context first.",
        "rnn_input = torch.cat((context, embs[:, t : t + 1]), dim=-1)",
        "rnn_input = torch.cat((embs[:, t : t + 1], context), dim=-1)",
    ),
    Mistake(
        "no_valid_lens",
        "Pass enc_valid_lens to the attention so padded source positions get weight 0.",
        "context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)",
        "context = self.attention(query, enc_outputs, enc_outputs, None)",
    ),
    Mistake(
        "state_not_updated",
        "Carry the GRU's new hidden state to the next step (out, hidden_state = self.rnn(...)): "
        "each step's query must come from the step before.",
        "out, hidden_state = self.rnn(rnn_input, hidden_state)",
        "out, _ = self.rnn(rnn_input, hidden_state)",
    ),
    Mistake(
        "deep_output_order",
        "The deep output reads torch.cat((outputs, contexts, embs), dim=-1) in that order: every "
        "step's GRU output, then its context, then the input token's embedding; the trained weights "
        "expect that layout.",
        "torch.cat((outputs, contexts, embs), dim=-1)",
        "torch.cat((outputs, embs, contexts), dim=-1)",
    ),
    Mistake(
        "deep_output_no_tanh",
        "Squash the deep output with tanh before the vocabulary layer: "
        "logits = self.dense(torch.tanh(self.deep_output(...))).",
        "features = torch.tanh(self.deep_output(torch.cat((outputs, contexts, embs), dim=-1)))",
        "features = self.deep_output(torch.cat((outputs, contexts, embs), dim=-1))",
    ),
    Mistake(
        "weights_last_step_only",
        "attention_weights must hold every step's weights, (B, T_tgt, T_src): collect the "
        "attention's weights after each step and concatenate them along dim=1.",
        "self.attention_weights = torch.cat(step_weights, dim=1)",
        "self.attention_weights = step_weights[-1]",
    ),
)
