"""Checks and known mistakes for exercise 0 (path lengths, receptive fields)."""

from .base import Check, Mistake

MODULE = "ex00_paths"


def _call(fn, args, kwargs=None, expect_error=False):
    """One plain function call, compared with the reference's result."""
    kwargs = kwargs or {}
    shown = ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])
    spec = {"module": MODULE, "fn": fn, "args": list(args), "kwargs": kwargs, "expect_error": expect_error}
    name = f"{fn}({shown})" + (" raises ValueError" if expect_error else "")
    return Check(name=name, call=f"{fn}({shown})", procedure="call", spec=spec)


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
    return checks


MISTAKES = (
    Mistake(
        "rf_no_plus_one",
        "The output position sees itself too: R = 1 + (k - 1) * sum(dilations), "
        "so one layer of width 3 sees 3 positions, not 2.",
        "return 1 + (kernel_size - 1) * sum(dilations)",
        "return (kernel_size - 1) * sum(dilations)",
    ),
    Mistake(
        "rf_times_k",
        "Each layer adds k - 1 new positions (its centre was already seen), not k: "
        "R = 1 + (k - 1) * sum(dilations).",
        "return 1 + (kernel_size - 1) * sum(dilations)",
        "return 1 + kernel_size * sum(dilations)",
    ),
    Mistake(
        "rnn_n_steps",
        "n positions in a chain are n - 1 steps apart (positions 1 and n).",
        'if architecture == "rnn":\n        return n - 1',
        'if architecture == "rnn":\n        return n',
    ),
    Mistake(
        "cnn_ignores_dilation",
        "With dilated=True the layers have dilations 1, 2, 4, ...: the receptive field "
        "doubles roughly each layer, so far fewer layers are needed.",
        "dilations.append(2 ** len(dilations) if dilated else 1)",
        "dilations.append(1)",
    ),
    Mistake(
        "cnn_off_by_one",
        "Stop at the fewest layers whose receptive field covers all n positions (R >= n), "
        "not one layer later.",
        "while receptive_field(kernel_size, len(dilations), dilations) < n:",
        "while receptive_field(kernel_size, len(dilations), dilations) <= n:",
    ),
)
