"""Checks and known mistakes for exercise 10 (tiled attention with the online softmax).

tiled_attention is judged against the reference solutions/ex10_tiled_attention.py, which equals exercise 3's
DotProductAttention on every case here, forward and backward (tests/test_references.py holds it to that). That
the learner's version is tiled is judged from what it does, not from its source: one check runs it on 300 keys
in the sandbox child with every tensor a torch operation creates measured (procedure call_measuring_tensors),
and no tensor may hold a quarter of the full (B, n_q, n_k) scores, which the whole score matrix, the whole
weight matrix, a mask over all keys or a softmax over all keys each would.
"""

import torch

from ..harness.procedures import LARGEST_NUMEL, LARGEST_SHAPE
from .base import Check, Mistake, call_desc, generator, number_checks, randn, unchanged_input

MODULE = "ex10_tiled_attention"
NAMES = ["queries", "keys", "values", "block_size", "valid_lens"]
UPDATE_NAMES = ["m", "l", "acc", "scores", "values"]
MEASURED = {"B": 1, "n_q": 16, "d": 2, "v": 2}  # the measured check's sizes: n_k is 300 (or drawn above it)
FULL_SHARE = 4  # a created tensor of (B * n_q * n_k) / FULL_SHARE elements or more counts as the full scores


def _dtype(dtype):
    return str(dtype).replace("torch.", "")


def _block_text(block_size):
    """A check name's block size: the number, or "your default" (in the report's language)."""
    return ("check.ex10.default_block", {}) if block_size is None else block_size


def _blocks(num_keys, block_size=None):
    """key_blocks(num_keys[, block_size]); without it, the learner's default (the variant's value)."""
    args, names = ([num_keys], ["num_keys"]) if block_size is None else ([num_keys, block_size],
                                                                         ["num_keys", "block_size"])
    spec = {"module": MODULE, "fn": "key_blocks", "args": args, "arg_names": names, "output_pairs": True}
    name = ("check.ex10.blocks", {"n_k": num_keys, "block": _block_text(block_size)})
    return Check(name, call_desc("key_blocks", names, args), "call", spec, target="key_blocks")


def _error(fn, names, args, what):
    """A call the docstring says must raise ValueError."""
    spec = {"module": MODULE, "fn": fn, "args": args, "arg_names": names, "expect_error": True}
    return Check(("check.raises", {"call": call_desc(fn, names, args), "error": "ValueError"}),
                 call_desc(fn, names, args), "call", spec, target=fn)


def _mask(valid_lens, batch, num_queries, start, stop):
    names = ["valid_lens", "batch", "num_queries", "start", "stop"]
    args = [valid_lens, batch, num_queries, start, stop]
    spec = {"module": MODULE, "fn": "block_mask", "args": args, "arg_names": names}
    name = ("check.ex10.mask", {"lens": str(tuple(valid_lens.shape)), "start": start, "stop": stop})
    return Check(name, call_desc("block_mask", names, args), "call", spec, properties=(_is_bool,), target="block_mask")


def _is_bool(results, spec):
    """block_mask returns a boolean tensor (masked_fill and ~ need one)."""
    out = results.get("output")
    if isinstance(out, torch.Tensor) and out.dtype != torch.bool:
        return ("prop.ex10.mask_not_bool", {"dtype": _dtype(out.dtype)})
    return None


def _update(m, l, acc, scores, values, what):  # noqa: E741
    """One online_softmax_update on given running statistics and one block (scores already scaled and masked)."""
    args = [m, l, acc, scores, values]
    spec = {"module": MODULE, "fn": "online_softmax_update", "args": args, "arg_names": UPDATE_NAMES,
            "watch_inputs": ("m", "l", "acc", "scores")}
    name = ("check.ex10.update", {"what": (f"check.ex10.update_{what}", {}), "shape": tuple(scores.shape),
                                  "dtype": _dtype(scores.dtype)})
    return Check(name, call_desc("online_softmax_update", UPDATE_NAMES, args), "call", spec,
                 properties=tuple(unchanged_input(n) for n in ("m", "l", "acc", "scores")),
                 target="online_softmax_update")


def _attention(B, n_q, n_k, d, v, block_size, valid_lens, dtype, seed, scale=1.0, measured=False):
    """tiled_attention forward and backward; block_size None leaves it to the learner's default."""
    g = generator(seed)
    args = [randn(g, B, n_q, d, dtype=torch.float64).mul(scale).to(dtype),
            randn(g, B, n_k, d, dtype=torch.float64).mul(scale).to(dtype), randn(g, B, n_k, v, dtype=dtype)]
    names = ["queries", "keys", "values"]
    kwargs = {"valid_lens": valid_lens}
    if block_size is not None:
        args.append(block_size)
        names.append("block_size")
    spec = {"module": MODULE, "fn": "tiled_attention", "args": args, "arg_names": names, "kwargs": kwargs,
            "watch_inputs": ("queries", "keys", "values")}
    if not measured:  # the measured call is the slowest (300 keys, maybe in blocks of 2): gradients elsewhere
        spec.update(grad=("queries", "keys", "values"), grad_seed=seed)
    lens = ("check.no_lens", {}) if valid_lens is None else f"valid_lens {tuple(valid_lens.shape)}"
    fields = {"sizes": f"B={B}, n_q={n_q}, n_k={n_k}, d={d}", "lens": lens, "dtype": _dtype(dtype),
              "block": _block_text(block_size)}
    name = ("check.ex10.measured" if measured else "check.ex10.large" if scale > 1 else "check.ex10.attention",
            fields)
    properties = tuple(unchanged_input(n) for n in ("queries", "keys", "values"))
    if measured:
        properties += (_never_full,)
    return Check(name, call_desc("tiled_attention", names + ["valid_lens"], args + [valid_lens]),
                 "call_measuring_tensors" if measured else "call", spec, properties=properties,
                 target="tiled_attention")


def _never_full(results, spec):
    """No tensor the call created holds a FULL_SHARE-th of the full (B, n_q, n_k) scores (measured in the
    child; a number that is not a whole number, or none at all, is reported as not measured)."""
    queries, keys = spec["args"][0], spec["args"][1]
    full = queries.shape[0] * queries.shape[1] * keys.shape[1]
    numel, shape = results.get(LARGEST_NUMEL), results.get(LARGEST_SHAPE)
    if type(numel) is not int or not isinstance(shape, str):
        return ("prop.ex10.not_measured", {})
    if numel * FULL_SHARE >= full:
        return ("prop.ex10.full_scores", {"shape": f"({shape[:60]})", "numel": numel,
                                          "full": f"({queries.shape[0]}, {queries.shape[1]}, {keys.shape[1]})",
                                          "limit": full // FULL_SHARE})
    return None


def _running(g, B, n_q, v, m, dtype):
    """Running statistics (m, l, acc) as a walk over earlier blocks leaves them: l >= 1 where m is finite
    (the max itself contributes exp(0) = 1), 0 (and acc 0) where m is -inf."""
    m = torch.as_tensor(m, dtype=torch.float64).reshape(B, n_q, 1)
    seen = torch.isfinite(m)
    l = torch.where(seen, 1.0 + 2.0 * torch.rand(B, n_q, 1, generator=g, dtype=torch.float64), 0.0)  # noqa: E741
    acc = torch.where(seen, randn(g, B, n_q, v, dtype=torch.float64), 0.0)
    return m.to(dtype), l.to(dtype), acc.to(dtype)


def _update_checks():
    """The recurrence step alone: a first block, a max that grows in some rows, one that does not, rows with
    every score masked so far (m = -inf) or in this block, and scores far beyond exp's range."""
    g = generator(110)
    minus = float("-inf")
    first = _running(g, 2, 3, 4, [[minus] * 3] * 2, torch.float64)
    grow = _running(g, 2, 3, 4, [[-0.5, 2.5, 0.1], [3.0, -1.0, 0.4]], torch.float64)
    stay = _running(g, 1, 4, 3, [[4.0, 5.0, 3.5, 6.0]], torch.float32)
    masked = _running(g, 2, 2, 3, [[minus, 1.5], [minus, minus]], torch.float64)
    masked_scores = randn(g, 2, 2, 5, dtype=torch.float64)
    masked_scores[0, 0] = masked_scores[0, 1] = minus  # a row still unseen, a seen row whose block is masked
    masked_scores[1, 0, 3:] = minus  # a first block partly masked
    masked_scores[1, 1] = minus  # nothing seen at all yet
    big = _running(g, 1, 3, 2, [[95.0, 120.0, 101.0]], torch.float32)
    return [
        _update(*first, randn(g, 2, 3, 5, dtype=torch.float64), randn(g, 2, 5, 4, dtype=torch.float64), "first"),
        _update(*grow, 1.5 + randn(g, 2, 3, 4, dtype=torch.float64), randn(g, 2, 4, 4, dtype=torch.float64), "grow"),
        _update(*stay, randn(g, 1, 4, 6), randn(g, 1, 6, 3), "stay"),
        _update(*masked, masked_scores, randn(g, 2, 5, 3, dtype=torch.float64), "masked"),
        _update(*big, 100.0 + 4.0 * randn(g, 1, 3, 5), randn(g, 1, 5, 2), "large"),
    ]


def _measured(rng=None, seed=20):
    """tiled_attention on 300 keys (drawn from 300 .. 360 off the published exercise) with its default block size,
    per-query lengths, every created tensor measured. The sizes leave room for what a tiled version may create:
    a block's scores (16 x 64 at most) and a copy of the keys or values (n_k x 2) stay below a quarter of the
    full scores (16 x n_k / 4 = 4 n_k elements)."""
    n_k = 300 if rng is None else rng.randint(300, 360)
    g = generator(seed)
    lens = torch.randint(1, n_k + 1, (MEASURED["B"], MEASURED["n_q"]), generator=g)  # (B, n_q)
    return _attention(MEASURED["B"], MEASURED["n_q"], n_k, MEASURED["d"], MEASURED["v"], None, lens,
                      torch.float32, seed, measured=True)


def build():
    """The exercise's checks, in the order they are reported."""
    return number_checks("ex10", [
        _blocks(40),
        _blocks(10, 4),
        _blocks(12, 4),
        _blocks(5, 8),
        _blocks(0, 3),
        _error("key_blocks", ["num_keys", "block_size"], [10, 0], "too small"),
        _mask(torch.tensor([3, 7]), 2, 3, 4, 8),
        _mask(torch.tensor([[0, 5, 9], [6, 2, 4]]), 2, 3, 4, 9),
        _error("block_mask", ["valid_lens", "batch", "num_queries", "start", "stop"],
               [torch.tensor([3, 7, 1]), 2, 3, 0, 4], "bad shape"),
        *_update_checks(),
        _attention(2, 5, 13, 4, 3, 4, None, torch.float32, 1),
        _attention(2, 4, 13, 8, 5, 5, torch.tensor([13, 6]), torch.float64, 2),
        _attention(2, 4, 11, 4, 3, 3, torch.tensor([[0, 4, 11, 3], [7, 0, 1, 10]]), torch.float64, 3),
        _attention(3, 3, 9, 6, 2, 16, torch.tensor([[9, 2, 5], [1, 0, 8], [4, 4, 4]]), torch.float32, 4),
        _attention(1, 4, 6, 4, 4, 1, torch.tensor([5]), torch.float64, 5),
        _attention(2, 3, 10, 4, 3, 4, torch.tensor([10, 7]), torch.float32, 6, scale=12.0),
        _attention(2, 5, 37, 4, 3, None, torch.tensor([37, 20]), torch.float32, 7),
        _attention(1, 3, 0, 4, 2, 4, None, torch.float64, 8),  # no key at all: zeros, not 0 / 0
        _measured(),
        _error("tiled_attention", ["queries", "keys", "values", "block_size"],
               [torch.zeros(1, 2, 4), torch.zeros(1, 3, 4), torch.zeros(1, 3, 2), 0], "too small"),
        _error("tiled_attention", ["queries", "keys", "values", "block_size", "valid_lens"],
               [torch.zeros(2, 2, 4), torch.zeros(2, 3, 4), torch.zeros(2, 3, 2), 2, torch.tensor([[1, 2, 3]])],
               "bad shape"),
    ])


def variant_checks(chosen, rng):
    """Off the published exercise: key_blocks and tiled_attention left to the variant's default block size
    (grader/variants.py gives the reference its value). The sizes never depend on the value: key_blocks gets more
    keys than any variant's block (its first block then shows the learner's default), tiled_attention a draw."""
    n_q, n_k = rng.randint(2, 6), rng.randint(30, 90)
    lens = torch.tensor([[rng.randint(0, n_k) for _ in range(n_q)] for _ in range(2)])  # (2, n_q)
    return [_blocks(rng.randint(66, 150)),
            _blocks(rng.randint(130, 200)),
            _attention(2, n_q, n_k, 4, 3, None, lens, torch.float64, rng.randrange(2**31)),
            _measured(rng, rng.randrange(2**31))]


UPDATE_ACC = "acc_new = acc * rescale + torch.bmm(p, values)  # (B, n_q, v)"

MISTAKES = (
    Mistake(
        "sum_not_rescaled",
        "l_new = l * rescale + p.sum(dim=-1, keepdim=True)  # (B, n_q, 1)",
        "l_new = l + p.sum(dim=-1, keepdim=True)  # (B, n_q, 1)",
        where=("online_softmax_update", "tiled_attention"),
    ),
    Mistake(
        "acc_not_rescaled",
        UPDATE_ACC,
        "acc_new = acc + torch.bmm(p, values)  # (B, n_q, v)",
        where=("online_softmax_update", "tiled_attention"),
    ),
    Mistake(
        "acc_normalised_factor",
        UPDATE_ACC,
        "acc_new = acc * rescale * l / l_new + torch.bmm(p, values)  # (B, n_q, v)",
        where=("online_softmax_update", "tiled_attention"),
    ),
    Mistake(
        "max_not_subtracted",
        "p = torch.exp(scores - shift)  # (B, n_q, blk)",
        "p = torch.exp(scores)  # (B, n_q, blk)",
        also=(("rescale = torch.exp(m - shift)  # (B, n_q, 1)", "rescale = torch.ones_like(m)  # (B, n_q, 1)"),),
        where=("online_softmax_update", "tiled_attention"),
    ),
    Mistake(
        "running_max_not_kept",
        "m_new = torch.maximum(m, scores.amax(dim=-1, keepdim=True))  # (B, n_q, 1)",
        "m_new = scores.amax(dim=-1, keepdim=True)  # (B, n_q, 1)",
        where=("online_softmax_update", "tiled_attention"),
    ),
    Mistake(
        "masked_row_nan",
        "shift = torch.where(torch.isfinite(m_new), m_new, torch.zeros_like(m_new))  # (B, n_q, 1)",
        "shift = m_new  # (B, n_q, 1)",
        where=("online_softmax_update", "tiled_attention"),
    ),
    Mistake(
        "divided_per_block",
        UPDATE_ACC,
        "acc_new = acc * rescale + torch.bmm(p / p.sum(dim=-1, keepdim=True), values)  # (B, n_q, v)",
        where=("online_softmax_update", "tiled_attention"),
    ),
    Mistake(
        "mask_fill_zero",
        'scores = scores.masked_fill(~mask, float("-inf"))  # (B, n_q, blk)',
        "scores = scores.masked_fill(~mask, 0.0)  # (B, n_q, blk)",
        where=("tiled_attention",),
    ),
    Mistake(
        "last_block_dropped",
        "for start in range(0, num_keys, block_size)]",
        "for start in range(0, num_keys - block_size + 1, block_size)]",
        where=("key_blocks", "tiled_attention"),
    ),
    Mistake(
        "last_block_overruns",
        "[(start, min(start + block_size, num_keys))",
        "[(start, start + block_size)",
        where=("key_blocks",),
    ),
    Mistake(
        "empty_row_nan",
        "return acc / torch.where(l > 0, l, torch.ones_like(l))  # (B, n_q, v)",
        "return acc / l  # (B, n_q, v)",
        where=("tiled_attention",),
    ),
    Mistake(
        "no_scale",
        "scores = torch.bmm(queries, keys[:, start:stop].transpose(1, 2)) / math.sqrt(d)  # (B, n_q, blk)",
        "scores = torch.bmm(queries, keys[:, start:stop].transpose(1, 2))  # (B, n_q, blk)",
        where=("tiled_attention",),
    ),
    Mistake(
        "mask_from_zero",
        "key_index = torch.arange(start, stop, device=lens.device)  # (blk,)",
        "key_index = torch.arange(stop - start, device=lens.device)  # (blk,)",
        where=("block_mask", "tiled_attention"),
    ),
)
