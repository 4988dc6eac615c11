"""Checks and known mistakes for exercise 5 (multi-head attention)."""

import torch

from solutions.ex05_multihead import MultiHeadAttention

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
from .demo import demo_check

MODULE = "ex05_multihead"
NAMES = ["queries", "keys", "values", "valid_lens"]
# The values inside MultiHeadAttention.forward the feedback locates a difference by, in the order they are
# computed: (name, submodule, what of its call), recorded where the learner's code runs.
PROBES = (
    ("mha_q_proj", "W_q", "out"), ("mha_k_proj", "W_k", "out"), ("mha_v_proj", "W_v", "out"),
    ("mha_queries", "attention", [0, "queries"]), ("mha_keys", "attention", [1, "keys"]),
    ("mha_values", "attention", [2, "values"]),
)
AFTER_WEIGHTS = (("mha_heads", "attention", "out"), ("mha_merged", "W_o", [0, "input"]))
STEPS = probe_steps(PROBES) + (("attention_weights", "mha_weights"),) + probe_steps(AFTER_WEIGHTS)


def _transpose(fn, shape, num_heads, seed):
    g = generator(seed)
    X = randn(g, *shape)
    spec = {"module": MODULE, "fn": fn, "args": [X, num_heads], "arg_names": ["X", "num_heads"]}
    return Check(("check.heads_of", {"fn": fn, "shape": str(tuple(shape)), "heads": num_heads}),
                 call_desc(fn, ["X", "num_heads"], [X, num_heads]), "call", spec, target=fn)


def _roundtrip(shape, num_heads, seed):
    X = randn(generator(seed), *shape)
    spec = {"module": MODULE, "X": X, "num_heads": num_heads}

    def round_trips(results, spec):
        merged = results.get("merged")
        if isinstance(merged, torch.Tensor) and merged.shape == X.shape and not torch.equal(merged, X):
            return ("prop.not_inverse", {})
        return None

    return Check(("check.roundtrip", {"shape": str(tuple(shape)), "heads": num_heads}),
                 f"transpose_output(transpose_qkv(X {tuple(shape)}, {num_heads}), {num_heads})",
                 "transpose_roundtrip", spec, properties=(round_trips,), target="transpose_output")


def _mha(sizes, B, n_q, n_k, valid_lens, dtype, seed, bias=False, train=False):
    key_size, query_size, value_size, num_hiddens, num_heads = sizes
    init_args = (key_size, query_size, value_size, num_hiddens, num_heads, 0.5 if train else 0.2, bias)
    g = generator(seed)
    args = [randn(g, B, n_q, query_size, dtype=dtype), randn(g, B, n_k, key_size, dtype=dtype),
            randn(g, B, n_k, value_size, dtype=dtype), valid_lens]
    spec = {"module": MODULE, "cls": "MultiHeadAttention", "init_args": init_args,
            "state": reference_state(MultiHeadAttention, init_args, dtype), "dtype": dtype,
            "args": args, "arg_names": NAMES, "grad": ("queries", "keys", "values"),
            "grad_seed": seed, "capture": ("attention_weights",), "train": train, "train_seed": seed,
            "probes": PROBES + AFTER_WEIGHTS}
    dt = str(dtype).replace("torch.", "")
    lens = ("check.no_lens", {}) if valid_lens is None else f"valid_lens {tuple(valid_lens.shape)}"
    name = ("check.mha", {"heads": num_heads, "sizes": f"B={B}, n_q={n_q}, n_k={n_k}", "lens": lens,
                          "dtype": dt + (", bias=True" if bias else "")})
    if train:
        name = ("check.train_mode", {"what": name, "p": init_args[5]})
    call = ("call.in_mode", {"module": init_text("MultiHeadAttention", init_args),
                             "mode": ("mode.train" if train else "mode.eval", {}),
                             "call": call_desc("forward", NAMES, args)})
    return Check(name, call, "module_forward", spec,
                 properties=(weights_property("attention_weights", 3),), target="MultiHeadAttention",
                 locate=steps_locator(STEPS), locate_properties=True)


def variant_checks(chosen, rng):
    """Off the published exercise: head splitting and the attention at sizes and head counts drawn for the
    variant (its temperature given by grader/variants.py), with per-example and per-query valid lengths."""
    heads, head_size, B, T = rng.randint(1, 4), rng.randint(1, 4), rng.randint(1, 3), rng.randint(1, 5)
    checks = [_transpose("transpose_qkv", (B, T, heads * head_size), heads, rng.randrange(2**31)),
              _transpose("transpose_output", (B * heads, T, head_size), heads, rng.randrange(2**31)),
              _roundtrip((B, T, heads * head_size), heads, rng.randrange(2**31))]
    for dtype, per_query in ((torch.float32, False), (torch.float64, True)):
        heads, head_size = rng.randint(1, 4), rng.randint(1, 4)
        sizes = (rng.randint(2, 9), rng.randint(2, 9), rng.randint(1, 7), heads * head_size, heads)
        B, n_q, n_k = rng.randint(1, 3), rng.randint(1, 5), rng.randint(2, 7)
        shape = (B, n_q) if per_query else (B,)
        lens = torch.tensor([rng.randint(2, n_k) for _ in range(B * (n_q if per_query else 1))]).reshape(shape)
        checks.append(_mha(sizes, B, n_q, n_k, lens, dtype, rng.randrange(2**31), bias=rng.random() < 0.5))
    return checks


def build():
    """The exercise's checks, in the order they are reported."""
    sizes = (5, 4, 6, 12, 3)  # key_size, query_size, value_size, num_hiddens, num_heads
    bad = (8, 8, 8, 12, 5)
    return number_checks("ex05", [
        _transpose("transpose_qkv", (2, 4, 12), 3, 1),
        _transpose("transpose_qkv", (3, 2, 10), 5, 2),
        _transpose("transpose_output", (6, 4, 4), 3, 3),
        _roundtrip((2, 5, 12), 4, 4),
        Check(("check.qkv_rejects", {}),
              "transpose_qkv(X (2, 3, 12), num_heads=5)", "call",
              {"module": MODULE, "fn": "transpose_qkv", "args": [torch.zeros(2, 3, 12), 5],
               "expect_error": True}, target="transpose_qkv"),
        _mha(sizes, 2, 4, 6, None, torch.float32, 5),
        _mha(sizes, 2, 4, 6, torch.tensor([3, 6]), torch.float32, 6),
        _mha(sizes, 3, 2, 5, torch.tensor([[1, 5], [2, 2], [4, 3]]), torch.float64, 7),
        _mha((100, 100, 100, 100, 5), 2, 4, 6, torch.tensor([6, 4]), torch.float32, 8),
        _mha(sizes, 2, 3, 3, torch.tensor([2, 3]), torch.float32, 9, bias=True),
        Check(("check.mha_rejects", {}),
              init_text("MultiHeadAttention", bad + (0.0,)), "construct",
              {"module": MODULE, "cls": "MultiHeadAttention", "init_args": bad + (0.0,),
               "expect_error": True}, target="MultiHeadAttention"),
        _mha(sizes, 2, 4, 6, torch.tensor([3, 6]), torch.float32, 10, train=True),
        demo_check("ex05", "transformer"),  # the demo stage (grader/checks/demo.py)
    ])


MISTAKES = (
    Mistake(
        "reshape_without_transpose",
        "X = X.permute(0, 2, 1, 3)  # (B, heads, T, H/heads)\n    return X.reshape(B * num_heads, T, H // num_heads)",
        "return X.reshape(B * num_heads, T, H // num_heads)",
        where=("transpose_qkv",),
    ),
    Mistake(
        "output_without_transpose",
        "X = X.permute(0, 2, 1, 3)  # (B, T, heads, d)\n    return X.reshape(BH // num_heads, T, num_heads * d)",
        "return X.reshape(BH // num_heads, T, num_heads * d)",
        where=("transpose_output",),
    ),
    Mistake(
        "lens_tiled",
        "valid_lens = torch.repeat_interleave(valid_lens, self.num_heads, dim=0)",
        "valid_lens = valid_lens.repeat(self.num_heads, *([1] * (valid_lens.dim() - 1)))",
        where=("MultiHeadAttention",),
    ),
    Mistake(
        "no_output_projection",
        "return self.W_o(transpose_output(output, self.num_heads))",
        "return transpose_output(output, self.num_heads)",
        where=("MultiHeadAttention",),
    ),
    Mistake(
        "weights_head_axis",
        "self.attention_weights = weights.reshape(B, self.num_heads, n_q, n_k)",
        "self.attention_weights = weights.reshape(self.num_heads, B, n_q, n_k).transpose(0, 1)",
        where=("MultiHeadAttention",),
    ),
    Mistake(
        "heads_strided",
        "X = X.reshape(B, T, num_heads, H // num_heads)  # (B, T, heads, H/heads)\n"
        "    X = X.permute(0, 2, 1, 3)  # (B, heads, T, H/heads)",
        "X = X.reshape(B, T, H // num_heads, num_heads)  # (B, T, H/heads, heads)\n"
        "    X = X.permute(0, 3, 1, 2)  # (B, heads, T, H/heads): head h holds every heads-th column",
        where=("transpose_qkv",),
    ),
    Mistake(
        "output_heads_strided",
        "X = X.permute(0, 2, 1, 3)  # (B, T, heads, d)\n    return X.reshape(BH // num_heads, T, num_heads * d)",
        "X = X.permute(0, 2, 3, 1)  # (B, T, d, heads)\n    return X.reshape(BH // num_heads, T, num_heads * d)",
        where=("transpose_output",),
    ),
)
