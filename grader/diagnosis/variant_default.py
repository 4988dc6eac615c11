"""On an exercise variant, the first thing to look at: the value the learner's code has for the variant's parameter.

The value is read from the learner's source (ast), never by running it: the default of the parameter in the
members that take it, or, in a file without the parameter, a number written into those members' bodies. When
the learner's results equal the reference's run at that value (references run here, in the grader's process),
the value is the whole story; otherwise it is still said first, before whatever else the diagnosis finds.
"""

import ast
import importlib
from typing import NamedTuple

from .. import variants
from ..harness import load_procedures, seed_call
from ..text import tr
from .learner_lines import parse_source

PROCEDURES = load_procedures()
MAX_CONSTANTS = 8  # numbers written in the members' bodies tried as the value (a file without the parameter)


class Written(NamedTuple):
    """Where the learner's code sets the parameter, the value, and how: "default", "constant" or "missing"."""

    where: str  # "PositionalEncoding.__init__", "softmax"
    value: object
    how: str


def _members(tree, parameter):
    """(label, function node) for each function of the module or method of a class that takes the parameter's
    place: the listed functions, and every method of the listed classes (the constructor first)."""
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in parameter.functions:
            found.append((node.name, node))
        elif isinstance(node, ast.ClassDef) and node.name in parameter.classes:
            methods = [n for n in node.body if isinstance(n, ast.FunctionDef)]
            methods.sort(key=lambda n: n.name != "__init__")
            found += [(f"{node.name}.{n.name}", n) for n in methods]
    return found


def _default(function, name):
    """The literal default of argument `name` of a function node: (True, value), (True, None) when it has no
    readable literal default, (False, None) when the function has no such argument."""
    args = function.args
    positional = args.posonlyargs + args.args
    pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    if not any(a.arg == name for a in positional + args.kwonlyargs):
        return False, None
    for arg, node in pairs:
        if arg.arg == name:
            try:
                return True, ast.literal_eval(node)
            except ValueError:
                return True, None
    return True, None


def lacks_parameter(source, target, name):
    """Does the learner's source define `target` (a module-level function, or a class read at its __init__) with
    neither an argument `name` nor **kwargs? False where it takes it, and where the source does not show it
    (unreadable, `target` not defined there, a class without its own __init__)."""
    tree = parse_source(source or "")
    if tree is None:
        return False
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == target:
            node = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
        elif not (isinstance(node, ast.FunctionDef) and node.name == target):
            continue
        if node is None:
            return False
        return node.args.kwarg is None and not _default(node, name)[0]  # _default: (False, None) without the argument
    return False


def _constants(function):
    """The numbers written in a function's body (not its defaults), in order, each once."""
    numbers = []
    for statement in function.body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value not in numbers:
                numbers.append(node.value)
    return numbers


def written(ex_id, source):
    """What the learner's source says for the exercise's parameter: [Written] (a default, where one is found;
    else the numbers written in the members' bodies, as "constant"; else one "missing"); [] when unreadable."""
    parameter = variants.PARAMETERS.get(ex_id)
    tree = parse_source(source or "")
    if tree is None:
        return []
    members = _members(tree, parameter) if parameter else []
    defaults = [(where, _default(node, parameter.name)) for where, node in members]
    taken = [(where, value) for where, (has, value) in defaults if has]
    if taken:
        return [Written(where, value, "default") for where, value in taken[:1] if value is not None]
    constants = [Written(where, value, "constant") for where, node in members for value in _constants(node)]
    unique = list({c.value: c for c in reversed(constants)}.values())[::-1][:MAX_CONSTANTS]
    return unique + [Written(members[0][0], None, "missing")] if members else []


def _reference(name):
    return importlib.import_module(f"solutions.{name}")


def _at(spec, name, value):
    """The reference's spec with the parameter given `value` instead of the variant's."""
    return dict(spec, **{field: {**spec[field], name: value} for field in ("init_kwargs", "kwargs")
                         if name in spec.get(field, {})})


def passes_at(value, name, checks, records, results, judge_one, skipped=()):
    """Would the learner's records pass every check against the reference run with `value` (the checks the
    variant leaves alone: as judged; `skipped` not at all)? judge_one(check, reference, record) -> passed."""
    for index, (check, record, result) in enumerate(zip(checks, records, results)):
        if index in skipped:
            continue
        if not check.spec.get("variant"):
            if not result.passed:
                return False
            continue
        try:
            seed_call(index)
            reference = PROCEDURES[check.procedure](_reference, _at(check.spec, name, value))
        except Exception:
            return False
        if not judge_one(check, reference, record):
            return False
    return True


def refused(ex_id, records):
    """Indexes of the calls that gave the parameter explicitly (the demo's trained model does) and were refused
    because the learner's code has no such parameter."""
    parameter = variants.PARAMETERS.get(ex_id)
    if parameter is None:
        return set()
    said = f"unexpected keyword argument '{parameter.name}'"
    return {i for i, record in enumerate(records)
            if record and "error" in record and said in ((record["error"] or {}).get("message") or "")}


def _compared(found, value, lang):
    if isinstance(found, (int, float)) and isinstance(value, (int, float)) and found != value:
        return tr("variant_default.smaller" if found < value else "variant_default.larger", lang)
    return tr("variant_default.other", lang)


def diagnose(ex_id, checks, records, results, source, judge_one, lang="en"):
    """(hint, whole, refused checks) for a failing file on a variant whose code has another value than the
    variant's, or no parameter where a call gives it (whole: its results are right for that value), or None."""
    value = variants.value_of(checks)
    parameter = variants.PARAMETERS.get(ex_id)
    if value is None or parameter is None or all(r.passed for r in results) or len(results) != len(checks):
        return None
    said, skipped = written(ex_id, source), refused(ex_id, records)
    if not skipped and any(found.how == "constant" and found.value == value for found in said):
        return None  # the variant's value written in as a number: it works (the checks leave the parameter out)
    for found in said:
        if found.how == "missing":
            return tr("variant_default.missing", lang, where=found.where, name=parameter.name,
                      value=parameter.written(value)), False, skipped
        if found.value == value or isinstance(found.value, bool):
            if found.how == "default":
                return None
            continue
        whole = passes_at(found.value, parameter.name, checks, records, results, judge_one, skipped)
        if found.how == "constant" and not whole:
            continue
        text = tr(f"variant_default.{found.how}", lang, where=found.where, name=parameter.name,
                  found=parameter.written(found.value), compared=_compared(found.value, value, lang),
                  value=parameter.written(value))
        return text, whole, skipped
    return None


def lacking(ex_id, source):
    """The functions and classes given the exercise's parameter (PARAMETERS: functions, then classes) that `source`
    defines with neither the argument nor **kwargs: [] for an exercise without a parameter, and for a source that
    takes it wherever it defines them (or that cannot be read: judged elsewhere)."""
    parameter = variants.PARAMETERS.get(ex_id)
    if parameter is None or not source:
        return []
    return [m for m in parameter.functions + parameter.classes if lacks_parameter(source, m, parameter.name)]


def class_variant_warning(ex_id, number, source, lang="en"):
    """The report's warning, on the published exercise (variant 0) only, that every class variant will fail this
    source, and why: it lacks the parameter (lacking), so its checks were not applicable here, while a class
    variant gives the parameter another default and calls the code without it. "" where there is nothing to say
    (a class variant's own failing checks say it: diagnosis/variant_default)."""
    try:
        if variants.check_number(number) != 0:
            return ""
    except variants.VariantError:
        return ""
    missing = lacking(ex_id, source)
    if not missing:
        return ""
    parameter = variants.PARAMETERS[ex_id]
    return tr("variant.class_will_fail", lang, ex_id=ex_id, name=parameter.name, where=", ".join(missing),
              value=parameter.written(parameter.default))
