"""Checks and known mistakes for exercise 7 (Transformer blocks)."""

import torch

from solutions.ex07_transformer import (AddNorm, PositionWiseFFN, TransformerDecoderBlock,
                                        TransformerEncoderBlock)

from .base import Check, Mistake, call_desc, generator, randn, reference_state
from .demo import demo_check

MODULE = "ex07_transformer"


def _module(cls, init_args, names, args, seed, dtype=torch.float32, grad=None):
    """A forward (and backward) of one module against the reference."""
    spec = {"module": MODULE, "cls": cls.__name__, "init_args": init_args,
            "state": reference_state(cls, init_args, dtype), "dtype": dtype, "args": args,
            "arg_names": names, "grad": grad or (names[0],), "grad_seed": seed,
            "watch_inputs": tuple(names)}
    dt = str(dtype).replace("torch.", "")
    shapes = ", ".join(f"{n} {tuple(a.shape)}" for n, a in zip(names, args) if isinstance(a, torch.Tensor))
    return Check(f"{cls.__name__}: {shapes}, {dt}",
                 f"{cls.__name__}{init_args} in eval mode: " + call_desc("forward", names, args),
                 "module_forward", spec)


def _decoder(num_blocks, B, T, T_src, enc_valid_lens, dtype, seed):
    """Full decoding, token-by-token decoding and a changed future, against the reference."""
    g = generator(seed)
    init_args = (8, 16, 2, 0.2)
    states = [reference_state(TransformerDecoderBlock, init_args + (i,), dtype, seed=i)
              for i in range(num_blocks)]
    spec = {"module": MODULE, "init_args": init_args, "states": states, "dtype": dtype,
            "X": randn(g, B, T, 8, dtype=dtype), "enc_outputs": randn(g, B, T_src, 8, dtype=dtype),
            "enc_valid_lens": enc_valid_lens, "grad_seed": seed, "change_from": T // 2,
            "future": randn(g, B, T - T // 2, 8, dtype=dtype)}
    dt = str(dtype).replace("torch.", "")
    lens = "None" if enc_valid_lens is None else str(enc_valid_lens.tolist())
    return Check(
        f"{num_blocks} decoder block(s): B={B}, T={T}, T_src={T_src}, {dt}",
        f"TransformerDecoderBlock{init_args + ('i',)} x {num_blocks} in eval mode, state = "
        f"[enc_outputs ({B}, {T_src}, 8), enc_valid_lens={lens}, [None] * {num_blocks}]: "
        f"forward on X ({B}, {T}, 8) at once, then one token at a time, then with positions "
        f">= {T // 2} changed",
        "decoder_modes", spec, keys=("full", "grad.X", "cache_len"),
        properties=(_causal, _incremental))


def _causal(results, spec):
    """Changing future positions must not change earlier outputs."""
    full, changed, t = results.get("full"), results.get("changed_future"), spec["change_from"]
    if isinstance(full, torch.Tensor) and isinstance(changed, torch.Tensor) and full.shape == changed.shape:
        if not torch.allclose(full[:, :t], changed[:, :t], rtol=1e-4, atol=1e-5):
            return (f"not causal: changing the inputs at positions >= {t} changed the outputs at "
                    f"positions < {t}. Mask the self-attention so position t sees positions <= t "
                    "only, in every mode (training and eval)")
    return None


def _incremental(results, spec):
    """Feeding one token at a time must give the full-sequence outputs."""
    full, inc = results.get("full"), results.get("incremental")
    if isinstance(full, torch.Tensor) and isinstance(inc, torch.Tensor) and full.shape == inc.shape:
        if not torch.allclose(full, inc, rtol=1e-4, atol=1e-5):
            worst = (full - inc).abs().amax(dim=(0, 2)).argmax().item()
            return (f"decoding one token at a time differs from decoding the whole sequence "
                    f"(first at position {worst}): concatenate caches[self.i] with X to get the "
                    "keys/values, store the result back in caches[self.i], and count the cached "
                    "positions in the causal valid lengths")
    return None


def build():
    """The exercise's checks, in the order they are reported."""
    g = generator(707)
    X8 = randn(g, 2, 5, 8)
    return [
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
        demo_check("ex07", "transformer"),  # the demo stage (grader/checks/demo.py)
    ]


MISTAKES = (
    Mistake(
        "norm_before_residual",
        "AddNorm adds first and normalises the sum: ln(dropout(Y) + X). Normalising Y and then "
        "adding X (or normalising X) is a different, pre-norm style layer.",
        "return self.ln(self.dropout(Y) + X)",
        "return self.ln(self.dropout(Y)) + X",
    ),
    Mistake(
        "no_residual",
        "AddNorm must add the sub-layer's input back: ln(dropout(Y) + X), the residual connection.",
        "return self.ln(self.dropout(Y) + X)",
        "return self.ln(self.dropout(Y))",
    ),
    Mistake(
        "ffn_no_relu",
        "The position-wise FFN has a ReLU between its two linear layers.",
        "return self.dense2(self.relu(self.dense1(X)))",
        "return self.dense2(self.dense1(X))",
    ),
    Mistake(
        "decoder_not_causal",
        "Decoder self-attention must be causal in every mode: pass per-query valid lengths "
        "(earlier positions + 1, + 2, ...) so position t attends to positions <= t only.",
        "Y = self.addnorm1(X, self.attention1(X, key_values, key_values, dec_valid_lens))",
        "Y = self.addnorm1(X, self.attention1(X, key_values, key_values, None))",
    ),
    Mistake(
        "cache_not_extended",
        "Keep every earlier position in the cache: caches[self.i] = cat(caches[self.i], X), "
        "not just the newest X.",
        "caches[self.i] = key_values",
        "caches[self.i] = X",
    ),
    Mistake(
        "cross_attention_on_x",
        "The encoder-decoder attention takes its queries from Y, the output of the first AddNorm, "
        "not from the block's input X.",
        "Z = self.addnorm2(Y, self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens))",
        "Z = self.addnorm2(Y, self.attention2(X, enc_outputs, enc_outputs, enc_valid_lens))",
    ),
)
