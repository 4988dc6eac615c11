"""Checks and known mistakes for exercise 2 (Nadaraya-Watson kernel regression)."""

import torch

from solutions.ex02_nadaraya_watson import NWKernelRegression

from .base import Check, Mistake, call_desc, generator, number_checks, randn, reference_state

MODULE = "ex02_nadaraya_watson"


def _rows_sum_to_one(key):
    """Kernel weights of every query are a distribution over the keys."""

    def check(results, spec):
        W = results.get(key)
        if not isinstance(W, torch.Tensor) or W.dim() != 2:
            return None
        sums = W.sum(1)
        off = (sums - 1).abs() > (1e-9 if W.dtype == torch.float64 else 1e-4)
        if off.any():
            q = off.nonzero()[0, 0].item()
            return ("prop.kernel_sum", {"result": key, "q": q, "sum": f"{sums[q].item():.4g}"})
        return None

    return check


def _fn(fn, names, args, seed, properties=()):
    spec = {"module": MODULE, "fn": fn, "args": args, "arg_names": names,
            "grad": ("queries", "keys"), "grad_seed": seed}
    title = ("check.with_keys", {"fn": fn, "shape": str(tuple(args[1].shape))})
    return Check(title, call_desc(fn, names, args), "call", spec, properties=properties, target=fn,
                 weights=("output",) if fn == "gaussian_kernel_weights" else ())


def _module(name, n_q, n_k, w, dtype, seed):
    g = generator(seed)
    queries = randn(g, n_q, dtype=dtype) * 2
    keys = randn(g, n_q, n_k, dtype=dtype) * 2
    values = randn(g, n_q, n_k, dtype=dtype)
    state = reference_state(NWKernelRegression, (), dtype)
    state["w"] = torch.tensor([w], dtype=dtype)
    spec = {"module": MODULE, "cls": "NWKernelRegression", "state": state, "dtype": dtype,
            "args": [queries, keys, values], "arg_names": ["queries", "keys", "values"],
            "grad": ("queries", "values"), "grad_seed": seed, "param_grads": True,
            "capture": ("attention_weights",)}
    call = ("call.nw", {"w": w, "call": call_desc(
        "forward", ["queries", "keys", "values"], [queries, keys, values])})
    return Check(name, call, "module_forward", spec, properties=(_rows_sum_to_one("attention_weights"),),
                 target="NWKernelRegression")


def variant_checks(chosen, rng):
    """Off the published exercise: the kernel and the pooling at sizes drawn for the variant, left to its
    default w (grader/variants.py)."""
    g = generator(rng.randrange(2**31))
    n_q, n_k = rng.randint(2, 8), rng.randint(2, 9)
    q = randn(g, n_q) * 2
    return [_fn("gaussian_kernel_weights", ["queries", "keys"], [q, randn(g, n_q, n_k) * 2], 11,
                properties=(_rows_sum_to_one("output"),)),
            _fn("nadaraya_watson", ["queries", "keys", "values"], [q, randn(g, n_k) * 2, randn(g, n_k)], 12)]


def build():
    """The exercise's checks, in the order they are reported."""
    g = generator(202)
    q = randn(g, 4) * 2
    return number_checks("ex02", [
        _fn("gaussian_kernel_weights", ["queries", "keys"], [q, randn(g, 6) * 2], 1,
            properties=(_rows_sum_to_one("output"),)),
        _fn("gaussian_kernel_weights", ["queries", "keys", "w"], [q, randn(g, 4, 6) * 2, 0.7], 2,
            properties=(_rows_sum_to_one("output"),)),
        _fn("gaussian_kernel_weights", ["queries", "keys", "w"],
            [randn(g, 5, dtype=torch.float64), randn(g, 5, 3, dtype=torch.float64), 2.5], 3,
            properties=(_rows_sum_to_one("output"),)),
        _fn("nadaraya_watson", ["queries", "keys", "values"], [q, randn(g, 7) * 2, randn(g, 7)], 4),
        _fn("nadaraya_watson", ["queries", "keys", "values", "w"],
            [q, randn(g, 4, 5) * 2, randn(g, 4, 5), 1.5], 5),
        _module(("check.forward_of", {"module": "NWKernelRegression", "dtype": "float32"}), 5, 7, 1.3, torch.float32, 6),
        _module(("check.forward_of", {"module": "NWKernelRegression", "dtype": "float64"}), 3, 4, 0.6, torch.float64, 7),
        # appended (the checks above keep their ids and draws): one query, whose size-1 axis a squeeze() drops
        _module(("check.forward_of", {"module": "NWKernelRegression", "dtype": "float32"}), 1, 6, 0.9, torch.float32, 8),
        # appended: a second pooling with keys shared by every query (1-D) and one with a row per query (2-D), in
        # float64, so code that handles only one layout fails twice and runs twice (its hint names the layout)
        *_pooling_pair(generator(203)),
        *_square_pooling(generator(204)),  # appended after those
    ])


def _pooling_pair(g):
    """nadaraya_watson with 1-D keys and values (n_k,) and with 2-D ones (n_q, n_k), float64, w given."""
    q = randn(g, 3, dtype=torch.float64) * 2
    return [_fn("nadaraya_watson", ["queries", "keys", "values", "w"],
                [q, randn(g, 5, dtype=torch.float64) * 2, randn(g, 5, dtype=torch.float64), 0.8], 9),
            _fn("nadaraya_watson", ["queries", "keys", "values", "w"],
                [q, randn(g, 3, 6, dtype=torch.float64) * 2, randn(g, 3, 6, dtype=torch.float64), 1.2], 10)]



def _square_pooling(g):
    """nadaraya_watson with shared 1-D keys and as many queries as keys (n_q = n_k), w given: with the other 1-D
    cases' n_q != n_k, code that pools 1-D values the wrong way round (values @ weights) raises on every 1-D call,
    and its hint could only say "1-D keys"; it runs on these two."""
    return [_fn("nadaraya_watson", ["queries", "keys", "values", "w"],
                [randn(g, 5) * 2, randn(g, 5) * 2, randn(g, 5), 1.1], 11),
            _fn("nadaraya_watson", ["queries", "keys", "values", "w"],
                [randn(g, 4, dtype=torch.float64) * 2, randn(g, 4, dtype=torch.float64) * 2,
                 randn(g, 4, dtype=torch.float64), 0.6], 12)]


MISTAKES = (
    Mistake(
        "no_half",
        "return softmax(-((diffs * w) ** 2) / 2, dim=1)",
        "return softmax(-((diffs * w) ** 2), dim=1)",
        where=("gaussian_kernel_weights",),
    ),
    Mistake(
        "w_outside_square",
        "return softmax(-((diffs * w) ** 2) / 2, dim=1)",
        "return softmax(-(diffs**2) * w / 2, dim=1)",
        where=("gaussian_kernel_weights",),
    ),
    Mistake(
        "softmax_over_queries",
        "return softmax(-((diffs * w) ** 2) / 2, dim=1)",
        "return softmax(-((diffs * w) ** 2) / 2, dim=0)",
        where=("gaussian_kernel_weights",),
    ),
    Mistake(
        "no_minus",
        "return softmax(-((diffs * w) ** 2) / 2, dim=1)",
        "return softmax(((diffs * w) ** 2) / 2, dim=1)",
        where=("gaussian_kernel_weights",),
    ),
    Mistake(
        "absolute_import",
        "from .ex01_softmax import softmax",
        "from exercises.ex01_softmax import softmax",
        raises=r"No module named 'exercises'",
    ),
    Mistake(
        "stored_scores",
        "self.attention_weights = gaussian_kernel_weights(queries, keys, self.w)  # (n_q, n_k)\n"
        "        pooled = torch.bmm(\n            self.attention_weights.unsqueeze(1)",
        "weights = gaussian_kernel_weights(queries, keys, self.w)  # (n_q, n_k)\n"
        "        self.attention_weights = -(((queries.unsqueeze(1) - keys) * self.w) ** 2) / 2\n"
        "        pooled = torch.bmm(\n            weights.unsqueeze(1)",
        where=("NWKernelRegression",),
    ),
    Mistake(
        "forward_no_half",
        "self.attention_weights = gaussian_kernel_weights(queries, keys, self.w)  # (n_q, n_k)",
        "self.attention_weights = softmax(-(((queries.unsqueeze(1) - keys) * self.w) ** 2), dim=1)  # no / 2",
        where=("NWKernelRegression",),
    ),
    Mistake(
        "shared_keys_interleaved",
        "keys = keys.unsqueeze(0).expand(queries.shape[0], -1)  # (n_q, n_k)",
        "keys = keys.repeat_interleave(queries.shape[0]).reshape(queries.shape[0], -1)  # (n_q, n_k): each key in place",
        where=("gaussian_kernel_weights",),
    ),
)
