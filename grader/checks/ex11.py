"""Checks and known mistakes for exercise 11 (a cached decoding step with grouped key/value heads)."""

import torch

from solutions.ex11_grouped_kv_cache import GroupedQueryAttention

from .. import compare
from .base import (
    Check,
    Mistake,
    call_desc,
    generator,
    init_text,
    number_checks,
    probe_steps,
    randn,
    reference_state,
    steps_locator,
    weights_property,
)

MODULE = "ex11_grouped_kv_cache"
CLS = "GroupedQueryAttention"
NAMES = ["queries", "keys", "values", "valid_lens", "causal"]
# The values inside forward the feedback locates a difference by, in the order they are computed.
PROBES = (("mha_q_proj", "W_q", "out"), ("mha_k_proj", "W_k", "out"), ("mha_v_proj", "W_v", "out"))
AFTER_WEIGHTS = (("gqa_merged", "W_o", [0, "input"]),)
STEPS = probe_steps(PROBES) + (("attention_weights", "mha_weights"),) + probe_steps(AFTER_WEIGHTS)
# Where a check leaves num_kv_heads to the learner's default, num_heads is a multiple of every value a variant can
# ask for (course/common/exercise_variants.py: the divisors of 360), so that any default the learner wrote builds.
DEFAULT_HEADS = 360


def _dt(dtype):
    return str(dtype).replace("torch.", "")


def _repeat(shape, num_groups, seed, dtype=torch.float32):
    X = randn(generator(seed), *shape, dtype=dtype)
    spec = {"module": MODULE, "fn": "repeat_kv", "args": [X, num_groups], "arg_names": ["X", "num_groups"],
            "grad": ("X",), "grad_seed": seed, "watch_inputs": ("X",)}
    name = ("check.ex11.repeat", {"shape": compare.shape_str(shape), "groups": num_groups, "dtype": _dt(dtype)})
    return Check(name, call_desc("repeat_kv", ["X", "num_groups"], [X, num_groups]), "call", spec,
                 target="repeat_kv")


def _init(num_hiddens, num_heads, num_kv_heads, dropout, bias):
    """(init_args, init_kwargs): num_kv_heads given by keyword (None: left to the class's default)."""
    kwargs = {"dropout": dropout, "bias": bias}
    if num_kv_heads is not None:
        kwargs["num_kv_heads"] = num_kv_heads
    return (num_hiddens, num_heads), kwargs


def _init_call(init_args, init_kwargs):
    """'GroupedQueryAttention(12, 6, num_kv_heads=2, dropout=0.0, bias=False)' as the learner would write it."""
    text = init_text(CLS, init_args)[:-1]
    return text + "".join(f", {k}={v!r}" for k, v in init_kwargs.items()) + ")"


def _kv_text(num_kv_heads):
    return ("check.ex11.default_kv", {}) if num_kv_heads is None else str(num_kv_heads)


def _forward(num_hiddens, num_heads, num_kv_heads, B, n_q, n_k, valid_lens, causal, dtype, seed, bias=False,
             train=False):
    """One forward (and backward) of GroupedQueryAttention against the reference, the reference's weights loaded."""
    init_args, init_kwargs = _init(num_hiddens, num_heads, num_kv_heads, 0.5 if train else 0.2, bias)
    g = generator(seed)
    args = [randn(g, B, n_q, num_hiddens, dtype=dtype), randn(g, B, n_k, num_hiddens, dtype=dtype),
            randn(g, B, n_k, num_hiddens, dtype=dtype), valid_lens, causal]
    state_kwargs = dict(init_kwargs, num_kv_heads=2 if num_kv_heads is None else num_kv_heads)
    spec = {"module": MODULE, "cls": CLS, "init_args": init_args, "init_kwargs": init_kwargs,
            "state": reference_state(GroupedQueryAttention, init_args, dtype, init_kwargs=state_kwargs)
            if num_kv_heads is not None else None,
            "dtype": dtype, "args": args, "arg_names": NAMES, "grad": ("queries", "keys", "values"),
            "grad_seed": seed, "capture": ("attention_weights",), "train": train, "train_seed": seed,
            "probes": PROBES + AFTER_WEIGHTS}
    if num_kv_heads is None:
        spec["weights_seed"] = seed  # the learner's default decides the shapes: weights drawn where it runs
    lens = ("check.no_lens", {}) if valid_lens is None else f"valid_lens {tuple(valid_lens.shape)}"
    name = ("check.ex11.forward", {"heads": num_heads, "kv": _kv_text(num_kv_heads),
                                   "sizes": f"B={B}, n_q={n_q}, n_k={n_k}, num_hiddens={num_hiddens}", "lens": lens,
                                   "causal": causal, "dtype": _dt(dtype) + (", bias=True" if bias else "")})
    if train:
        name = ("check.train_mode", {"what": name, "p": init_kwargs["dropout"]})
    call = ("call.in_mode", {"module": _init_call(init_args, init_kwargs),
                             "mode": ("mode.train" if train else "mode.eval", {}),
                             "call": call_desc("forward", NAMES, args)})
    # the weights' property judges head by head: left out at the default's 360 heads, where the comparison says it
    properties = (weights_property("attention_weights", 3),) if num_kv_heads is not None else ()
    return Check(name, call, "module_forward", spec, properties=properties,
                 target=CLS, locate=steps_locator(STEPS), locate_properties=True)


def _decode(num_hiddens, num_heads, num_kv_heads, B, chunks, dtype, seed, bias=False):
    """The sequence decoded through step, chunk by chunk, against the reference and the learner's own parallel
    causal pass; the cache's shapes after every step."""
    init_args, init_kwargs = _init(num_hiddens, num_heads, num_kv_heads, 0.0, bias)
    X = randn(generator(seed), B, sum(chunks), num_hiddens, dtype=dtype)
    state_kwargs = dict(init_kwargs, num_kv_heads=num_kv_heads)
    spec = {"module": MODULE, "cls": CLS, "init_args": init_args, "init_kwargs": init_kwargs,
            "state": reference_state(GroupedQueryAttention, init_args, dtype, init_kwargs=state_kwargs)
            if num_kv_heads is not None else None,
            "dtype": dtype, "X": X, "chunks": list(chunks), "grad_seed": seed, "num_heads": num_heads}
    if num_kv_heads is None:
        spec["weights_seed"] = seed
    name = ("check.ex11.decode", {"heads": num_heads, "kv": _kv_text(num_kv_heads), "B": B, "T": sum(chunks),
                                  "num_hiddens": num_hiddens, "chunks": ", ".join(map(str, chunks)),
                                  "dtype": _dt(dtype) + (", bias=True" if bias else "")})
    call = ("call.ex11.decode", {"module": _init_call(init_args, init_kwargs), "X": compare.shape_str(X.shape),
                                 "chunks": ", ".join(map(str, chunks))})
    return Check(name, call, "kv_decode", spec, properties=(_cache_shapes, _steps_match_parallel), target=CLS)


def _cache_shapes(results, spec):
    """After step i the cache is (keys, values), each (B, num_kv_heads, positions so far, d_head): the sizes are
    the spec's own, the number of kv heads the reference's (its explicit value) or, left to the default, the
    learner's own keys' second axis (any default that divides num_heads is the learner's to choose)."""
    X, heads = spec["X"], spec["num_heads"]
    kv = spec["init_kwargs"].get("num_kv_heads")
    keys = results.get("cache.0")
    if kv is None and isinstance(keys, torch.Tensor) and keys.dim() == 4:
        kv = keys.shape[1]
    if kv is None:
        return None  # no 4-D keys: the comparison with the reference says what they are
    d_head, seen = X.shape[-1] // heads, 0
    for i, n in enumerate(spec["chunks"]):
        seen += n
        want = str((X.shape[0], kv, seen, d_head))
        got = results.get(f"cache_shape.{i}")
        if got != f"{want}, {want}":
            return ("prop.ex11.cache_shape", {"step": i + 1, "got": str(got)[:200], "want": want, "t": seen})
    return None


def _steps_match_parallel(results, spec):
    """The learner's step outputs equal their own parallel causal pass, position by position."""
    steps, full = results.get("steps"), results.get("parallel")
    if not isinstance(steps, torch.Tensor) or not isinstance(full, torch.Tensor) or steps.shape != full.shape \
            or steps.dtype != full.dtype or not steps.is_floating_point():
        return None  # shapes and dtypes are reported by the comparison with the reference
    rtol, atol = compare.tolerance(steps.dtype)
    off = ~torch.isclose(steps, full, rtol=rtol, atol=atol, equal_nan=True)
    if not off.any():
        return None
    b, t, _ = off.nonzero()[0].tolist()
    return ("prop.ex11.steps_differ", {"t": t, "b": b, "error": f"{(steps[b, t] - full[b, t]).abs().max().item():.3g}"})


def _rejects(init_args, init_kwargs):
    spec = {"module": MODULE, "cls": CLS, "init_args": init_args, "init_kwargs": init_kwargs, "expect_error": True}
    call = _init_call(init_args, init_kwargs)
    return Check(("check.raises", {"call": call, "error": "ValueError"}), call, "construct", spec, target=CLS)


def build():
    """The exercise's checks, in the order they are reported."""
    return number_checks("ex11", [
        _repeat((2, 2, 3, 4), 3, 1),
        _repeat((1, 3, 2, 2), 1, 2, torch.float64),
        _repeat((2, 1, 3, 2), 4, 3),  # multi-query: one key/value head for every query head
        _rejects((12, 6), {"num_kv_heads": 4}),  # 4 does not divide 6
        _rejects((10, 4), {"num_kv_heads": 2}),  # 4 heads do not divide 10 columns
        _forward(12, 6, 2, 2, 4, 5, None, False, torch.float32, 4),
        _forward(12, 6, 3, 2, 5, 5, torch.tensor([3, 5]), True, torch.float32, 5),
        _forward(8, 4, 1, 3, 4, 4, torch.tensor([4, 1, 2]), True, torch.float64, 6),  # multi-query attention
        _forward(12, 4, 4, 2, 3, 6, torch.tensor([6, 2]), False, torch.float64, 7),  # ordinary multi-head
        _forward(16, 8, 2, 2, 2, 5, None, True, torch.float32, 8, bias=True),  # 2 queries after 3 earlier keys
        _decode(12, 6, 2, 2, (1, 1, 1, 1, 1), torch.float32, 9),
        _decode(8, 4, 1, 2, (1, 1, 1, 1), torch.float64, 10),  # multi-query attention
        _decode(12, 6, 6, 1, (1, 1, 1, 1), torch.float64, 11),  # ordinary multi-head
        _decode(16, 8, 4, 2, (3, 1, 2, 1), torch.float32, 12, bias=True),  # a prompt of 3, then 1, 2 and 1
        _forward(12, 6, 2, 2, 5, 5, torch.tensor([5, 3]), True, torch.float32, 13, train=True),
        _forward(2 * DEFAULT_HEADS, DEFAULT_HEADS, None, 2, 3, 3, None, True, torch.float64, 14),
        _decode(DEFAULT_HEADS, DEFAULT_HEADS, None, 2, (1, 1, 1), torch.float64, 15),
    ])


def variant_checks(chosen, rng):
    """Off the published exercise: num_kv_heads left to the variant's default (grader/variants.py) in a forward and
    a decode drawn from the run's seed; num_heads is DEFAULT_HEADS, a multiple of every value a variant asks for,
    so the sizes tell nothing of the value."""
    B, n, T = rng.randint(1, 3), rng.randint(1, 5), rng.randint(2, 5)
    lens = torch.tensor([rng.randint(1, n) for _ in range(B)])
    chunks = (rng.randint(1, 2),) + (1,) * (T - 1)
    return [_forward(DEFAULT_HEADS * rng.randint(1, 2), DEFAULT_HEADS, None, B, n, n, lens, True, torch.float64,
                     rng.randrange(2**31)),
            _decode(DEFAULT_HEADS, DEFAULT_HEADS, None, rng.randint(1, 2), chunks, torch.float64, rng.randrange(2**31))]


MISTAKES = (
    Mistake(
        "heads_tiled",
        "return torch.repeat_interleave(X, num_groups, dim=1)",
        "return X.repeat(1, num_groups, 1, 1)",
        where=("repeat_kv", CLS),
    ),
    Mistake(
        "cache_wrong_axis",
        "k = torch.cat((cache[0], k), dim=2)",
        "k = torch.cat((cache[0], k), dim=1)",
        also=(("v = torch.cat((cache[1], v), dim=2)", "v = torch.cat((cache[1], v), dim=1)"),),
        raises=r"must match the size of tensor b|Sizes of tensors must match|size mismatch|shape .* is invalid",
        where=(CLS,),
    ),
    Mistake(
        "attends_before_append",
        "return self._attend(q, k, v, None, True), (k, v)",
        "return self._attend(q, cache[0], cache[1], None, True) if cache is not None else self._attend(q, k, v, "
        "None, True), (k, v)",
        where=(CLS,),
    ),
    Mistake(
        "scale_num_hiddens",
        "scores = q @ k.transpose(-1, -2) / math.sqrt(self.d_head)",
        "scores = q @ k.transpose(-1, -2) / math.sqrt(self.num_heads * self.d_head)",
        where=(CLS,),
    ),
    Mistake(  # the inputs kept and every position projected again at each step: right outputs, a wrong cache
        "inputs_cached",
        "k = self._split(self.W_k(x), self.num_kv_heads)",
        "seen = x if cache is None else torch.cat((cache[0], x), dim=1)  # (B, t + n, num_hiddens)\n"
        "        k = self._split(self.W_k(seen), self.num_kv_heads)",
        also=(("v = self._split(self.W_v(x), self.num_kv_heads)", "v = self._split(self.W_v(seen), self.num_kv_heads)"),
              ("if cache is not None:", "if False:"),
              ("return self._attend(q, k, v, None, True), (k, v)", "return self._attend(q, k, v, None, True), (seen, seen)")),
        where=(CLS,),
    ),
    Mistake(
        "causal_without_offset",
        "query_position = torch.arange(n_q, device=q.device) + (n_k - n_q)",
        "query_position = torch.arange(n_q, device=q.device)",
        where=(CLS,),
    ),
    Mistake(
        "causal_excludes_self",
        "visible = visible & (key_index[None, :] <= query_position[:, None])",
        "visible = visible & (key_index[None, :] < query_position[:, None])",
        where=(CLS,),
    ),
    Mistake(
        "lens_ignored",
        "visible = visible & (key_index < valid_lens.reshape(-1, 1, 1, 1))",
        "visible = visible",
        where=(CLS,),
    ),
    Mistake(
        "no_output_projection",
        "return self.W_o(out)  # (B, n_q, num_hiddens)",
        "return out  # (B, n_q, num_hiddens)",
        where=(CLS,),
    ),
    Mistake(
        "heads_strided",
        "return X.reshape(B, T, heads, self.d_head).transpose(1, 2)",
        "return X.reshape(B, T, self.d_head, heads).permute(0, 3, 1, 2)",
        where=(CLS,),
    ),
    Mistake(
        "no_dropout",
        "out = self.dropout(self.attention_weights) @ v",
        "out = self.attention_weights @ v",
        where=(CLS,),
    ),
    Mistake(
        "weights_after_dropout",
        "self.attention_weights = torch.softmax(scores, dim=-1)  # (B, heads, n_q, n_k)\n"
        "        out = self.dropout(self.attention_weights) @ v",
        "self.attention_weights = self.dropout(torch.softmax(scores, dim=-1))  # (B, heads, n_q, n_k)\n"
        "        out = self.attention_weights @ v",
        where=(CLS,),
    ),
)
