"""A number written into the learner's code where a parameter belongs: "wrong only where kernel_size is not 3,
and your line 31 has 3 written in".

When no call of a function (or class) that gave wrong results has the value v of a scalar parameter, and
calls at v gave right ones, the learner's own source (read with `ast`, never run) is searched, inside that
function or class, for the number v itself, or v - 1 as an operand of arithmetic (`/ 2` for kernel_size - 1 at
kernel_size = 3). Found, the hint names the parameter, the value and the learner's line. The values come from
the grader's own cases; of the learner's run only which calls passed is used.
"""

import ast
import inspect

from ..text import tr
from .raising import called_name, parameter_names, reference_signatures

SITE = "constant"  # the site part of this module's mistake ids
COMMON = {0, 1, -1}  # numbers too common in code to be read as a typed-in parameter without a name beside them
MIN_FAILED = 2  # wrong calls needed before a value is read as the only one the code handles


def parameter_values(spec):
    """{name: value} of the int and float parameters of one check's call: its positional arguments, keywords
    and constructor arguments by the reference's names, and the reference's defaults where not passed."""
    arg_names, init_names = parameter_names(spec)
    values = {}
    args = spec.get("args") if isinstance(spec.get("args"), (list, tuple)) else ()
    names = list(spec.get("arg_names") or arg_names)
    for name, value in zip(names, args):
        values[name] = value
    values.update(spec.get("kwargs") or {})
    for name, value in zip(init_names, spec.get("init_args") or ()):
        values[name] = value
    values.update(spec.get("init_kwargs") or {})
    for name, default in _defaults(spec).items():
        values.setdefault(name, default)
    return {k: v for k, v in values.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def _defaults(spec):
    """The reference's literal defaults of the called function (or of the class's constructor, then forward)."""
    return {name: parameter.default for sig in reversed(reference_signatures(spec)) if sig
            for name, parameter in sig.parameters.items() if parameter.default is not inspect.Parameter.empty}


def mistake_id(function, name):
    """'auto:max_path_length:constant:kernel_size': an automatic mistake id (explain.label words it)."""
    return f"auto:{function}:{SITE}:{name}"


def candidate_values(passed, failed):
    """[(name, value)] of the parameters whose value `value` no failing call has while some passing call has it
    (every call at that value was right, every wrong call was at another) and more than half the passing calls
    have: the values the code may have written in, those most passing calls share first; [] with fewer than
    MIN_FAILED failing calls."""
    if not passed or len(failed) < MIN_FAILED:
        return []
    passed_values = [parameter_values(spec) for spec in passed]
    failed_values = [parameter_values(spec) for spec in failed]
    counts = {}
    for values in passed_values:
        for name, value in values.items():
            if all(name in v and v[name] != value for v in failed_values):
                counts[(name, value)] = counts.get((name, value), 0) + 1
    # a parameter's value the code may have written in is the one most right calls ran at (its default, say),
    # not a size a few of them happen to share
    return sorted((pair for pair, count in counts.items() if 2 * count > len(passed)), key=lambda pair: -counts[pair])


def _scopes(tree, called):
    """The function nodes the learner wrote for `called` ("softmax", "Cls.forward": every method of Cls), and the
    module's own functions they call, directly or through each other (a helper holds the number as well)."""
    cls, _, _ = called.partition(".")
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == called:
            found.append(node)
        elif isinstance(node, ast.ClassDef) and "." in called and node.name == cls:
            found += [n for n in node.body if isinstance(n, ast.FunctionDef)]
    seen = {id(node) for node in found}
    for node in found:  # grows while it is walked: helpers of helpers
        for call in ast.walk(node):
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name):
                helper = functions.get(call.func.id)
                if helper is not None and id(helper) not in seen:
                    seen.add(id(helper))
                    found.append(helper)
    return found


def _number(node):
    """The int or float a Constant (or a negated one) holds, else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _number(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    return None


def written_constant(source, called, name, value):
    """(line, number, "value"/"minus_one") of the first number in the bodies of `called` that stands for `value`
    of parameter `name`: the value itself (a common number like 1 only as a keyword `name=` or assigned to a
    variable called `name`), or value - 1 (>= 2) as an operand of + - * / //; None when there is none."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    hits = []
    for function in _scopes(tree, called):
        for statement in function.body:
            for node in ast.walk(statement):
                for child, named in _numbers_in(node, name):
                    number = _number(child)
                    if number == value and (value not in COMMON or named):
                        hits.append((child.lineno, number, "value"))
                    elif isinstance(value, int) and value - 1 >= 2 and number == value - 1 and _in_arithmetic(node, child):
                        hits.append((child.lineno, number, "minus_one"))
    hits.sort(key=lambda hit: (hit[2] != "value", hit[0]))
    return hits[0] if hits else None


def _numbers_in(node, name):
    """(number node, named) for the direct children of `node` that are numbers; named: it is passed as `name=`
    or assigned to a variable called `name`."""
    if isinstance(node, ast.keyword):
        if _number(node.value) is not None:
            yield node.value, node.arg == name
        return
    if isinstance(node, ast.Assign) and _number(node.value) is not None:
        yield node.value, any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
        return
    for child in ast.iter_child_nodes(node):
        if _number(child) is not None and not isinstance(node, (ast.UnaryOp, ast.keyword, ast.Assign)):
            yield child, False


def _in_arithmetic(parent, child):
    """Is `child` an operand of + - * / // in `parent`?"""
    return isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.Add, ast.Sub, ast.Mult, ast.Div,
                                                                      ast.FloorDiv))


def add_constant_hints(checks, results, source, lang="en"):
    """For each function or class wrong only off one value of a parameter that the learner's code has written
    in, a hint on its first wrong call and the id mistake_id(...) on every wrong call -> the results hinted.

    It runs where no known mistake explains the file: a known mistake about the same parameter (a base ignored)
    names the formula it belongs in, which says more."""
    if not isinstance(source, str):
        return []
    hinted = []
    targets = dict.fromkeys(c.target or c.procedure for c in checks)
    for target in targets:
        rows = [(c, r) for c, r in zip(checks, results) if (c.target or c.procedure) == target
                and not c.spec.get("expect_error")]
        passed = [c.spec for c, r in rows if r.passed]
        failed = [(c, r) for c, r in rows if not r.passed and r.kind == "mismatch"]
        if any(r.hint for _, r in failed):
            continue
        check, result = failed[0] if failed else (None, None)
        for name, value in candidate_values(passed, [c.spec for c, _ in failed]):
            written = written_constant(source, called_name(check), name, value)
            if written is not None:
                break
        else:
            continue
        line, number, how = written
        result.hint = tr(f"constant.{how}", lang, function=called_name(check), name=name, value=value, line=line,
                         number=number)
        for _, wrong in failed:  # explained: no known mistake is matched to these by coincidence afterwards
            wrong.mistake = mistake_id(called_name(check), name)
        hinted.append(result)
    return hinted
