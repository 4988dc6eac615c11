"""Compare what the learner's code produced with what the reference produced.

Every function returns None when the values agree and otherwise one sentence
that says what differs: shape, then dtype, then NaN/inf, then the largest
error and where it is. Tensor agreement is decided by
`torch.testing.assert_close` with dtype-aware tolerances.
"""

import math

import torch

# (rtol, atol) per dtype for values and for gradients (which accumulate more rounding).
TOLERANCES = {
    torch.float64: {"value": (1e-6, 1e-8), "grad": (1e-5, 1e-7)},
    torch.float32: {"value": (1e-4, 1e-5), "grad": (1e-3, 1e-4)},
    torch.float16: {"value": (1e-2, 1e-3), "grad": (5e-2, 1e-2)},
    torch.bfloat16: {"value": (2e-2, 1e-2), "grad": (1e-1, 5e-2)},
}


def describe_name(name):
    """A readable name for a result key: 'grad.queries' -> 'the gradient w.r.t. queries'."""
    if name.startswith("grad."):
        return f"the gradient w.r.t. {name[5:]}"
    if name.startswith("input_after."):
        return f"the input {name[12:]} after the call"
    return name


def shape_str(shape):
    """(2, 3) style, also for 0-d and 1-d shapes."""
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def tolerance(dtype, kind="value", scale=1.0):
    """(rtol, atol) for a dtype; kind is 'value' or 'grad'."""
    rtol, atol = TOLERANCES.get(dtype, TOLERANCES[torch.float32])[kind]
    return rtol * scale, atol * scale


def _index_str(flat_index, shape):
    """Turn a flat index into a tuple string for the given shape."""
    index = []
    for size in reversed(shape):
        index.append(flat_index % size)
        flat_index //= size
    return "(" + ", ".join(str(i) for i in reversed(index)) + ")"


def _fmt(x):
    """A number in a compact, readable form."""
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return str(x)
    return f"{x:.6g}"


def compare_tensors(name, expected, got, kind="value", scale=1.0):
    """None if got matches expected, else a sentence about the first difference."""
    label = describe_name(name)
    if not isinstance(got, torch.Tensor):
        shown = "None" if got is None else f"a {type(got).__name__} ({str(got)[:60]})"
        return f"{label}: expected a tensor of shape {shape_str(expected.shape)}, got {shown}"
    if got.shape != expected.shape:
        return f"{label}: expected shape {shape_str(expected.shape)}, got {shape_str(got.shape)}"
    if got.dtype != expected.dtype:
        return (
            f"{label}: expected dtype {expected.dtype}, got {got.dtype} "
            "(keep the input's dtype: create new tensors with dtype=X.dtype)"
        )
    if not expected.is_floating_point():
        if torch.equal(got, expected):
            return None
        wrong = (got != expected).reshape(-1).nonzero()[0, 0].item()
        return (
            f"{label}: differs at index {_index_str(wrong, got.shape)}: expected "
            f"{expected.reshape(-1)[wrong].item()}, got {got.reshape(-1)[wrong].item()}"
        )
    for word, is_special in (("NaN", torch.isnan), ("inf", torch.isinf)):
        bad = is_special(got) & ~is_special(expected)
        if bad.any():
            first = bad.reshape(-1).nonzero()[0, 0].item()
            return (
                f"{label}: got {word} at index {_index_str(first, got.shape)} ({int(bad.sum())} {word} "
                f"value(s)) where {_fmt(expected.reshape(-1)[first].item())} was expected"
            )
    rtol, atol = tolerance(expected.dtype, kind, scale)
    try:
        torch.testing.assert_close(got, expected, rtol=rtol, atol=atol, equal_nan=True)
        return None
    except AssertionError:
        pass
    finite = torch.isfinite(expected) & torch.isfinite(got)
    errors = torch.where(finite, (got - expected).abs(), torch.zeros_like(got))
    worst = errors.reshape(-1).argmax().item()
    mismatched = int(((got - expected).abs() > atol + rtol * expected.abs())[finite].sum())
    return (
        f"{label}: {mismatched} of {got.numel()} values differ; largest error "
        f"{_fmt(errors.reshape(-1)[worst].item())} at index {_index_str(worst, got.shape)}: "
        f"expected {_fmt(expected.reshape(-1)[worst].item())}, got {_fmt(got.reshape(-1)[worst].item())}"
    )


def compare_values(name, expected, got):
    """Compare plain values (ints, strings, None, floats)."""
    label = describe_name(name)
    if isinstance(expected, torch.Tensor):
        kind = "grad" if name.startswith("grad.") else "value"
        return compare_tensors(name, expected, got, kind)
    if isinstance(expected, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        if math.isclose(expected, got, rel_tol=1e-9, abs_tol=1e-12):
            return None
        return f"{label}: expected {_fmt(expected)}, got {_fmt(float(got))}"
    if type(expected) is not type(got) or expected != got:
        return f"{label}: expected {expected!r}, got {got!r}"
    return None


def compare_results(expected, got, keys=None):
    """Compare two result dicts on `keys` (default: every key of expected)."""
    keys = list(expected) if keys is None else list(keys)
    if "raised" in expected:
        message = compare_raised(expected, got)
        if message or expected["raised"] is not None:
            return message
    for key in keys:
        if key.startswith("raised"):
            continue
        if key not in got:
            return f"{describe_name(key)}: missing (expected {_short(expected[key])})"
        message = compare_values(key, expected[key], got[key])
        if message:
            return message
    return None


def compare_raised(expected, got):
    """Did the learner raise the exception the reference raised (or none, likewise)?"""
    want = expected["raised"]
    have = got.get("raised")
    if want is None:
        if have is None:
            return None
        return f"raised {have}: {got.get('raised_message', '')}"
    if have is None:
        return f"expected a {want} to be raised, but the call returned normally"
    if want in got.get("raised_mro", "").split(","):
        return None
    return f"expected a {want}, got {have}: {got.get('raised_message', '')}"


def _short(value):
    """A short description of an expected value for 'missing' messages."""
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {shape_str(value.shape)}"
    return repr(value)
