"""Checks and known mistakes for exercise 7 (Transformer blocks)."""

import torch

from solutions.ex07_transformer import (AddNorm, PositionWiseFFN, TransformerDecoderBlock,
                                        TransformerEncoderBlock)

from .base import (Check, Mistake, call_desc, init_text, generator, number_checks, probe_steps, randn,
                   reference_state, steps_locator, with_parameter)
from .demo import demo_check
from ..harness.registry import PROBE_PREFIX

MODULE = "ex07_transformer"
# The values inside each module's forward the feedback locates a difference by, in the order they are
# computed: (name, submodule, what of its call: "out" or [position, keyword] of an argument).
PROBES = {
    "PositionWiseFFN": (("ffn_dense1", "dense1", "out"), ("ffn_relu", "relu", "out"), ("ffn_dense2", "dense2", "out")),
    "AddNorm": (("an_dropout", "dropout", "out"), ("an_sum", "ln", [0, "input"]), ("an_norm", "ln", "out")),
    "TransformerEncoderBlock": (
        ("enc_attention", "attention", "out"), ("enc_residual1", "addnorm1", [0, "X"]),
        ("enc_addnorm1", "addnorm1", "out"), ("enc_ffn_input", "ffn", [0, "X"]), ("enc_ffn", "ffn", "out"),
        ("enc_residual2", "addnorm2", [0, "X"]), ("enc_addnorm2", "addnorm2", "out")),
}
DECODER_PROBES = (  # per block i, under "<i>." (the blocks are a list); "attr:" a value the submodule keeps
    ("attention1", "attr:attention_weights"), ("attention1", "out"), ("addnorm1", "out"),
    ("attention2", [0, "queries"]), ("attention2", "out"),
    ("addnorm2", "out"), ("ffn", "out"), ("addnorm3", "out"))


def _slot_part(slot):
    """A probe name's last part: 'out', 'in', or the kept attribute's last word ('weights')."""
    if isinstance(slot, str) and slot.startswith("attr:"):
        return slot.rsplit("_", 1)[-1]
    return "out" if slot == "out" else "in"


def _decoder_probes(num_blocks, with_state=True):
    """(probes, steps) of a stack of decoder blocks: each block's sub-layers, then (with_state) the state they
    return (recorded by the decoder_modes procedure when its spec has probe_state)."""
    probes, steps = [], []
    for i in range(num_blocks):
        for path, slot in DECODER_PROBES:
            part = f"{path}_{_slot_part(slot)}"
            probes.append((f"dec{i}_{part}", f"{i}.{path}", slot))
            steps.append((f"{PROBE_PREFIX}dec{i}_{part}", f"dec_{part}", {"block": i}))
    if with_state:
        steps += [(f"{PROBE_PREFIX}state.cache.{i}", "dec_state_cache", {"block": i}) for i in range(num_blocks)]
    return tuple(probes), tuple(steps)


def _blocks_text(init_args, num_blocks):
    """'[TransformerDecoderBlock(8, 16, 2, 0.2, i) for i in range(2)]': the stack as the learner would build it."""
    return f"[{init_text('TransformerDecoderBlock', init_args)[:-1]}, i) for i in range({num_blocks})]"


def _module(cls, init_args, names, args, seed, dtype=torch.float32, grad=None, train=False):
    """A forward (and backward) of one module against the reference (in training mode with
    the random stream seeded the same on both sides)."""
    spec = {"module": MODULE, "cls": cls.__name__, "init_args": init_args,
            "state": reference_state(cls, init_args, dtype), "dtype": dtype, "args": args,
            "arg_names": names, "grad": grad or (names[0],), "grad_seed": seed,
            "watch_inputs": tuple(names), "train": train, "train_seed": seed, "probes": PROBES[cls.__name__]}
    dt = str(dtype).replace("torch.", "")
    shapes = ", ".join(f"{n} {tuple(a.shape)}" for n, a in zip(names, args) if isinstance(a, torch.Tensor))
    name = f"{cls.__name__}: {shapes}, {dt}"
    if train:
        name = ("check.train_mode", {"what": name, "p": init_args[-1] if cls is AddNorm else init_args[3]})
    call = ("call.in_mode", {"module": init_text(cls.__name__, init_args),
                             "mode": ("mode.train" if train else "mode.eval", {}),
                             "call": call_desc("forward", names, args)})
    return Check(name, call, "module_forward", spec, target=cls.__name__,
                 locate=steps_locator(probe_steps(PROBES[cls.__name__])))


def _decoder(num_blocks, B, T, T_src, enc_valid_lens, dtype, seed, init_args=(8, 16, 2, 0.2)):
    """Full decoding, token-by-token decoding and a changed future, against the reference; init_args:
    (num_hiddens, ffn_num_hiddens, num_heads, dropout) of every block."""
    g = generator(seed)
    d = init_args[0]
    states = [reference_state(TransformerDecoderBlock, init_args + (i,), dtype, seed=i)
              for i in range(num_blocks)]
    probes, steps = _decoder_probes(num_blocks)
    spec = {"module": MODULE, "cls": "TransformerDecoderBlock", "init_args": init_args, "states": states, "dtype": dtype,
            "X": randn(g, B, T, d, dtype=dtype), "enc_outputs": randn(g, B, T_src, d, dtype=dtype),
            "enc_valid_lens": enc_valid_lens, "grad_seed": seed, "change_from": T // 2,
            "future": randn(g, B, T - T // 2, d, dtype=dtype), "probes": probes, "probe_state": True}
    dt = str(dtype).replace("torch.", "")
    lens = "None" if enc_valid_lens is None else str(enc_valid_lens.tolist())
    return Check(
        ("check.decoder", {"blocks": num_blocks, "what": f"B={B}, T={T}, T_src={T_src}, {dt}"}),
        ("call.decoder", {"module": _blocks_text(init_args, num_blocks),
                          "state": f"[enc_outputs ({B}, {T_src}, {d}), enc_valid_lens={lens}, [None] * {num_blocks}]",
                          "X": f"X ({B}, {T}, {d})", "t": T // 2}),
        "decoder_modes", spec, keys=("full", "grad.X", "cache_len"),
        properties=(_causal, _incremental), target="TransformerDecoderBlock", locate=steps_locator(steps, "full"),
        locate_properties=True)


def _decoder_train(num_blocks, B, T, T_src, enc_valid_lens, seed):
    """The decoder blocks in training mode (dropout 0.5), the random stream seeded the same on both sides."""
    g = generator(seed)
    init_args = (8, 16, 2, 0.5)
    states = [reference_state(TransformerDecoderBlock, init_args + (i,), seed=i) for i in range(num_blocks)]
    probes, steps = _decoder_probes(num_blocks, with_state=False)
    spec = {"module": MODULE, "cls": "TransformerDecoderBlock", "init_args": init_args, "states": states,
            "X": randn(g, B, T, 8),
            "enc_outputs": randn(g, B, T_src, 8), "enc_valid_lens": enc_valid_lens, "train_seed": seed,
            "probes": probes}
    lens = "None" if enc_valid_lens is None else str(enc_valid_lens.tolist())
    return Check(
        ("check.train_mode", {"what": ("check.decoder", {"blocks": num_blocks,
                                                          "what": f"B={B}, T={T}, T_src={T_src}, float32"}),
                              "p": 0.5}),
        ("call.decoder_train", {"module": _blocks_text(init_args, num_blocks),
                                "state": f"[enc_outputs ({B}, {T_src}, 8), enc_valid_lens={lens}, [None] * {num_blocks}]",
                                "X": f"X ({B}, {T}, 8)"}),
        "decoder_train", spec, target="TransformerDecoderBlock",
        locate=steps_locator(steps, "full"))


def _causal(results, spec):
    """Changing future positions must not change earlier outputs."""
    full, changed, t = results.get("full"), results.get("changed_future"), spec["change_from"]
    if isinstance(full, torch.Tensor) and isinstance(changed, torch.Tensor) and full.shape == changed.shape:
        if not torch.allclose(full[:, :t], changed[:, :t], rtol=1e-4, atol=1e-5):
            return ("prop.not_causal", {"t": t})
    return None


def _incremental(results, spec):
    """Feeding one token at a time must give the full-sequence outputs."""
    full, inc = results.get("full"), results.get("incremental")
    if isinstance(full, torch.Tensor) and isinstance(inc, torch.Tensor) and full.shape == inc.shape:
        if not torch.allclose(full, inc, rtol=1e-4, atol=1e-5):
            worst = (full - inc).abs().amax(dim=(0, 2)).argmax().item()
            return ("prop.not_incremental", {"position": worst})
    return None


def variant_checks(chosen, rng):
    """Off the published exercise: the FFN, AddNorm and both blocks at sizes, head counts and valid lengths
    drawn for the variant (its negative slope given by grader/variants.py)."""
    g = generator(rng.randrange(2**31))
    B, T, d_in = rng.randint(1, 3), rng.randint(1, 5), rng.randint(2, 9)
    ffn = (d_in, rng.randint(4, 16), rng.randint(1, 9))
    normalized = rng.randint(2, 9)
    heads = rng.randint(1, 4)
    d = heads * rng.randint(1, 4)
    T_enc = rng.randint(2, 6)
    encoder = (d, rng.randint(4, 16), heads, 0.2, rng.random() < 0.5)
    heads = rng.randint(1, 3)
    decoder = (heads * rng.randint(1, 4), rng.randint(4, 16), heads, 0.2)
    T_src = rng.randint(2, 6)
    return [
        _module(PositionWiseFFN, ffn, ["X"], [randn(g, B, T, d_in)], rng.randrange(2**31)),
        _module(AddNorm, (normalized, 0.2), ["X", "Y"], [randn(g, B, T, normalized), randn(g, B, T, normalized)],
                rng.randrange(2**31), grad=("X", "Y")),
        _module(TransformerEncoderBlock, encoder, ["X", "valid_lens"],
                [randn(g, B, T_enc, d, dtype=torch.float64), torch.tensor([rng.randint(1, T_enc) for _ in range(B)])],
                rng.randrange(2**31), dtype=torch.float64),
        _decoder(rng.randint(1, 2), B, rng.randint(2, 5), T_src, torch.tensor([rng.randint(1, T_src) for _ in range(B)]),
                 torch.float32, rng.randrange(2**31), init_args=decoder),
    ]


def build():
    """The exercise's checks, in the order they are reported."""
    g = generator(707)
    X8 = randn(g, 2, 5, 8)
    return number_checks("ex07", [
        _module(PositionWiseFFN, (4, 9, 5), ["X"], [randn(g, 2, 3, 4)], 1),
        _module(AddNorm, (6, 0.2), ["X", "Y"], [randn(g, 2, 3, 6), randn(g, 2, 3, 6)], 2, grad=("X", "Y")),
        _module(AddNorm, ((4,), 0.2), ["X", "Y"],
                [randn(g, 3, 2, 4, dtype=torch.float64), randn(g, 3, 2, 4, dtype=torch.float64)], 3,
                dtype=torch.float64, grad=("X", "Y")),
        _module(TransformerEncoderBlock, (8, 16, 2, 0.2), ["X", "valid_lens"], [X8, None], 4),
        _module(TransformerEncoderBlock, (8, 16, 2, 0.2), ["X", "valid_lens"], [X8, torch.tensor([5, 3])], 5),
        _module(TransformerEncoderBlock, (8, 12, 4, 0.2, True), ["X", "valid_lens"],
                [randn(g, 3, 4, 8, dtype=torch.float64), torch.tensor([2, 4, 1])], 6, dtype=torch.float64),
        _decoder(1, 2, 5, 4, torch.tensor([4, 2]), torch.float32, 7),
        _decoder(2, 3, 4, 6, torch.tensor([6, 1, 3]), torch.float64, 8),
        _decoder(2, 1, 6, 3, None, torch.float32, 9),
        # Training mode: dropout in AddNorm and inside the attention, the same random stream as the reference.
        _module(AddNorm, (6, 0.5), ["X", "Y"], [randn(g, 2, 3, 6), randn(g, 2, 3, 6)], 10, grad=("X", "Y"),
                train=True),
        _module(TransformerEncoderBlock, (8, 16, 2, 0.5), ["X", "valid_lens"], [X8, torch.tensor([5, 3])], 11,
                train=True),
        _decoder_train(2, 2, 5, 4, torch.tensor([4, 2]), 12),
        demo_check("ex07", "transformer"),  # the demo stage (grader/checks/demo.py)
        *_slope_checks(),  # appended: the checks above keep their ids and draws
    ])


SLOPE = 0.2  # an explicit negative slope, off the published 0.0: an FFN with a plain ReLU whatever it is given differs


def _slope_checks():
    """The FFN with its negative slope given explicitly (judged where the learner's class takes it)."""
    g = generator(708)
    return [with_parameter(_module(PositionWiseFFN, (4, 9, 5), ["X"], [randn(g, 2, 3, 4)], 13), "negative_slope",
                           SLOPE)]


MISTAKES = (
    Mistake(
        "norm_before_residual",
        "return self.ln(self.dropout(Y) + X)",
        "return self.ln(self.dropout(Y)) + X",
        where=("AddNorm",),
    ),
    Mistake(
        "no_residual",
        "return self.ln(self.dropout(Y) + X)",
        "return self.ln(self.dropout(Y))",
        where=("AddNorm",),
    ),
    Mistake(
        "ffn_slope_ignored",
        "self.relu = nn.LeakyReLU(negative_slope)",
        "self.relu = nn.ReLU()",
        where=("PositionWiseFFN",),
    ),
    Mistake(
        "ffn_no_relu",
        "return self.dense2(self.relu(self.dense1(X)))",
        "return self.dense2(self.dense1(X))",
        where=("PositionWiseFFN",),
    ),
    Mistake(
        "decoder_not_causal",
        "Y = self.addnorm1(X, self.attention1(X, key_values, key_values, dec_valid_lens))",
        "Y = self.addnorm1(X, self.attention1(X, key_values, key_values, None))",
        where=("TransformerDecoderBlock",),
    ),
    Mistake(
        "cache_not_extended",
        "caches[self.i] = key_values",
        "caches[self.i] = X",
        where=("TransformerDecoderBlock",),
    ),
    Mistake(
        "cross_attention_on_x",
        "Z = self.addnorm2(Y, self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens))",
        "Z = self.addnorm2(Y, self.attention2(X, enc_outputs, enc_outputs, enc_valid_lens))",
        where=("TransformerDecoderBlock",),
    ),
    Mistake(
        "addnorm_no_dropout",
        "return self.ln(self.dropout(Y) + X)",
        "return self.ln(Y + X)",
        where=("AddNorm",),
    ),
    Mistake(
        "addnorm_args_swapped",
        "Y = self.addnorm1(X, self.attention(X, X, X, valid_lens))",
        "Y = self.addnorm1(self.attention(X, X, X, valid_lens), X)",
        where=("TransformerEncoderBlock",),
    ),
    Mistake(
        "causal_sees_nothing",
        "dec_valid_lens = torch.arange(num_earlier + 1, num_earlier + T + 1, device=X.device)",
        "dec_valid_lens = torch.arange(num_earlier, num_earlier + T, device=X.device)",
        where=("TransformerDecoderBlock",),
    ),
    Mistake(
        "causal_sees_next",
        "dec_valid_lens = torch.arange(num_earlier + 1, num_earlier + T + 1, device=X.device)",
        "dec_valid_lens = torch.arange(num_earlier + 2, num_earlier + T + 2, device=X.device)",
        where=("TransformerDecoderBlock",),
    ),
    Mistake(
        "causal_ignores_cache",
        "num_earlier = key_values.shape[1] - T",
        "num_earlier = 0",
        where=("TransformerDecoderBlock",),
    ),
    Mistake(
        "encoder_ignores_valid_lens",
        "Y = self.addnorm1(X, self.attention(X, X, X, valid_lens))",
        "Y = self.addnorm1(X, self.attention(X, X, X, None))",
        where=("TransformerEncoderBlock",),
    ),
    Mistake(
        "cross_attention_ignores_enc_valid_lens",
        "self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens)",
        "self.attention2(Y, enc_outputs, enc_outputs, None)",
        where=("TransformerDecoderBlock",),
    ),
)
