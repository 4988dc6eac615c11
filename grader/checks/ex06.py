"""Checks and known mistakes for exercise 6 (sinusoidal positional encoding)."""

import torch

from .base import Check, Mistake, call_desc, generator, randn
from .demo import demo_check

MODULE = "ex06_positional_encoding"


def _table(num_hiddens, max_len):
    """The table P itself (non-persistent buffer, so not in the state_dict)."""
    spec = {"module": MODULE, "cls": "PositionalEncoding", "init_args": (num_hiddens, 0.2, max_len),
            "capture": ("P",)}
    return Check(f"the table P for num_hiddens={num_hiddens}, max_len={max_len}",
                 f"PositionalEncoding({num_hiddens}, 0.2, max_len={max_len}).P", "construct", spec)


def _forward(num_hiddens, B, T, dtype, seed, max_len=1000):
    X = randn(generator(seed), B, T, num_hiddens, dtype=dtype)
    init_args = (num_hiddens, 0.2, max_len)
    spec = {"module": MODULE, "cls": "PositionalEncoding", "init_args": init_args, "dtype": dtype,
            "args": [X], "arg_names": ["X"], "grad": ("X",), "grad_seed": seed, "watch_inputs": ("X",)}
    dt = str(dtype).replace("torch.", "")
    return Check(f"forward on X ({B}, {T}, {num_hiddens}) {dt}",
                 f"PositionalEncoding{init_args} in eval mode: " + call_desc("forward", ["X"], [X]),
                 "module_forward", spec)


def build():
    """The exercise's checks, in the order they are reported."""
    too_long = torch.zeros(1, 6, 4)
    return [
        _table(8, 60),
        _table(7, 30),
        _table(32, 100),
        _forward(8, 2, 10, torch.float32, 1),
        _forward(6, 3, 5, torch.float64, 2),
        _forward(5, 1, 7, torch.float32, 3, max_len=7),
        Check("a sequence longer than max_len raises ValueError",
              "PositionalEncoding(4, 0.0, max_len=5): forward(X (1, 6, 4))", "module_forward",
              {"module": MODULE, "cls": "PositionalEncoding", "init_args": (4, 0.0, 5),
               "args": [too_long], "arg_names": ["X"], "expect_error": True}),
        demo_check("ex06", "transformer"),  # the demo stage (grader/checks/demo.py)
    ]


MISTAKES = (
    Mistake(
        "sin_cos_swapped",
        "Even columns (2j) hold the sine and odd columns (2j + 1) the cosine: P[:, :, 0::2] = sin, "
        "P[:, :, 1::2] = cos.",
        "P[0, :, 0::2] = torch.sin(angles)\n        P[0, :, 1::2] = torch.cos(angles[:, : num_hiddens // 2])",
        "P[0, :, 0::2] = torch.cos(angles)\n        P[0, :, 1::2] = torch.sin(angles[:, : num_hiddens // 2])",
    ),
    Mistake(
        "exponent_j_over_d",
        "The exponent is 2j / num_hiddens where 2j is the even column index (0, 2, 4, ...), "
        "not j / num_hiddens: use torch.arange(0, num_hiddens, 2) / num_hiddens.",
        "angles = positions / torch.pow(10000.0, even_dims / num_hiddens)",
        "angles = positions / torch.pow(10000.0, even_dims / 2 / num_hiddens)",
    ),
    Mistake(
        "multiply_not_divide",
        "The angle is i / 10000**(2j/d): divide the position by the power, so higher columns "
        "turn more slowly.",
        "angles = positions / torch.pow(10000.0, even_dims / num_hiddens)",
        "angles = positions * torch.pow(10000.0, even_dims / num_hiddens)",
    ),
    Mistake(
        "positions_from_one",
        "Positions start at 0: P[0, 0] is sin(0) = 0 and cos(0) = 1 alternating.",
        "positions = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)",
        "positions = torch.arange(1, max_len + 1, dtype=torch.float64).unsqueeze(1)",
    ),
)
