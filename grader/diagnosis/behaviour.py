"""Slips named by what the learner's results show, where no one-place mutant of the reference explains them.

Each rule reads only data the grader already holds (the reference's and the learner's results on a check,
the check's arguments) and fires only on direct evidence of one mistake, never on a resemblance:

- an error not raised: the reference raises for the call (arguments the docstring rejects), the learner's
  code returns;

- an argument changed in place: the learner's copy of an input after the call differs from the input, or
  torch refused the call for writing into an argument that needs gradients;
- a dtype not kept: a result has another floating dtype than the reference's, its values agree once cast;
- a shape with an extra or missing axis of size 1: the same values, reshaped;
- axes in another order: the same values, their axes permuted (a transpose missing or extra);
- entries never filled: right everywhere except entries left at exactly 0 (a loop one short, an odd size);
- the mask applied after the softmax: every masked key is 0 as it must be, but each row's readable
  weights are the reference's times one factor below 1 per row (normalised over all keys, then zeroed);
- slices in the wrong order: the result holds exactly the reference's slices along one axis, permuted;
- values in the wrong places: the result holds exactly the reference's (mostly distinct) values, rearranged.

Only the first failing check is read: a later one may fail downstream of the first slip.

`diagnose` returns (index of the check, hint text, mistake id) for the first failing check that one rule
explains, or None. The ids have the form of explain.mistake_id ('auto:<function>:<site>:<rule>').
"""

import itertools

import torch

from ..compare import judged_keys, tolerance
from ..text import tr

ID_PREFIX = "auto:"
LEAF_IN_PLACE = "leaf Variable that requires grad is being used in an in-place operation"  # torch's error when
# code writes into an argument that needs gradients (every argument of a check that compares gradients)
SITES = {"not_raised": "(condition)", "input_modified": "(input)", "dtype_changed": "(return)", "shape_reshaped": "(return)",
         "axes_permuted": "(return)", "entries_unfilled": "(return)",
         "masked_after_softmax": "(return)", "slices_permuted": "(return)",
         "values_rearranged": "(return)"}  # where each rule's slip sits


def _tensor(value):
    return isinstance(value, torch.Tensor) and value.layout == torch.strided


def _close(want, have, dtype):
    """Do two float tensors of one shape agree within the check's tolerance (NaN equal to NaN)?"""
    rtol, atol = tolerance(dtype or want.dtype)
    return bool(torch.isclose(have.to(want.dtype), want, rtol=rtol, atol=atol, equal_nan=True).all())


def _keys(reference):
    """The value keys of a check's reference results (not gradients, inputs after the call or errors)."""
    return [k for k in judged_keys(reference) if not k.startswith(("grad.", "input_after.", "raised"))]


def not_raised(check, reference, got):
    """{'error'} when the reference raises for this call (an argument the docstring rejects) and the learner's
    code returns normally."""
    if isinstance(reference.get("raised"), str) and "raised" in got and got["raised"] is None:
        return {"error": reference["raised"]}
    return None


def input_modified(check, reference, got):
    """{'name'} of an argument the learner's call changed in place (the reference leaves it as it was)."""
    for key, want in reference.items():
        have = got.get(key)
        if key.startswith("input_after.") and _tensor(want) and _tensor(have) and want.shape == have.shape \
                and want.dtype == have.dtype \
                and not torch.equal(torch.nan_to_num(want), torch.nan_to_num(have)):
            return {"name": key.removeprefix("input_after.")}
    return None


def dtype_changed(check, reference, got):
    """{'result', 'got', 'want'} when a floating result comes back in another floating dtype, values agreeing."""
    for key in _keys(reference):
        want, have = reference.get(key), got.get(key)
        if _tensor(want) and _tensor(have) and want.is_floating_point() and have.is_floating_point() \
                and want.dtype != have.dtype and want.shape == have.shape \
                and _close(want, have, max(want.dtype, have.dtype, key=lambda d: torch.finfo(d).eps)):  # the
            # coarser dtype's tolerance: a float32 result for a bfloat16 input differs from the reference by its rounding
            return {"result": key, "got": str(have.dtype).removeprefix("torch."),
                    "want": str(want.dtype).removeprefix("torch.")}
    return None


def _squeezed(shape):
    return tuple(s for s in shape if s != 1)


def shape_reshaped(check, reference, got):
    """{'result', 'got', 'want'} when a result holds the reference's values with an axis of size 1 added or
    dropped."""
    for key in _keys(reference):
        want, have = reference.get(key), got.get(key)
        if _tensor(want) and _tensor(have) and want.shape != have.shape and want.dtype == have.dtype \
                and want.is_floating_point() and _squeezed(want.shape) == _squeezed(have.shape) \
                and _close(want, have.reshape(want.shape), check.tolerance_dtype):
            return {"result": key, "got": str(tuple(have.shape)), "want": str(tuple(want.shape))}
    return None


def axes_permuted(check, reference, got):
    """{'result', 'got', 'want', 'axes'} when a result holds the reference's values with its axes in another
    order (its shape a permutation of the reference's, of distinct sizes where they moved)."""
    for key in _keys(reference):
        want, have = reference.get(key), got.get(key)
        if not (_tensor(want) and _tensor(have) and want.shape != have.shape and want.dtype == have.dtype
                and want.is_floating_point() and sorted(want.shape) == sorted(have.shape) and want.dim() <= 5):
            continue
        for order in itertools.permutations(range(want.dim())):
            if tuple(want.shape[i] for i in order) == tuple(have.shape) \
                    and _close(want.permute(order), have, check.tolerance_dtype):
                moved = [axis for axis, source in enumerate(order) if axis != source]
                return {"result": key, "got": str(tuple(have.shape)), "want": str(tuple(want.shape)),
                        "axes": ", ".join(map(str, moved))}
    return None


def entries_unfilled(check, reference, got):
    """{'result', 'count', 'index'} when a result is right everywhere except at entries it leaves at exactly 0
    where the reference has a value: a part of it is never computed."""
    for key in _keys(reference):
        want, have = reference.get(key), got.get(key)
        if not (_tensor(want) and _tensor(have) and want.shape == have.shape and want.dtype == have.dtype
                and want.is_floating_point() and want.numel() > 1 and torch.isfinite(want).all()):
            continue
        rtol, atol = tolerance(check.tolerance_dtype or want.dtype)
        wrong = ~torch.isclose(have, want, rtol=rtol, atol=atol)
        if wrong.any() and not wrong.all() and (have[wrong] == 0).all() and (want[wrong].abs() > atol).all():
            index = tuple(int(i) for i in wrong.nonzero()[0])
            return {"result": key, "count": str(int(wrong.sum())), "index": str(index)}
    return None


def masked_after_softmax(check, reference, got):
    """{'result'} when attention weights are the reference's with each row's readable keys scaled by one factor
    below 1 and every masked key 0: the softmax ran over every key, and the mask zeroed its entries after it."""
    for key in _keys(reference):
        want, have = reference.get(key), got.get(key)
        if not (_tensor(want) and _tensor(have) and want.shape == have.shape and want.dtype == have.dtype
                and want.is_floating_point() and want.dim() >= 2 and torch.isfinite(have).all()):
            continue
        sums = want.sum(-1)
        masked = want == 0
        if not ((sums - 1).abs() < 1e-3).all() or not masked.any() or not (have[masked] == 0).all():
            continue
        ratio = torch.where(masked, torch.ones_like(want), have / torch.where(masked, torch.ones_like(want), want))
        row_ratio = ratio.amin(-1, keepdim=True)
        rtol, atol = tolerance(check.tolerance_dtype or want.dtype)
        partial = (masked.any(-1) & ~masked.all(-1))  # rows with a masked and a readable key
        if partial.any() and torch.isclose(have, want * row_ratio, rtol=rtol, atol=atol).all() \
                and (row_ratio.squeeze(-1)[partial] < 1 - 1e-3).all():
            return {"result": key}
    return None


def _permutation(want, have, axis, dtype):
    """The index each slice of `have` along `axis` takes from `want`, if `have` is want's slices permuted."""
    size = want.shape[axis]
    if size < 2:
        return None
    w, h = want.movedim(axis, 0).reshape(size, -1), have.movedim(axis, 0).reshape(size, -1)
    rtol, atol = tolerance(dtype or want.dtype)
    source = []
    for row in h:
        found = [j for j in range(size) if torch.isclose(row, w[j], rtol=rtol, atol=atol, equal_nan=True).all()]
        if len(found) != 1:
            return None
        source.append(found[0])
    if sorted(source) != list(range(size)) or source == list(range(size)):
        return None
    return source


def slices_permuted(check, reference, got):
    """{'result', 'axis', 'index', 'source'} when a result holds exactly the reference's slices along one axis,
    in another order (distinct slices only: a tensor with two equal slices says nothing)."""
    for key in _keys(reference):
        want, have = reference.get(key), got.get(key)
        if not (_tensor(want) and _tensor(have) and want.shape == have.shape and want.dtype == have.dtype
                and want.is_floating_point() and want.numel() > 1):
            continue
        for axis in range(want.dim()):
            source = _permutation(want, have, axis, check.tolerance_dtype)
            if source:
                index = next(i for i, j in enumerate(source) if i != j)
                return {"result": key, "axis": str(axis), "index": str(index), "source": str(source[index])}
    return None


def values_rearranged(check, reference, got):
    """{'result'} when a result holds exactly the reference's values (the same sorted entries) in other places."""
    for key in _keys(reference):
        want, have = reference.get(key), got.get(key)
        if _tensor(want) and _tensor(have) and want.shape == have.shape and want.dtype == have.dtype \
                and want.is_floating_point() and want.numel() > 1 and torch.isfinite(want).all() \
                and want.unique().numel() > want.numel() // 2 \
                and _close(want.flatten().sort().values, have.flatten().sort().values, check.tolerance_dtype) \
                and not _close(want, have, check.tolerance_dtype):
            return {"result": key}
    return None


RULES = (not_raised, input_modified, dtype_changed, shape_reshaped, axes_permuted, entries_unfilled,
         masked_after_softmax, slices_permuted, values_rearranged)


def mistake_id(function, rule):
    return f"{ID_PREFIX}{function}:{SITES[rule]}:{rule}"


def diagnose(checks, references, records, results, lang="en"):
    """(index, hint, mistake id) when one rule explains the first failing check (a mismatch), else None."""
    index = next((i for i, r in enumerate(results) if not r.passed), None)
    if index is None or results[index].kind not in ("mismatch", "error") \
            or index >= min(len(checks), len(references), len(records)):
        return None
    check, reference, record = checks[index], references[index], records[index]
    if results[index].kind == "error":
        message = ((record or {}).get("error") or {}).get("message") or "" if isinstance(record, dict) else ""
        if LEAF_IN_PLACE not in message:
            return None
        function = function_name(check.target, getattr(check, "procedure", ""))
        return index, tr("behaviour.input_modified_error", lang, function=function), \
            mistake_id(function, "input_modified")
    got = record.get("ok") if isinstance(record, dict) else None
    if isinstance(got, dict) and isinstance(reference, dict):
        for rule in RULES:
            try:
                fields = rule(check, reference, got)
            except Exception:  # odd learner data: no hint from this rule
                fields = None
            if fields:
                function = function_name(check.target, getattr(check, "procedure", ""))
                text = tr(f"behaviour.{rule.__name__}", lang, function=function, **fields)
                return index, text, mistake_id(function, rule.__name__)
    return None


def function_name(target, procedure=""):
    """The function a check's call runs: a module's forward for a class target ('DotProductAttention'), its
    __init__ for a check that only builds it (procedure 'construct')."""
    if target[:1].isupper() and "." not in target:
        return f"{target}.__init__" if procedure == "construct" else f"{target}.forward"
    return target
