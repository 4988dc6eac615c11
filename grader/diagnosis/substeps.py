"""Which sub-step first differs, for every exercise: said on a failing check that has no locator of its own.

Checks with their own localisation (ex03-ex07: the attention weights, the values recorded inside
multi-head attention and the Transformer blocks, the table P) keep it. Every other failing check gets
the first of these that applies, computed from what the grader already holds (the references' and the
learner's results on every check, the references' syntax tree), never from the learner's source:

1. the parts: the function or class under test uses another one of the same exercise (found in the
   reference's syntax tree); if that one fails its own checks, the difference starts there; if it
   passes them, the difference is in the tested one's own steps;
2. the weights: a result that is a set of attention weights (rows that sum to 1, masked keys exactly 0)
   first differs at a key that must be masked (the masking step) or at a key that may be read (the
   steps before the mask: the scores, the exponentials, the normalisation);
3. the recorded values: the first result (a captured attribute such as a table of cosines, then the
   output) that differs, and where;
and, beside any of them, the cases: what every failing call of that function has in common that no
passing call has (architecture='cnn', dilated=True, valid_lens given, ...).
"""

import ast
import difflib
import functools

import torch

from course.common.exercise_index import get as get_exercise

from ..checks.base import first_difference, weights_locator
from ..compare import judged_keys, shape_str, tolerance
from ..text import render, tr
from .mutants import SOLUTIONS_DIR

PLAIN = (str, bool, int, float, type(None))  # argument values a case is described by


@functools.cache
def uses(ex_id):
    """{function or class: the functions and classes of the same file it calls}, from the reference's tree."""
    tree = ast.parse((SOLUTIONS_DIR / get_exercise(ex_id).filename).read_text(encoding="utf-8"))
    defined = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    direct = {name: {c.func.id for c in ast.walk(node) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
                     and c.func.id in defined and c.func.id != name} for name, node in defined.items()}
    closed = {}
    for name in direct:  # through private helpers too (masked_softmax -> _valid_mask has no checks of its own)
        seen, todo = set(), list(direct[name])
        while todo:
            other = todo.pop()
            if other not in seen:
                seen.add(other)
                todo += direct.get(other, ())
        closed[name] = seen
    return closed


TEST_CHARS = 40  # a test longer than this is not quoted


@functools.lru_cache(maxsize=64)
def _test_text(reference, mutated):
    """The reference's test (`offset + T > self.max_len`) on the one line a mutant changed, when that line is
    an if or while made of names, attributes, constants, arithmetic and comparisons, else ''."""
    changed = [line for line in difflib.ndiff(reference.splitlines(), mutated.splitlines()) if line[:2] in ("- ", "+ ")]
    if len(changed) != 2 or not changed[0].startswith("- "):
        return ""
    line = changed[0][2:].strip()
    if not line.startswith(("if ", "while ")) or not line.endswith(":"):
        return ""
    text = line.split(" ", 1)[1][:-1].strip()
    allowed = (ast.Compare, ast.BoolOp, ast.BinOp, ast.Name, ast.Attribute, ast.Constant, ast.cmpop, ast.boolop,
               ast.operator, ast.expr_context, ast.UnaryOp, ast.unaryop, ast.Expression)
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return ""
    return text if len(text) <= TEST_CHARS and all(isinstance(n, allowed) for n in ast.walk(tree)) else ""


def changed_test(entry):
    """The test a condition mutant changed, quoted from the reference (see _test_text), or ''."""
    source, function = entry.get("source"), entry.get("function", "")
    if entry.get("target") != "?condition" or not source:
        return ""
    for path in SOLUTIONS_DIR.glob("ex*.py"):
        reference = solution_text(path)
        if f"def {function.split('.')[-1]}(" in reference and abs(len(reference) - len(source)) < 200:
            text = _test_text(reference, source)
            if text:
                return text
    return ""


@functools.cache
def solution_text(path):
    """A reference as the mutants' sources are written (ast.unparse: no comments, one spelling)."""
    return ast.unparse(ast.parse(path.read_text(encoding="utf-8")))


def part_fails(ex_id, checks, results, index):
    """Does a function or class that check `index`'s target uses (in the reference) fail one of its own checks?
    Then that check's difference may start in the part, and a mistake of the target's own lines is not named."""
    parts = uses(ex_id).get(checks[index].target.split(".")[0], set())
    return any(c.target.split(".")[0] in parts and not r.passed for c, r in zip(checks, results))


def _parts(ex_id, check, checks, results):
    """('step.part_fails' | 'step.part_passes', fields) for the parts the tested function uses, or None."""
    target = check.target.split(".")[0]
    tested = {c.target for c in checks}
    parts = sorted(p for p in uses(ex_id).get(target, ()) if p in tested)
    if not parts:
        return None
    failing = [p for p in parts if any(c.target == p and not r.passed for c, r in zip(checks, results))]
    if failing:
        return ("step.part_fails", {"function": target, "part": ", ".join(failing)})
    return ("step.part_passes", {"function": target, "part": ", ".join(parts)})


def _weights_like(tensor):
    """Is this a set of attention weights: values in [0, 1], each row summing to 1 or 0?"""
    if not isinstance(tensor, torch.Tensor) or not tensor.is_floating_point() or tensor.dim() < 2 \
            or tensor.numel() == 0 or not torch.isfinite(tensor).all():
        return False
    sums = tensor.sum(-1)
    rows_ok = ((sums - 1).abs() < 1e-3) | (sums.abs() < 1e-3)
    return bool((tensor >= 0).all() and (tensor <= 1).all() and rows_ok.all())


def _weights(key, want, have, tolerance_dtype):
    """Where weights with masked keys first differ: only at masked keys (the reference's exact zeros), only
    at readable ones, or at both; None for weights without masked keys."""
    if not _weights_like(want) or not isinstance(have, torch.Tensor) or have.shape != want.shape \
            or have.dtype != want.dtype:
        return None
    masked = want == 0
    rtol, atol = tolerance(tolerance_dtype or want.dtype)
    off = ~torch.isclose(have, want, rtol=max(rtol, tolerance(want.dtype)[0]), atol=atol, equal_nan=True)
    if not masked.any() or not off.any():
        return None
    on_masked, on_read = off & masked, off & ~masked
    if not on_read.any():
        return ("step.masked_only", {"result": key, "index": shape_str(tuple(on_masked.nonzero()[0].tolist()))})
    if not on_masked.any():
        return ("step.readable_only", {"result": key, "index": shape_str(tuple(on_read.nonzero()[0].tolist()))})
    return ("step.weights_both", {"result": key, "index": shape_str(tuple(off.nonzero()[0].tolist()))})


def _values(reference, got, check):
    """The first result key (captured attributes first, the output last) that differs, and where."""
    keys = [k for k in judged_keys(reference) if not k.startswith(("grad.", "input_after.", "raised"))]
    keys.sort(key=lambda k: k == "output")
    compared = 0
    for key in keys:
        want, have = reference.get(key), got.get(key)
        if not isinstance(want, torch.Tensor) or not isinstance(have, torch.Tensor):
            continue
        said = _weights(key, want, have, check.tolerance_dtype)
        if said:
            return said
        if want.shape != have.shape or want.is_floating_point() != have.is_floating_point():
            continue
        compared += 1
        if not want.is_floating_point():  # a mask, indices: exact
            off = (want != have.to(want.dtype)).nonzero()
            first = tuple(off[0].tolist()) if len(off) else None
        else:
            first = first_difference(want, have.to(want.dtype), check.tolerance_dtype)
        if first is not None:
            return ("step.value_first", {"result": key, "index": shape_str(first)})
    return ("step.values_agree", {}) if compared else None


@functools.cache
def _parameters(ex_id, target):
    """The reference function's parameter names (for calls whose spec names none)."""
    import importlib
    import inspect

    function = getattr(importlib.import_module(f"solutions.{get_exercise(ex_id).module}"), target, None)
    try:
        return tuple(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return ()


def _features(ex_id, check):
    """The plain facts about one call: (argument, value) for plain arguments, whether a tensor one is given."""
    spec = check.spec
    names = list(spec.get("arg_names") or _parameters(ex_id, check.target))
    names += [f"#{i}" for i in range(len(names), len(spec.get("args", ())))]
    found = set()
    for name, value in list(zip(names, spec.get("args", ()))) + list(spec.get("kwargs", {}).items()):
        if isinstance(value, PLAIN):
            found.add((name, repr(value)))
        elif isinstance(value, torch.Tensor) and name in ("valid_lens", "mask"):
            found.add((name, f"{value.dim()}-D"))
    dtype = spec.get("dtype")
    if dtype is not None:
        found.add(("dtype", str(dtype).replace("torch.", "")))
    return found


def _cases(ex_id, check, checks, results):
    """What every failing call of the check's target has in common that no passing call has, or None."""
    same = [(c, r) for c, r in zip(checks, results) if c.target == check.target and not c.spec.get("expect_error")]
    failing = [_features(ex_id, c) for c, r in same if not r.passed]
    passing = [_features(ex_id, c) for c, r in same if r.passed]
    if not failing or not passing:
        return None
    shared = set.intersection(*failing)
    telling = sorted(f for f in shared if not any(f in p for p in passing))
    if not telling:
        return None
    return ", ".join(f"{name}={value}" for name, value in telling[:3])


def locate(ex_id, index, checks, references, records, results, lang="en"):
    """The sub-step text for failing check `index` that has no locator of its own, or None."""
    check, record = checks[index], records[index] or {}
    got = record.get("ok") if isinstance(record, dict) else None
    found = [_parts(ex_id, check, checks, results)]
    if isinstance(got, dict):
        found.append(_attention(references[index], got) or _values(references[index], got, check))
    texts = [render(f, lang) for f in found if f]
    marker = tr("step.marker", lang)
    said = tr("step.also", lang).join([texts[0]] + [t.removeprefix(marker).strip() for t in texts[1:]]) \
        if texts else None
    cases = _cases(ex_id, check, checks, results)
    if said is None and cases is None:
        return None
    if cases is None:
        return said
    if said is None:
        return tr("step.cases_alone", lang, function=check.target, cases=cases)
    return tr("step.cases_after", lang, located=said, function=check.target, cases=cases)


def _attention(reference, got):
    """For a module that keeps its attention weights: do they already differ, or only what comes after?"""
    if not isinstance(reference.get("attention_weights"), torch.Tensor) or "output" not in reference:
        return None
    return weights_locator()(reference, got, {})


def add_locations(ex_id, checks, references, records, results, lang="en"):
    """Append the sub-step that first differs to each failing mismatch that says none yet."""
    marker = tr("step.marker", lang)
    for i, (check, result) in enumerate(zip(checks, results)):
        if result.passed or result.kind != "mismatch" or check.locate is not None or marker in result.message:
            continue
        try:
            text = locate(ex_id, i, checks, references, records, results, lang)
        except Exception:  # hostile or odd results: the check's own message stands
            continue
        if text:
            result.message = tr("step.joined", lang, message=result.message.rstrip("."), located=text)
