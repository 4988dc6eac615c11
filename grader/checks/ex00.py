"""Checks and known mistakes for exercise 0 (path lengths, receptive fields)."""

import random
import secrets

from course.common.exercise_variants import PARAMETERS

from .base import Check, Mistake, number_checks

MODULE = "ex00_paths"
CASES_DRAWN = True  # build(seed): the cases are drawn per grading run (see build)


def _call(fn, args, kwargs=None, expect_error=False):
    """One plain function call, compared with the reference's result."""
    kwargs = kwargs or {}
    shown = ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])
    spec = {"module": MODULE, "fn": fn, "args": list(args), "kwargs": kwargs, "expect_error": expect_error}
    name = ("check.raises", {"call": f"{fn}({shown})", "error": "ValueError"}) if expect_error else f"{fn}({shown})"
    return Check(name=name, call=f"{fn}({shown})", procedure="call", spec=spec, target=fn)


def build(seed=None):
    """The exercise's checks, in the order they are reported.

    The feedback shows each case's expected value, so the cases are drawn per grading run from
    `seed` (core.py derives it from the submission and a fresh nonce): a table of the values one
    report showed does not pass the next run. The kinds of case (edge cases included) stay fixed."""
    rng = random.Random(secrets.randbits(64) if seed is None else seed)
    k = lambda low=2: rng.randint(low, 9)  # noqa: E731
    n = lambda: rng.randint(2, 5000)  # noqa: E731
    dilations = lambda count: [rng.choice((1, 2, 4, 8, 16)) for _ in range(count)]  # noqa: E731
    layers = [rng.randint(1, 12) for _ in range(2)]
    checks = [
        _call("receptive_field", (k(), layers[0])),
        _call("receptive_field", (k(), layers[1])),
        _call("receptive_field", (1, rng.randint(1, 12))),
        _call("receptive_field", (k(), 0)),
        _call("receptive_field", (k(), 3), {"dilations": dilations(3)}),
        _call("receptive_field", (k(), 4), {"dilations": dilations(4)}),
        _call("receptive_field", (k(), 2), {"dilations": dilations(1)}, expect_error=True),
        _call("receptive_field", (rng.randint(-3, 0), rng.randint(0, 5)), expect_error=True),
    ]
    for size in [1, 2] + [n() for _ in range(3)]:
        checks.append(_call("max_path_length", ("rnn", size)))
        checks.append(_call("max_path_length", ("self-attention", size)))
    kernel = k()
    cnn = [(1, k(), False), (kernel, kernel, False), (kernel + 1, kernel, False)]
    cnn += [(rng.randint(2, 200), k(), False) for _ in range(3)] + [(1, k(), True), (kernel + 1, kernel, True)]
    cnn += [(n(), k(), True) for _ in range(3)]
    for size, kernel_size, dilated in cnn:
        checks.append(_call("max_path_length", ("cnn", size), {"kernel_size": kernel_size, "dilated": dilated}))
    checks += [
        _call("max_path_length", (rng.choice(("transformer", "gru", "lstm", "mlp")), n()), expect_error=True),
        _call("max_path_length", ("rnn", rng.randint(-5, 0)), expect_error=True),
        _call("max_path_length", ("cnn", n()), {"kernel_size": 1}, expect_error=True),
    ]
    # Appended (ids and draws of the checks above stay as they were): a span that needs a layer count rounded up in
    # every run. kernel_size >= 3, so n - 1 = kernel_size is no multiple of kernel_size - 1; the cases above may all
    # be multiples (about one run in 200 drew so: a count rounded down passed).
    wide = k(3)
    checks.append(_call("max_path_length", ("cnn", wide + 1), {"kernel_size": wide, "dilated": False}))
    return number_checks("ex00", checks)


def variant_checks(chosen, rng):
    """Off the published exercise: CNN path lengths left to the variant's default kernel_size (grader/variants.py).

    The sizes never depend on the variant's value (the learner's job holds them: a size equal to the kernel size
    would tell it). UNDILATED sizes n <= 300 (a correct file may peel one layer per recursive call) are drawn to
    tell apart every two kernel sizes a learner may have as default (every variant's, and the published 3): each
    kept size splits some kernel sizes the sizes before it gave the same path lengths, the best of a few drawn;
    random sizes fill the rest, and all are shuffled, so neither a size nor its place says which pair it splits.
    Two dilated n are drawn alongside."""
    kernels = _kernel_sizes(chosen.ex_id)
    for _ in range(_SEPARATING_TRIES):
        sizes = _separating_sizes(kernels, rng)
        if sizes is not None:
            break
    else:  # a draw rarely needs more than 16 sizes: 20 draws that all do mean the bounds above are wrong
        raise RuntimeError(f"no {UNDILATED} undilated sizes separating kernel sizes {kernels[0]}..{kernels[-1]}")
    sizes += [rng.randint(2, 300) for _ in range(UNDILATED - len(sizes))]
    rng.shuffle(sizes)
    cases = [(n, False) for n in sizes] + [(rng.randint(2, 5000), True), (rng.randint(2, 5000), True)]
    return [_call("max_path_length", ("cnn", n), {"dilated": dilated}) for n, dilated in cases]


UNDILATED = 16  # undilated sizes per variant: 12 to 16 tell every two kernel sizes apart
_SEPARATING_TRIES = 20
_CANDIDATES = 32  # sizes drawn per size kept: the one splitting the most kernel sizes is kept


def _separating_sizes(kernels, rng):
    """At most UNDILATED sizes n in 2..300 under which every kernel size in `kernels` has its own path lengths, drawn
    from rng alone (None when a draw needs more)."""
    lengths = {k: () for k in kernels}  # each kernel size's path lengths under the sizes kept so far
    sizes = []
    while len(set(lengths.values())) < len(kernels):
        if len(sizes) == UNDILATED:
            return None
        apart = len(set(lengths.values()))
        best, split = None, apart
        for n in (rng.randint(2, 300) for _ in range(_CANDIDATES)):
            count = len({(seen, _cnn_length(n, k)) for k, seen in lengths.items()})
            if count > split:
                best, split = n, count
        if best is not None:
            sizes.append(best)
            lengths = {k: seen + (_cnn_length(best, k),) for k, seen in lengths.items()}
    return sizes


def _kernel_sizes(ex_id):
    """Every default kernel size the variants give (and the published one), smallest first."""
    parameter = PARAMETERS[ex_id]
    return sorted({parameter.default, *parameter.choices})


def _cnn_length(n, kernel_size):
    """The undilated CNN's path length over n positions, as the exercise defines it (layers of kernel_size)."""
    return -(-(n - 1) // (kernel_size - 1))


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
        "dilations.append(2 ** len(dilations))",
        "dilations.append(1)",
        where=("max_path_length",),
    ),
    Mistake(
        "cnn_off_by_one",
        "while receptive_field(kernel_size, len(dilations), dilations) < n:",
        "while receptive_field(kernel_size, len(dilations), dilations) <= n:",
        also=(("return math.ceil((n - 1) / (kernel_size - 1))", "return (n - 1) // (kernel_size - 1) + 1"),),
        where=("max_path_length",),
    ),
    Mistake(
        "rf_ignores_dilations",
        "return 1 + (kernel_size - 1) * sum(dilations)",
        "return 1 + (kernel_size - 1) * num_layers",
        where=("receptive_field",),
    ),
)
