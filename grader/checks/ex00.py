"""Checks and known mistakes for exercise 0 (path lengths, receptive fields)."""

from .base import Check, Mistake, number_checks

MODULE = "ex00_paths"


def _call(fn, args, kwargs=None, expect_error=False):
    """One plain function call, compared with the reference's result."""
    kwargs = kwargs or {}
    shown = ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])
    spec = {"module": MODULE, "fn": fn, "args": list(args), "kwargs": kwargs, "expect_error": expect_error}
    name = ("check.raises", {"call": f"{fn}({shown})", "error": "ValueError"}) if expect_error else f"{fn}({shown})"
    return Check(name=name, call=f"{fn}({shown})", procedure="call", spec=spec, target=fn)


def build():
    """The exercise's checks, in the order they are reported."""
    checks = [
        _call("receptive_field", (3, 4)),
        _call("receptive_field", (5, 1)),
        _call("receptive_field", (1, 3)),
        _call("receptive_field", (4, 0)),
        _call("receptive_field", (3, 3), {"dilations": [1, 2, 4]}),
        _call("receptive_field", (2, 4), {"dilations": [1, 1, 2, 8]}),
        _call("receptive_field", (3, 2), {"dilations": [1]}, expect_error=True),
        _call("receptive_field", (0, 2), expect_error=True),
    ]
    for n in (1, 2, 9, 10, 57):
        checks.append(_call("max_path_length", ("rnn", n)))
        checks.append(_call("max_path_length", ("self-attention", n)))
    for n, k, dilated in ((1, 3, False), (3, 3, False), (4, 3, False), (9, 3, False), (10, 3, False),
                          (100, 5, False), (9, 3, True), (10, 3, True), (100, 3, True), (64, 2, True),
                          (200, 7, True)):
        checks.append(_call("max_path_length", ("cnn", n), {"kernel_size": k, "dilated": dilated}))
    checks += [
        _call("max_path_length", ("transformer", 5), expect_error=True),
        _call("max_path_length", ("rnn", 0), expect_error=True),
        _call("max_path_length", ("cnn", 5), {"kernel_size": 1}, expect_error=True),
    ]
    return number_checks("ex00", checks)


MISTAKES = (
    Mistake(
        "rf_no_plus_one",
        "return 1 + (kernel_size - 1) * sum(dilations)",
        "return (kernel_size - 1) * sum(dilations)",
        where=("receptive_field",),
    ),
    Mistake(
        "rf_times_k",
        "return 1 + (kernel_size - 1) * sum(dilations)",
        "return 1 + kernel_size * sum(dilations)",
        where=("receptive_field",),
    ),
    Mistake(
        "rnn_n_steps",
        'if architecture == "rnn":\n        return n - 1',
        'if architecture == "rnn":\n        return n',
        where=("max_path_length",),
    ),
    Mistake(
        "cnn_ignores_dilation",
        "dilations.append(2 ** len(dilations) if dilated else 1)",
        "dilations.append(1)",
        where=("max_path_length",),
    ),
    Mistake(
        "cnn_off_by_one",
        "while receptive_field(kernel_size, len(dilations), dilations) < n:",
        "while receptive_field(kernel_size, len(dilations), dilations) <= n:",
        where=("max_path_length",),
    ),
)
