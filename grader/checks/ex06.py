"""Checks and known mistakes for exercise 6 (sinusoidal positional encoding)."""

import torch

from .base import (Check, Mistake, call_desc, first_difference, generator, init_text, number_checks, randn,
                   with_parameter)
from .demo import demo_check

MODULE = "ex06_positional_encoding"


# The spec fixes no dtype for building P, and the module is float32 by default: P carries
# float32 precision, so every value computed from it is judged with float32 tolerances
# (a float32 table, a float64 one, the exp/log form: all are correct).
PRECISION = torch.float32
TARGET = "PositionalEncoding"


def _table(num_hiddens, max_len):
    """The table P itself (non-persistent buffer, so not in the state_dict)."""
    spec = {"module": MODULE, "cls": "PositionalEncoding", "init_args": (num_hiddens, 0.2, max_len),
            "capture": ("P",)}
    return Check(("check.pe_table", {"d": num_hiddens, "max_len": max_len}),
                 f"PositionalEncoding({num_hiddens}, 0.2, max_len={max_len}).P", "construct", spec,
                 properties=(_not_persistent,), target=TARGET, tolerance_dtype=PRECISION, locate=_table_entry)


def _table_entry(reference, got, spec):
    """The first wrong entry of P: its row (position) and column, with the formula and both values."""
    want, have = reference.get("P"), got.get("P")
    if not isinstance(want, torch.Tensor) or not isinstance(have, torch.Tensor) or want.shape != have.shape:
        return None
    first = first_difference(want.double(), have.double(), PRECISION)
    if first is None:
        return None
    _, row, col = first
    num_hiddens = spec["init_args"][0]
    base = spec.get("init_kwargs", {}).get("base", 10000)  # the variant's base (grader/variants.py)
    return ("step.pe_entry", {"row": row, "col": col, "fn": "sin" if col % 2 == 0 else "cos", "two_j": col - col % 2,
                              "base": f"{base:g}",
                              "d": num_hiddens, "expected": f"{want[0, row, col].item():.6g}",
                              "got": f"{have[0, row, col].item():.6g}"})


def _not_persistent(results, spec):
    """P is a buffer but not part of the state_dict."""
    if "P" in (results.get("state_keys") or "").split(","):
        return ("prop.pe_persistent", {})
    return None


def _moved(num_hiddens, max_len, dtype):
    """A module moved with .to(dtype) moves its buffer P too."""
    spec = {"module": MODULE, "cls": "PositionalEncoding", "init_args": (num_hiddens, 0.2, max_len),
            "capture": ("P",), "dtype": dtype}

    def moved(results, spec):
        P = results.get("P")
        if isinstance(P, torch.Tensor) and P.dtype != dtype:
            return ("prop.pe_not_moved", {"dtype": str(dtype), "got": str(P.dtype)})
        return None

    return Check(("check.pe_moved", {"dtype": str(dtype)}),
                 f"PositionalEncoding({num_hiddens}, 0.2, max_len={max_len}).to({dtype}).P", "construct",
                 spec, properties=(moved,), target=TARGET, tolerance_dtype=PRECISION)


def _forward(num_hiddens, B, T, dtype, seed, max_len=1000, train=False):
    X = randn(generator(seed), B, T, num_hiddens, dtype=dtype)
    init_args = (num_hiddens, 0.5 if train else 0.2, max_len)
    spec = {"module": MODULE, "cls": "PositionalEncoding", "init_args": init_args, "dtype": dtype,
            "args": [X], "arg_names": ["X"], "grad": ("X",), "grad_seed": seed, "watch_inputs": ("X",),
            "train": train, "train_seed": seed}
    dt = str(dtype).replace("torch.", "")
    name = ("check.pe_forward", {"shape": f"({B}, {T}, {num_hiddens})", "dtype": dt})
    if train:
        name = ("check.train_mode", {"what": name, "p": init_args[1]})
    call = ("call.in_mode", {"module": init_text("PositionalEncoding", init_args),
                             "mode": ("mode.train" if train else "mode.eval", {}),
                             "call": call_desc("forward", ["X"], [X])})
    return Check(name, call, "module_forward", spec, target=TARGET, tolerance_dtype=PRECISION)


def variant_checks(chosen, rng):
    """Off the published exercise: the table and the forward at sizes drawn for the variant (its base given by
    grader/variants.py), at least 4 wide and 20 long so that the base shows in the table's later columns."""
    d, max_len = rng.randint(4, 33), rng.randint(20, 90)
    B, T = rng.randint(1, 3), rng.randint(2, max_len)
    return [_table(d, max_len),
            _forward(rng.randint(4, 16), B, rng.randint(12, 40), torch.float64, rng.randrange(2**31)),
            _forward(d, B, T, torch.float32, rng.randrange(2**31), max_len=max_len)]


def build():
    """The exercise's checks, in the order they are reported."""
    too_long = torch.zeros(1, 6, 4)
    return number_checks("ex06", [
        _table(8, 60),
        _table(7, 30),
        _table(32, 100),
        _forward(8, 2, 10, torch.float32, 1),
        _forward(6, 3, 5, torch.float64, 2),
        _forward(5, 1, 7, torch.float32, 3, max_len=7),
        Check(("check.pe_too_long", {}),
              "PositionalEncoding(4, 0.0, max_len=5): forward(X (1, 6, 4))", "module_forward",
              {"module": MODULE, "cls": "PositionalEncoding", "init_args": (4, 0.0, 5),
               "args": [too_long], "arg_names": ["X"], "expect_error": True}, target=TARGET),
        _moved(6, 20, torch.float64),
        _forward(8, 2, 10, torch.float32, 4, train=True),
        _forward(6, 3, 5, torch.float64, 5, train=True),
        demo_check("ex06", "transformer"),  # the demo stage (grader/checks/demo.py)
        *_base_checks(),  # appended: the checks above keep their ids and draws
    ])


BASE = 100  # an explicit base, off the published 10000: a table built with 10000 whatever base says differs


def _base_checks():
    """The table and a forward with base given explicitly (judged where the learner's class takes it)."""
    return [with_parameter(_table(8, 40), "base", BASE),
            with_parameter(_forward(6, 2, 9, torch.float64, 6), "base", BASE)]


MISTAKES = (
    Mistake(
        "sin_cos_swapped",
        "P[0, :, 0::2] = torch.sin(angles)\n        P[0, :, 1::2] = torch.cos(angles[:, : num_hiddens // 2])",
        "P[0, :, 0::2] = torch.cos(angles)\n        P[0, :, 1::2] = torch.sin(angles[:, : num_hiddens // 2])",
    ),
    Mistake(
        "exponent_j_over_d",
        "angles = positions / torch.pow(float(base), even_dims / num_hiddens)",
        "angles = positions / torch.pow(float(base), even_dims / 2 / num_hiddens)",
    ),
    Mistake(
        "multiply_not_divide",
        "angles = positions / torch.pow(float(base), even_dims / num_hiddens)",
        "angles = positions * torch.pow(float(base), even_dims / num_hiddens)",
    ),
    Mistake(
        "positions_from_one",
        "positions = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)",
        "positions = torch.arange(1, max_len + 1, dtype=torch.float64).unsqueeze(1)",
    ),
    Mistake(
        "no_dropout",
        "return self.dropout(X + self.P[:, :T].to(X.dtype))",
        "return X + self.P[:, :T].to(X.dtype)",
    ),
    Mistake(
        "dropout_before_add",
        "return self.dropout(X + self.P[:, :T].to(X.dtype))",
        "return self.dropout(X) + self.P[:, :T].to(X.dtype)",
    ),
    Mistake(
        "P_plain_attribute",
        'self.register_buffer("P", P.float(), persistent=False)',
        "self.P = P.float()",
    ),
    Mistake(
        "P_persistent",
        'self.register_buffer("P", P.float(), persistent=False)',
        'self.register_buffer("P", P.float())',
    ),
    Mistake(
        "cos_own_exponent",
        "P[0, :, 1::2] = torch.cos(angles[:, : num_hiddens // 2])",
        "P[0, :, 1::2] = torch.cos(positions / torch.pow(float(base), (even_dims[: num_hiddens // 2] + 1) / num_hiddens))",
        where=("PositionalEncoding",),
    ),
    Mistake(
        "base_ignored",
        "angles = positions / torch.pow(float(base), even_dims / num_hiddens)",
        "angles = positions / torch.pow(10000.0, even_dims / num_hiddens)",
        where=("PositionalEncoding",),
    ),
)
