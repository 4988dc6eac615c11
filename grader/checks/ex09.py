"""Checks and known mistakes for exercise 9 (rotary position embedding)."""

import torch

from .base import Check, Mistake, call_desc, generator, number_checks, randn, weights_property, with_parameter

MODULE = "ex09_rotary"
NAMES = ["queries", "keys", "values", "valid_lens"]
# The spec fixes no dtype for the cos and sin tables, and the module is float32 by default: they carry
# float32 precision, so values computed from them are judged with float32 tolerances (as in ex06).
PRECISION = torch.float32


def _tables(num_hiddens, max_len, dtype=None):
    """The buffers cos and sin (non-persistent, so not in the state_dict); with dtype, after .to(dtype)."""
    spec = {"module": MODULE, "cls": "RotaryEmbedding", "init_args": (num_hiddens, max_len), "capture": ("cos", "sin")}
    call = f"RotaryEmbedding({num_hiddens}, max_len={max_len})"
    name = ("check.ex09.tables", {"d": num_hiddens, "max_len": max_len})
    properties = (_not_persistent,)
    if dtype is not None:
        spec["dtype"] = dtype
        call += f".to({dtype})"
        name = ("check.ex09.moved", {"dtype": str(dtype)})
        properties += (_moved(dtype),)
    return Check(name, call + ": cos, sin", "construct", spec, properties=properties, target="RotaryEmbedding",
                 tolerance_dtype=PRECISION)


def _not_persistent(results, spec):
    """cos and sin are buffers but not part of the state_dict."""
    keys = (results.get("state_keys") or "").split(",")
    if "cos" in keys or "sin" in keys:
        return ("prop.ex09.persistent", {})
    return None


def _moved(dtype):
    def moved(results, spec):
        for name in ("cos", "sin"):
            table = results.get(name)
            if isinstance(table, torch.Tensor) and table.dtype != dtype:
                return ("prop.ex09.not_moved", {"name": name, "dtype": str(dtype), "got": str(table.dtype)})
        return None

    return moved


def _rotate(num_hiddens, B, T, dtype, seed, offset=None, max_len=1000, X=None):
    """RotaryEmbedding forward on X (B, T, d), with or without an offset."""
    X = randn(generator(seed), B, T, num_hiddens, dtype=dtype) if X is None else X
    args, names = ([X], ["X"]) if offset is None else ([X, offset], ["X", "offset"])
    spec = {"module": MODULE, "cls": "RotaryEmbedding", "init_args": (num_hiddens, max_len), "dtype": dtype,
            "args": args, "arg_names": names, "grad": ("X",), "grad_seed": seed, "watch_inputs": ("X",)}
    name = ("check.ex09.rotate", {"shape": f"({B}, {T}, {num_hiddens})", "dtype": str(X.dtype).replace("torch.", ""),
                                  "offset": offset or 0})
    return Check(name, f"RotaryEmbedding({num_hiddens}, max_len={max_len}): " + call_desc("forward", names, args),
                 "module_forward", spec, properties=(_relative,), target="RotaryEmbedding", tolerance_dtype=PRECISION)


def _relative(results, spec):
    """With the same vector at every position, out[m] . out[n] must depend on n - m only (a rotation)."""
    X, out = spec["args"][0], results.get("output")
    if not isinstance(out, torch.Tensor) or out.shape != X.shape or not torch.equal(X, X[:, :1].expand_as(X)):
        return None
    gram = (out[0].double() @ out[0].double().T)  # (T, T)
    T = gram.shape[0]
    for lag in range(1, T):
        diagonal = torch.diagonal(gram, lag)  # out[m] . out[m + lag] for every m
        if (diagonal - diagonal[0]).abs().max() > 1e-3 * (1 + diagonal[0].abs()):
            m = int((diagonal - diagonal[0]).abs().argmax())
            return ("prop.ex09.not_relative", {"lag": lag, "m": m, "first": f"{diagonal[0].item():.4g}",
                                               "other": f"{diagonal[m].item():.4g}"})
    return None


def _error(init_args, args, names, what):
    """A construction or call the docstring says must raise ValueError."""
    spec = {"module": MODULE, "cls": "RotaryEmbedding", "init_args": init_args, "expect_error": True}
    call = f"RotaryEmbedding{init_args}"
    procedure = "construct"
    if args:
        spec.update(args=args, arg_names=names)
        call += ": " + call_desc("forward", names, args)
        procedure = "module_forward"
    return Check(("check.raises", {"call": call, "error": "ValueError"}), call, procedure, spec, target="RotaryEmbedding")


def _attention(num_hiddens, B, n_q, n_k, valid_lens, dtype, seed, dropout=0.3, train=False, max_len=64):
    """One forward (and backward) of RotaryDotProductAttention against the reference (values as wide as keys)."""
    g = generator(seed)
    init_args = (num_hiddens, dropout, max_len)
    args = [randn(g, B, n_q, num_hiddens, dtype=dtype), randn(g, B, n_k, num_hiddens, dtype=dtype),
            randn(g, B, n_k, num_hiddens, dtype=dtype), valid_lens]
    spec = {"module": MODULE, "cls": "RotaryDotProductAttention", "init_args": init_args,
            "dtype": dtype, "args": args,
            "arg_names": NAMES, "grad": ("queries", "keys", "values"), "grad_seed": seed,
            "capture": ("attention_weights",), "watch_inputs": ("queries", "keys", "values"),
            "train": train, "train_seed": seed}
    lens = ("check.no_lens", {}) if valid_lens is None else f"valid_lens {tuple(valid_lens.shape)}"
    name = ("check.attention", {"module": "RotaryDotProductAttention", "sizes": f"B={B}, n_q={n_q}, n_k={n_k}",
                                "lens": lens, "dtype": str(dtype).replace("torch.", "")})
    if train:
        name = ("check.train_mode", {"what": name, "p": dropout})
    call = ("call.in_mode", {"module": f"RotaryDotProductAttention{init_args}",
                             "mode": ("mode.train" if train else "mode.eval", {}),
                             "call": call_desc("forward", NAMES, args)})
    return Check(name, call, "module_forward", spec, properties=(weights_property("attention_weights", 3),),
                 target="RotaryDotProductAttention", tolerance_dtype=PRECISION)


def variant_checks(chosen, rng):
    """Off the published exercise: tables, rotations (with offsets) and the attention at sizes drawn for the
    variant (its base given by grader/variants.py), at least 4 wide so that the base shows."""
    d, B, T = 2 * rng.randint(2, 8), rng.randint(1, 3), rng.randint(2, 8)
    offset = rng.randint(1, 20)
    max_len = offset + T + rng.randint(0, 10)
    n_q, n_k = rng.randint(2, 6), rng.randint(2, 8)
    lens = torch.tensor([rng.randint(1, n_k) for _ in range(B)])
    return [_tables(d, rng.randint(8, 60)),
            _rotate(d, B, T, torch.float64, rng.randrange(2**31), offset=offset, max_len=max_len),
            _error((d, offset + T - 1), [torch.zeros(1, T, d), offset], ["X", "offset"], "too long"),
            _attention(2 * rng.randint(2, 8), B, n_q, n_k, lens, torch.float32, rng.randrange(2**31),
                       max_len=max(n_q, n_k) + rng.randint(0, 20))]


def build():
    """The exercise's checks, in the order they are reported."""
    same = randn(generator(91), 1, 1, 8, dtype=torch.float64).expand(1, 12, 8).contiguous()  # one vector at 12 positions
    return number_checks("ex09", [
        _tables(8, 50),
        _tables(6, 20),
        _tables(4, 12, torch.float64),
        _error((7, 10), None, None, "odd"),
        _rotate(8, 2, 5, torch.float32, 1),
        _rotate(6, 3, 4, torch.float64, 2),
        _rotate(8, 2, 5, torch.float32, 3, offset=7),
        _rotate(8, 1, 12, torch.float64, 4, X=same),
        _rotate(4, 1, 6, torch.float32, 5, offset=4, max_len=10),
        _error((4, 6), [torch.zeros(1, 4, 4), 3], ["X", "offset"], "too long"),
        _attention(8, 2, 5, 5, None, torch.float32, 6),
        _attention(8, 2, 4, 6, torch.tensor([6, 3]), torch.float32, 7),
        _attention(6, 3, 3, 5, torch.tensor([[1, 2, 3], [5, 4, 0], [2, 2, 2]]), torch.float64, 8),
        # Training mode: dropout on the weights, with the same random stream as the reference.
        _attention(8, 2, 4, 6, torch.tensor([6, 3]), torch.float32, 9, dropout=0.5, train=True),
        _attention(6, 3, 3, 5, torch.tensor([4, 5, 1]), torch.float64, 10, dropout=0.5, train=True),
        # X in half precision (the module in float32): the result keeps X's dtype.
        _rotate(8, 2, 5, torch.float32, 11, offset=3, X=randn(generator(11), 2, 5, 8).to(torch.bfloat16)),
        *_base_checks(),  # appended: the checks above keep their ids and draws
    ])


BASE = 100  # an explicit base, off the published 10000: tables built with 10000 whatever base says differ


def _base_checks():
    """The tables and a rotation with base given explicitly (judged where the learner's class takes it)."""
    return [with_parameter(_tables(8, 30), "base", BASE),
            with_parameter(_rotate(8, 2, 5, torch.float64, 12, offset=2), "base", BASE)]


ROTATION = ("rotated = torch.stack((x_even * cos - x_odd * sin, x_even * sin + x_odd * cos), dim=-1)")

MISTAKES = (
    Mistake(
        "rotation_direction",
        ROTATION,
        ROTATION.replace("x_even * cos - x_odd * sin, x_even * sin + x_odd * cos",
                         "x_even * cos + x_odd * sin, -x_even * sin + x_odd * cos"),
        where=("RotaryEmbedding", "RotaryDotProductAttention"),
    ),
    Mistake(
        "half_split_pairs",
        "x_even, x_odd = X[..., 0::2], X[..., 1::2]",
        "x_even, x_odd = X[..., : X.shape[-1] // 2], X[..., X.shape[-1] // 2 :]",
        also=((ROTATION, ROTATION.replace("torch.stack(", "torch.cat(")),
              ("return rotated.flatten(-2)", "return rotated")),
        where=("RotaryEmbedding", "RotaryDotProductAttention"),
    ),
    Mistake(
        "not_a_rotation",
        ROTATION,
        ROTATION.replace("x_even * sin + x_odd * cos", "x_odd * cos - x_even * sin"),
        where=("RotaryEmbedding", "RotaryDotProductAttention"),
    ),
    Mistake(
        "exponent_j_over_d",
        "torch.arange(0, num_hiddens, 2, dtype=torch.float64) / num_hiddens)",
        "torch.arange(0, num_hiddens, 2, dtype=torch.float64) / 2 / num_hiddens)",
        where=("RotaryEmbedding", "RotaryDotProductAttention"),
    ),
    Mistake(
        "positions_from_one",
        "positions = torch.arange(max_len, dtype=torch.float64)[:, None]",
        "positions = torch.arange(1, max_len + 1, dtype=torch.float64)[:, None]",
        where=("RotaryEmbedding", "RotaryDotProductAttention"),
    ),
    Mistake(
        "offset_ignored",
        "cos = self.cos[offset : offset + T].to(X.dtype)",
        "cos = self.cos[:T].to(X.dtype)",
        also=(("sin = self.sin[offset : offset + T].to(X.dtype)", "sin = self.sin[:T].to(X.dtype)"),),
        where=("RotaryEmbedding",),
    ),
    Mistake(
        "values_rotated",
        "return torch.bmm(self.dropout(self.attention_weights), values)",
        "return torch.bmm(self.dropout(self.attention_weights), self.rotary(values))",
        where=("RotaryDotProductAttention",),
    ),
    Mistake(
        "no_scale",
        "scores = torch.bmm(rotated_q, rotated_k.transpose(1, 2)) / math.sqrt(d)",
        "scores = torch.bmm(rotated_q, rotated_k.transpose(1, 2))",
        where=("RotaryDotProductAttention",),
    ),
    Mistake(
        "no_dropout",
        "return torch.bmm(self.dropout(self.attention_weights), values)",
        "return torch.bmm(self.attention_weights, values)",
        where=("RotaryDotProductAttention",),
    ),
    Mistake(
        "weights_after_dropout",
        "self.attention_weights = masked_softmax(scores, valid_lens)  # (B, n_q, n_k)\n"
        "        return torch.bmm(self.dropout(self.attention_weights), values)",
        "self.attention_weights = self.dropout(masked_softmax(scores, valid_lens))  # (B, n_q, n_k)\n"
        "        return torch.bmm(self.attention_weights, values)",
        where=("RotaryDotProductAttention",),
    ),
    Mistake(
        "tables_persistent",
        'self.register_buffer("cos", torch.cos(angles).float(), persistent=False)',
        'self.register_buffer("cos", torch.cos(angles).float())',
        also=(('self.register_buffer("sin", torch.sin(angles).float(), persistent=False)',
               'self.register_buffer("sin", torch.sin(angles).float())'),),
        where=("RotaryEmbedding",),
    ),
    Mistake(
        "absolute_import",
        "from .ex01_softmax import masked_softmax",
        "from exercises.ex01_softmax import masked_softmax",
        raises=r"No module named 'exercises'",
    ),
    Mistake(
        "keys_not_rotated",
        "rotated_k = self.rotary(keys)  # (B, n_k, d): key j at position j",
        "rotated_k = keys  # (B, n_k, d): left unrotated",
        where=("RotaryDotProductAttention",),
    ),
    Mistake(
        "base_ignored",
        "omega = 1.0 / torch.pow(float(base), torch.arange(0, num_hiddens, 2, dtype=torch.float64) / num_hiddens)",
        "omega = 1.0 / torch.pow(10000.0, torch.arange(0, num_hiddens, 2, dtype=torch.float64) / num_hiddens)",
        where=("RotaryEmbedding",),
    ),
)
