"""Compare what the learner's code produced with what the reference produced.

Every function returns None when the values agree and otherwise one sentence
that says what differs: shape, then dtype, then NaN/inf, then the largest
error and where it is. Float tensors agree when `torch.isclose` holds everywhere
with dtype-aware tolerances (|got - expected| <= atol + rtol * |expected|, NaN
equal to NaN: torch.testing.assert_close's rule once shape and dtype agree, which
are checked first; assert_close itself imports torch.distributed on its first
call, seconds of every grader run).
"""

import math

import torch

from .harness.registry import PROBE_PREFIX
from .text import describe_name, tr

# (rtol, atol) per dtype for values and for gradients (which accumulate more rounding).
TOLERANCES = {
    torch.float64: {"value": (1e-6, 1e-8), "grad": (1e-5, 1e-7)},
    torch.float32: {"value": (1e-4, 1e-5), "grad": (1e-3, 1e-4)},
    torch.float16: {"value": (1e-2, 1e-3), "grad": (5e-2, 1e-2)},
    torch.bfloat16: {"value": (2e-2, 1e-2), "grad": (1e-1, 5e-2)},
}


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


def compare_tensors(name, expected, got, kind="value", scale=1.0, tolerance_dtype=None, lang="en"):
    """None if got matches expected, else a sentence about the first difference.

    `tolerance_dtype`: judge with that dtype's tolerances when they are looser than
    expected's (a float64 value that only carries float32 precision by the spec)."""
    label = describe_name(name, lang)
    if not isinstance(got, torch.Tensor):
        shown = "None" if got is None else f"{type(got).__name__} ({str(got)[:60]!r})"
        return tr("compare.not_tensor", lang, label=label, shape=shape_str(expected.shape), got=shown)
    if got.shape != expected.shape:
        return tr("compare.shape", lang, label=label, expected=shape_str(expected.shape), got=shape_str(got.shape))
    if got.dtype != expected.dtype:
        return tr("compare.dtype", lang, label=label, expected=str(expected.dtype), got=str(got.dtype))
    if not expected.is_floating_point():
        if torch.equal(got, expected):
            return None
        wrong = (got != expected).reshape(-1).nonzero()[0, 0].item()
        return tr("compare.int_differs", lang, label=label, index=_index_str(wrong, got.shape),
                  expected=expected.reshape(-1)[wrong].item(), got=got.reshape(-1)[wrong].item())
    for word, is_special in (("NaN", torch.isnan), ("inf", torch.isinf)):
        bad = is_special(got) & ~is_special(expected)
        if bad.any():
            first = bad.reshape(-1).nonzero()[0, 0].item()
            return tr("compare.special", lang, label=label, word=word, index=_index_str(first, got.shape),
                      count=int(bad.sum()), expected=_fmt(expected.reshape(-1)[first].item()))
    rtol, atol = tolerance(expected.dtype, kind, scale)
    if tolerance_dtype is not None:
        loose = tolerance(tolerance_dtype, kind, scale)
        rtol, atol = max(rtol, loose[0]), max(atol, loose[1])
    if torch.isclose(got, expected, rtol=rtol, atol=atol, equal_nan=True).all():
        return None
    finite = torch.isfinite(expected) & torch.isfinite(got)
    errors = torch.where(finite, (got - expected).abs(), torch.zeros_like(got))
    worst = errors.reshape(-1).argmax().item()
    mismatched = int(((got - expected).abs() > atol + rtol * expected.abs())[finite].sum())
    return tr("compare.values", lang, label=label, count=mismatched, total=got.numel(),
              error=_fmt(errors.reshape(-1)[worst].item()), index=_index_str(worst, got.shape),
              expected=_fmt(expected.reshape(-1)[worst].item()), got=_fmt(got.reshape(-1)[worst].item()))


def compare_values(name, expected, got, tolerance_dtype=None, lang="en"):
    """Compare plain values (ints, strings, None, floats)."""
    label = describe_name(name, lang)
    if isinstance(expected, torch.Tensor):
        kind = "grad" if name.startswith("grad.") else "value"
        return compare_tensors(name, expected, got, kind, tolerance_dtype=tolerance_dtype, lang=lang)
    if isinstance(expected, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        if math.isclose(expected, got, rel_tol=1e-9, abs_tol=1e-12):
            return None
        return tr("compare.value", lang, label=label, expected=_fmt(expected), got=_fmt(float(got)))
    if type(expected) is not type(got) or expected != got:
        return tr("compare.value", lang, label=label, expected=repr(expected), got=repr(got))
    return None


def judged_keys(results):
    """The keys of a result dict that verdicts are made of (not the intermediate values kept for locating)."""
    return [k for k in results if not k.startswith(PROBE_PREFIX)]


def compare_results(expected, got, keys=None, tolerance_dtype=None, lang="en"):
    """Compare two result dicts on `keys` (default: every judged key of expected)."""
    keys = judged_keys(expected) if keys is None else list(keys)
    if "raised" in expected:
        message = compare_raised(expected, got, lang)
        if message or expected["raised"] is not None:
            return message
    for key in keys:
        if key.startswith("raised"):
            continue
        if key not in got:
            return tr("compare.missing", lang, label=describe_name(key, lang), expected=_short(expected[key], lang))
        message = compare_values(key, expected[key], got[key], tolerance_dtype, lang)
        if message:
            return message
    return None


def compare_raised(expected, got, lang="en"):
    """Did the learner raise the exception the reference raised (or none, likewise)?"""
    want = expected["raised"]
    have = got.get("raised")
    if want is None:
        if have is None:
            return None
        return tr("compare.raised", lang, type=have, message=got.get("raised_message", ""))
    if have is None:
        return tr("compare.not_raised", lang, type=want)
    if want in got.get("raised_mro", "").split(","):
        return None
    return tr("compare.wrong_raise", lang, expected=want, type=have, message=got.get("raised_message", ""))


def _short(value, lang="en"):
    """A short description of an expected value for 'missing' messages."""
    if isinstance(value, torch.Tensor):
        return tr("compare.tensor_of_shape", lang, shape=shape_str(value.shape))
    return repr(value)


PRECISION_SLACK = 1e-2  # relative error a near miss may have to be called lost precision, not a wrong formula


def precision_loss(expected, got, lang="en"):
    """For a value that failed: a sentence saying it only lost precision (finite, same shape and dtype, every
    value within PRECISION_SLACK of the reference, relative), else None."""
    for key in judged_keys(expected):
        want, have = expected[key], got.get(key)
        if key.startswith(("grad.", "input_after.")) or not isinstance(want, torch.Tensor) \
                or not want.is_floating_point():
            continue
        if not isinstance(have, torch.Tensor) or have.shape != want.shape or have.dtype != want.dtype:
            return None
        if not torch.isfinite(have).all() or not torch.isfinite(want).all():
            return None
        rtol, atol = tolerance(want.dtype)
        error = (have.double() - want.double()).abs()
        if bool((error <= atol + rtol * want.double().abs()).all()):
            continue
        relative = error.max().item() / max(want.double().abs().max().item(), 1e-30)  # to the values' scale
        if relative > PRECISION_SLACK:
            return None
        return tr("compare.precision", lang, label=describe_name(key, lang), error=_fmt(error.max().item()),
                  relative=_fmt(relative), rtol=_fmt(rtol))
    return None
