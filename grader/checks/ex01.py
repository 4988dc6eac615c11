"""Checks and known mistakes for exercise 1 (softmax, masked softmax)."""

import torch

from .base import Check, Mistake, call_desc, generator, randn, unchanged_input, weights_property

MODULE = "ex01_softmax"


def _softmax(name, X, dim, seed):
    spec = {"module": MODULE, "fn": "softmax", "args": [X], "arg_names": ["X"],
            "kwargs": {"dim": dim}, "grad": ("X",), "grad_seed": seed, "watch_inputs": ("X",)}
    return Check(name, call_desc("softmax", ["X", "dim"], [X, dim]), "call_without_builtin_softmax",
                 spec, properties=(unchanged_input("X"),))


def _masked(name, X, valid_lens, seed):
    spec = {"module": MODULE, "fn": "masked_softmax", "args": [X, valid_lens],
            "arg_names": ["X", "valid_lens"], "grad": ("X",), "grad_seed": seed, "watch_inputs": ("X",)}
    return Check(name, call_desc("masked_softmax", ["X", "valid_lens"], [X, valid_lens]),
                 "call_without_builtin_softmax", spec,
                 properties=(weights_property("output", 1), unchanged_input("X")))


def build():
    """The exercise's checks, in the order they are reported."""
    g = generator(101)
    with_inf = randn(g, 3, 5)
    with_inf[0, 1] = with_inf[2, 0] = with_inf[2, 4] = float("-inf")
    return [
        _softmax("softmax over the last axis, float32", randn(g, 2, 3, 5), -1, 1),
        _softmax("softmax over axis 1, float64", randn(g, 2, 4, 3, dtype=torch.float64), 1, 2),
        _softmax("softmax of logits near 1e4 does not overflow", 1e4 + randn(g, 3, 4), -1, 3),
        _softmax("softmax of large negative logits does not underflow to 0/0",
                 -1e4 + randn(g, 2, 4, dtype=torch.float64), -1, 4),
        _softmax("softmax gives -inf entries weight 0", with_inf, -1, 5),
        _masked("masked_softmax without valid_lens is a plain softmax", randn(g, 2, 3, 4), None, 6),
        _masked("masked_softmax with one length per example",
                randn(g, 3, 2, 5), torch.tensor([2, 5, 1]), 7),
        _masked("masked_softmax with one length per query, float64",
                randn(g, 2, 3, 4, dtype=torch.float64), torch.tensor([[1, 2, 4], [3, 1, 2]]), 8),
        _masked("masked_softmax: a valid length of 0 gives an all-zero row, not NaN",
                randn(g, 2, 2, 3), torch.tensor([0, 2]), 9),
        _masked("masked_softmax: per-query lengths with zeros, float64",
                randn(g, 2, 4, 6, dtype=torch.float64), torch.tensor([[0, 6, 3, 1], [2, 0, 0, 5]]), 10),
    ]


MISTAKES = (
    Mistake(
        "softmax_no_shift",
        "exp of large logits overflows to inf (exp(1e4) = inf, and inf/inf = NaN): "
        "subtract the maximum along `dim` first; softmax(x - c) = softmax(x) for any constant c.",
        "X_exp = torch.exp(X - X_max)",
        "X_exp = torch.exp(X)",
    ),
    Mistake(
        "softmax_fixed_axis",
        "Normalise along the `dim` argument, not always along the last axis: "
        "pass dim (with keepdim=True) to both the max and the sum.",
        "X_exp.sum(dim=dim, keepdim=True)",
        "X_exp.sum(dim=-1, keepdim=True)",
        also=(("X.detach().amax(dim=dim, keepdim=True)", "X.detach().amax(dim=-1, keepdim=True)"),),
    ),
    Mistake(
        "mask_fill_zero",
        "Masked keys are filled with 0 before the softmax, but exp(0) = 1 is not a zero weight: "
        "fill the scores of masked keys with -inf (or a huge negative number such as -1e6).",
        'scores = X.masked_fill(~mask, float("-inf"))',
        "scores = X.masked_fill(~mask, 0.0)",
    ),
    Mistake(
        "mask_off_by_one",
        "Key j is valid when j < valid_len (indices start at 0): a length of 2 keeps keys 0 and 1.",
        "return key_index[None, None, :] < lens[:, :, None].to(X.device)",
        "return key_index[None, None, :] <= lens[:, :, None].to(X.device)",
    ),
    Mistake(
        "empty_row_nan",
        "A row whose valid length is 0 has every score at -inf, and exp(-inf)/sum = 0/0 = NaN. "
        "Return zeros for such rows, e.g. divide by the sum clamped to a tiny positive number, "
        "or zero the weights of masked keys after the softmax.",
        "return X_exp / total.clamp_min(torch.finfo(X_exp.dtype).tiny)",
        "return X_exp / total",
    ),
    Mistake(
        "mask_lens_per_query_ignored",
        "valid_lens may have shape (B, n_q): one length per query. Use it as it is then, "
        "and repeat a (B,) tensor over the queries only when it is 1-D.",
        "lens = valid_lens  # (B, n_q)",
        "lens = valid_lens[:, :1].expand(B, n_q)  # (B, n_q)",
    ),
)
