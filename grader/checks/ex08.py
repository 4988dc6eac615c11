"""Checks and known mistakes for exercise 8 (structured masks: sliding windows and graph neighbours)."""

import torch

from course.common.exercise_variants import PARAMETERS

from .base import Check, Mistake, call_desc, generator, number_checks, randn, unchanged_input, with_parameter

MODULE = "ex08_structured_masks"
NAMES = ["queries", "keys", "values", "mask"]


def _window(n_q, n_k, half_width, causal=False):
    spec = {"module": MODULE, "fn": "sliding_window_mask", "args": [n_q, n_k, half_width, causal],
            "arg_names": ["num_queries", "num_keys", "half_width", "causal"]}
    name = ("check.ex08.window", {"n_q": n_q, "n_k": n_k, "half_width": half_width, "causal": causal})
    return Check(name, call_desc("sliding_window_mask", spec["arg_names"], spec["args"]), "call", spec,
                 properties=(_is_bool,), target="sliding_window_mask")


def _graph(adjacency, self_loops=True):
    spec = {"module": MODULE, "fn": "graph_mask", "args": [adjacency], "arg_names": ["adjacency"],
            "kwargs": {"self_loops": self_loops}, "watch_inputs": ("adjacency",)}
    dtype = str(adjacency.dtype).replace("torch.", "")
    name = ("check.ex08.graph", {"shape": tuple(adjacency.shape), "dtype": dtype, "self_loops": self_loops})
    return Check(name, call_desc("graph_mask", ["adjacency", "self_loops"], [adjacency, self_loops]), "call", spec,
                 properties=(_is_bool, unchanged_input("adjacency")), target="graph_mask")


def _error(fn, names, args, what):
    """A call the docstring says must raise ValueError."""
    spec = {"module": MODULE, "fn": fn, "args": args, "arg_names": names, "expect_error": True}
    return Check(("check.raises", {"call": call_desc(fn, names, args), "error": "ValueError"}),
                 call_desc(fn, names, args), "call", spec, target=fn)


def _softmax(X, mask, seed):
    spec = {"module": MODULE, "fn": "softmax_with_mask", "args": [X, mask], "arg_names": ["X", "mask"],
            "grad": ("X",), "grad_seed": seed, "watch_inputs": ("X",)}
    shape = "None" if mask is None else str(tuple(mask.shape))
    name = ("check.ex08.softmax", {"shape": tuple(X.shape), "mask": shape,
                                   "dtype": str(X.dtype).replace("torch.", "")})
    return Check(name, call_desc("softmax_with_mask", ["X", "mask"], [X, mask]), "call", spec,
                 properties=(mask_weights_property("output", 1), unchanged_input("X")), target="softmax_with_mask",
                 weights=("output",))


def _attention(B, n_q, n_k, d, v, mask, dtype, seed, dropout=0.3, train=False):
    """One forward (and backward) of MaskedDotProductAttention against the reference."""
    g = generator(seed)
    args = [randn(g, B, n_q, d, dtype=dtype), randn(g, B, n_k, d, dtype=dtype), randn(g, B, n_k, v, dtype=dtype), mask]
    spec = {"module": MODULE, "cls": "MaskedDotProductAttention", "init_args": (dropout,),
            "dtype": dtype, "args": args,
            "arg_names": NAMES, "grad": ("queries", "keys", "values"), "grad_seed": seed,
            "capture": ("attention_weights",), "watch_inputs": ("queries", "keys", "values"),
            "train": train, "train_seed": seed}
    shape = "None" if mask is None else str(tuple(mask.shape))
    name = ("check.ex08.attention", {"sizes": f"B={B}, n_q={n_q}, n_k={n_k}, d={d}", "mask": shape,
                                     "dtype": str(dtype).replace("torch.", "")})
    if train:
        name = ("check.train_mode", {"what": name, "p": dropout})
    call = ("call.in_mode", {"module": f"MaskedDotProductAttention({dropout})",
                             "mode": ("mode.train" if train else "mode.eval", {}),
                             "call": call_desc("forward", NAMES, args)})
    return Check(name, call, "module_forward", spec, properties=(mask_weights_property("attention_weights", 3),),
                 target="MaskedDotProductAttention")


def _is_bool(results, spec):
    """A mask is a boolean tensor (masked_fill and ~ need one)."""
    out = results.get("output")
    if isinstance(out, torch.Tensor) and out.dtype != torch.bool:
        return ("prop.ex08.mask_not_bool", {"dtype": str(out.dtype).replace("torch.", "")})
    return None


def mask_weights_property(key, mask_arg):
    """Weights are exactly 0 where the mask is False and sum to 1 over each row's visible keys (0 if none)."""

    def check(results, spec):
        weights = results.get(key)
        mask = spec["args"][mask_arg]
        if not isinstance(weights, torch.Tensor) or weights.dim() != 3:
            return None  # shape problems are reported by the comparison
        mask = torch.ones(weights.shape, dtype=torch.bool) if mask is None else mask.expand(weights.shape)
        empty = ~mask.any(-1) & (weights != 0).any(-1)  # (B, n_q): rows that may read nothing, yet read
        if empty.any():
            b, q = empty.nonzero()[0].tolist()
            return ("prop.ex08.row_empty", {"result": key, "q": q, "b": b, "sum": f"{weights[b, q].sum().item():.4g}"})
        leaked = (weights != 0) & ~mask
        if leaked.any():
            b, q, k = leaked.nonzero()[0].tolist()
            return ("prop.ex08.mask_leaked", {"result": key, "k": k, "q": q, "b": b, "weight": f"{weights[b, q, k].item():.4g}"})
        sums = torch.nan_to_num(weights, nan=2.0).sum(-1)  # a NaN row never sums to 0 or 1
        want = mask.any(-1).to(weights.dtype)
        off = (sums - want).abs() > (1e-3 if weights.dtype != torch.float64 else 1e-9)
        if off.any():
            b, q = off.nonzero()[0].tolist()
            return ("prop.weights_sum", {"result": key, "q": q, "b": b, "sum": f"{weights[b, q].sum().item():.4g}",
                                         "want": int(want[b, q])})
        return None

    return check


def _random_mask(gen, *shape, empty_row=None):
    """A seeded boolean mask; empty_row=(b, q) or q makes that query see no key at all."""
    mask = torch.rand(*shape, generator=gen) < 0.5  # (..., n_q, n_k)
    mask[..., 0] |= ~mask.any(-1)  # every row sees at least one key ...
    if empty_row is not None:
        mask[empty_row] = False  # ... except the one chosen to see none
    return mask


def build():
    """The exercise's checks, in the order they are reported."""
    g = generator(108)
    directed = torch.tensor([[0, 1, 0, 0], [0, 0, 1, 1], [1, 0, 0, 0], [0, 0, 1, 0]])  # a directed 4-cycle plus one edge
    weighted = torch.tensor([[0.0, 0.5, 0.0, 0.0, 2.0], [0.5, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0, 0.0],
                             [0.0, 0.0, 1.0, 1.0, 0.0], [2.0, 0.0, 0.0, 0.0, 0.0]], dtype=torch.float64)
    batched = torch.rand(2, 3, 3, generator=g) < 0.4
    window_6x7 = (torch.arange(6)[:, None] - torch.arange(7)[None, :]).abs() <= 2  # written out here, not by the reference
    return number_checks("ex08", [
        _window(5, 5, 1),
        _window(4, 7, 2),
        _window(6, 6, 0),
        _window(6, 6, 2, causal=True),
        _window(3, 5, 1, causal=True),
        _error("sliding_window_mask", ["num_queries", "num_keys", "half_width"], [4, 4, -1], "negative"),
        _graph(directed),
        _graph(weighted),
        _graph(batched),
        _graph(directed, self_loops=False),
        _error("graph_mask", ["adjacency"], [torch.zeros(3, 4)], "not square"),
        _softmax(randn(g, 2, 3, 4), None, 1),
        _softmax(randn(g, 2, 6, 7), window_6x7, 2),
        _softmax(randn(g, 3, 4, 5, dtype=torch.float64), _random_mask(g, 3, 4, 5, empty_row=(1, 2)), 3),
        _softmax(randn(g, 2, 3, 3), _random_mask(g, 3, 3, empty_row=0), 4),
        _attention(2, 6, 7, 4, 3, window_6x7, torch.float32, 5),
        _attention(3, 4, 4, 8, 5, _random_mask(g, 3, 4, 4, empty_row=(2, 1)), torch.float64, 6),
        _attention(2, 3, 5, 16, 2, None, torch.float32, 7),
        # Training mode: dropout on the weights, with the same random stream as the reference.
        _attention(2, 6, 7, 4, 3, window_6x7, torch.float32, 8, dropout=0.5, train=True),
        _attention(3, 4, 4, 8, 5, _random_mask(g, 3, 4, 4, empty_row=(0, 3)), torch.float64, 9, dropout=0.5,
                   train=True),
        *_dilated_checks(),  # appended: the checks above keep their ids and draws
    ])


DILATION = 3  # an explicit dilation, off the published 1: a window that ignores it (or its reach) differs


def _dilated_checks():
    """Windows with dilation given explicitly (judged where the learner's function takes it): wide enough that the
    reach half_width * dilation and the every-third-key rule both show, once causal."""
    return [with_parameter(_window(9, 11, 2), "dilation", DILATION),
            with_parameter(_window(10, 10, 1, causal=True), "dilation", DILATION)]


def variant_checks(chosen, rng):
    """Off the published exercise: windows left to the variant's default dilation (grader/variants.py).

    The sizes never depend on the variant's value (the learner's job holds them: a size of 2d + 4 would tell d):
    every side is drawn longer than the farthest key offset any variant's dilation reaches (half_width times the
    largest dilation, plus one), so query 0's row alone (the last query's in the causal one) has its keys at offsets
    0, d, .., half_width * d for the default d the learner wrote, and any other default differs there."""
    reach = max(PARAMETERS[chosen.ex_id].choices + (PARAMETERS[chosen.ex_id].default,))
    side = lambda half_width: rng.randint(half_width * reach + 2, half_width * reach + 24)  # noqa: E731
    return [_window(side(1), side(1), 1),
            _window(side(2), side(2), 2),
            _window(side(1), side(1), 1, causal=True)]


MISTAKES = (
    Mistake(
        "window_off_by_one",
        "mask = (query_index - key_index).abs() <= half_width",
        "mask = (query_index - key_index).abs() < half_width",
        where=("sliding_window_mask",),
    ),
    Mistake(
        "window_full_width",
        "mask = (query_index - key_index).abs() <= half_width",
        "mask = (query_index - key_index).abs() <= half_width // 2",
        where=("sliding_window_mask",),
    ),
    Mistake(
        "causal_wrong_side",
        "mask = mask & (key_index <= query_index)",
        "mask = mask & (key_index >= query_index)",
        where=("sliding_window_mask",),
    ),
    Mistake(
        "graph_transposed",
        "mask = adjacency != 0",
        "mask = adjacency.transpose(-2, -1) != 0",
        where=("graph_mask",),
    ),
    Mistake(
        "graph_no_self_loops",
        "mask = mask | torch.eye(n, dtype=torch.bool, device=adjacency.device)",
        "mask = mask",
        where=("graph_mask",),
    ),
    Mistake(
        "mask_fill_zero",
        'scores = X.masked_fill(~mask, float("-inf"))',
        "scores = X.masked_fill(~mask, 0.0)",
        where=("softmax_with_mask", "MaskedDotProductAttention"),
    ),
    Mistake(
        "mask_inverted",
        'scores = X.masked_fill(~mask, float("-inf"))',
        'scores = X.masked_fill(mask, float("-inf"))',
        where=("softmax_with_mask", "MaskedDotProductAttention"),
    ),
    Mistake(
        "empty_row_uniform",
        'scores = X.masked_fill(~mask, float("-inf"))',
        "scores = X.masked_fill(~mask, -1e9)",
        where=("softmax_with_mask", "MaskedDotProductAttention"),
    ),
    Mistake(
        "torch_softmax_nan",
        "return softmax(scores, dim=-1)  # (B, n_q, n_k); a row",
        "return torch.softmax(scores, dim=-1)  # (B, n_q, n_k); a row",
        where=("softmax_with_mask", "MaskedDotProductAttention"),
    ),
    Mistake(
        "no_scale",
        "scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)",
        "scores = torch.bmm(queries, keys.transpose(1, 2))",
        where=("MaskedDotProductAttention",),
    ),
    Mistake(
        "no_dropout",
        "return torch.bmm(self.dropout(self.attention_weights), values)",
        "return torch.bmm(self.attention_weights, values)",
        where=("MaskedDotProductAttention",),
    ),
    Mistake(
        "weights_after_dropout",
        "self.attention_weights = softmax_with_mask(scores, mask)  # (B, n_q, n_k)\n"
        "        return torch.bmm(self.dropout(self.attention_weights), values)",
        "self.attention_weights = self.dropout(softmax_with_mask(scores, mask))  # (B, n_q, n_k)\n"
        "        return torch.bmm(self.attention_weights, values)",
        where=("MaskedDotProductAttention",),
    ),
    Mistake(
        "absolute_import",
        "from .ex01_softmax import softmax",
        "from exercises.ex01_softmax import softmax",
        raises=r"No module named 'exercises'",
    ),
    Mistake(
        "graph_made_symmetric",
        "mask = adjacency != 0  # (..., n, n): an edge i -> j lets node i read node j",
        "mask = (adjacency != 0) | (adjacency != 0).transpose(-1, -2)  # (..., n, n): edges both ways",
        where=("graph_mask",),
    ),
    Mistake(
        "value_size_scale",
        "d = queries.shape[-1]",
        "d = values.shape[-1]",
        where=("MaskedDotProductAttention",),
    ),
    Mistake(
        "dilation_not_in_reach",
        "mask = (query_index - key_index).abs() <= half_width * dilation",
        "mask = (query_index - key_index).abs() <= half_width",
        where=("sliding_window_mask",),
    ),
)
