"""A number written into the learner's code where a parameter belongs: "wrong only where kernel_size is not 3,
and your line 31 has 3 written in".

When no call of a function (or class) that gave wrong results (or raised) has the value v of a scalar
parameter, and calls at v gave right ones, the learner's own source (read with `ast`, never run) is searched,
inside that function or class, for the number v itself, or v - 1 as an operand of arithmetic (`/ 2` for
kernel_size - 1 at kernel_size = 3). Found, the hint names the parameter, the value and the learner's line. The
values come from the grader's own cases; of the learner's run only which calls passed is used.

Where no call is right, three facts about the learner's source and results name a number still:
- a result whose shape has a size where the reference's has the value of a parameter, and that size written
  in the learner's code (`torch.arange(2048)` where max_len belongs: "cos: expected (50, 4), got (2048, 4)");
- a call the reference makes with a parameter (`nn.LeakyReLU(negative_slope)`) made by the learner with a number
  (`F.leaky_relu(x, 0.01)`): the same operation by name, without underscores and case;
- a division by a number where the reference divides by a square root (`/ 8` for `/ math.sqrt(d)`), in code
  that takes no square root at all.
"""

import ast
import functools
import inspect

import torch

from ..text import tr
from .learner_lines import parse_source
from .mutants import SOLUTIONS_DIR
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
    tree = parse_source(source)
    if tree is None:
        return None
    hits = []
    for function in _scopes(tree, called):
        for statement in function.body:
            for node in ast.walk(statement):
                for child, named in _numbers_in(node, name):
                    number = _number(child)
                    if number == value and (value not in COMMON or named):
                        hits.append((child.lineno, number, "value", 0 if _in_arithmetic(node, child) else 1))
                    elif isinstance(value, int) and value - 1 >= 2 and number == value - 1 and _in_arithmetic(node, child):
                        hits.append((child.lineno, number, "minus_one"))
    # the value itself first, and of those one that is an operand of arithmetic (`num_heads // 2`) before one
    # passed to a call (`permute(0, 2, 1, 3)`), then by line
    hits.sort(key=lambda hit: (hit[2] != "value", hit[3] if len(hit) > 3 else 1, hit[0]))
    return hits[0][:3] if hits else None


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


def _failed(result, check):
    """Did this call fail in a way a number written in can explain: a wrong result, or an error of the learner's
    (not an expected error's check)?"""
    return not result.passed and result.kind in ("mismatch", "error") and not check.spec.get("expect_error")


def add_constant_hints(checks, results, source, lang="en", references=None, records=None):
    """For each function or class wrong only off one value of a parameter that the learner's code has written
    in, a hint on its first wrong call and the id mistake_id(...) on every wrong call -> the results hinted;
    where none is right, the source facts of the module docstring (with the references' and the learner's
    results, `references` and `records`).

    It runs where no known mistake explains the file: a known mistake about the same parameter (a base ignored)
    names the formula it belongs in, which says more."""
    if not isinstance(source, str):
        return []
    hinted = []
    targets = dict.fromkeys(c.target or c.procedure for c in checks)
    for target in targets:
        rows = [(i, c, r) for i, (c, r) in enumerate(zip(checks, results)) if (c.target or c.procedure) == target
                and not c.spec.get("expect_error")]
        passed = [c.spec for _, c, r in rows if r.passed]
        failed = [(c, r) for _, c, r in rows if _failed(r, c)]
        if not failed or any(r.hint for _, r in failed):
            continue
        check, result = failed[0]
        found = _written_value(source, check, passed, [c.spec for c, _ in failed], lang)
        if found is None and references is not None and records is not None:
            found = written_size(source, [(c, references[i], records[i]) for i, c, r in rows if _failed(r, c)], lang)
        found = found or literal_argument(source, check, lang) or literal_scale(source, check, lang)
        if found is None:
            continue
        result.hint, name = found
        for _, wrong in failed:  # explained: no known mistake is matched to these by coincidence afterwards
            wrong.mistake = mistake_id(called_name(check), name)
        hinted.append(result)
    return hinted


def _written_value(source, check, passed, failed, lang):
    """(hint, parameter) for a parameter's value every right call has and no wrong one, written in; or None."""
    for name, value in candidate_values(passed, failed):
        written = written_constant(source, called_name(check), name, value)
        if written is not None:
            line, number, how = written
            return tr(f"constant.{how}", lang, function=called_name(check), name=name, value=value, line=line,
                      number=number), name
    return None


def written_size(source, calls, lang):
    """(hint, parameter) for a result whose shape has, on an axis, a size written in the learner's code where
    the reference's has a parameter's value; calls: (check, reference results, learner record); or None."""
    for check, reference, record in calls:
        got = (record or {}).get("ok")
        if not isinstance(got, dict) or not isinstance(reference, dict):
            continue
        values = parameter_values(check.spec)
        for key, want in reference.items():
            have = got.get(key)
            if not isinstance(want, torch.Tensor) or not isinstance(have, torch.Tensor) or want.dim() != have.dim():
                continue
            if sorted(want.shape) == sorted(have.shape):
                continue  # the same sizes in another order: axes swapped or stacked the other way, not a size typed in
            for size_want, size_have in zip(want.shape, have.shape):
                names = [n for n, v in values.items() if v == size_want and size_want not in COMMON]
                if size_want == size_have or not names:
                    continue
                written = written_constant(source, called_name(check), names[0], size_have)
                if written is not None and written[2] == "value" and size_have not in COMMON:
                    return tr("constant.size", lang, function=called_name(check), result=key, want=size_want,
                              have=size_have, name=names[0], line=written[0]), names[0]
    return None


@functools.cache
def _reference_tree(module):
    """The reference module's syntax tree, or None."""
    try:
        return ast.parse((SOLUTIONS_DIR / f"{module}.py").read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None


def _learner_scopes(source, called):
    tree = parse_source(source)
    return [] if tree is None else _scopes(tree, called)


def _reference_scopes(check):
    tree = _reference_tree(check.spec.get("module", ""))
    return _scopes(tree, called_name(check)) if tree is not None else []


def _call_name(call):
    """A call's operation by name, lower case and without underscores (`F.leaky_relu`, `nn.LeakyReLU`:
    'leakyrelu'), or ''."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name.replace("_", "").lower()


def _parameter_of(node, parameters):
    """The parameter a call's argument is (`negative_slope`, `self.negative_slope`), or None."""
    if isinstance(node, ast.Name) and node.id in parameters:
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" \
            and node.attr in parameters:
        return node.attr
    return None


@functools.cache
def _signature_names(member):
    """The parameter names of a callable (a class: its constructor's), without self; None where unreadable."""
    try:
        target = member.__init__ if isinstance(member, type) else member
        return tuple(p for p in inspect.signature(target).parameters if p != "self")
    except (TypeError, ValueError):
        return None


@functools.cache
def _torch_parameters(name, method=False):
    """The parameter names of torch's operation `name`, in order: as a module's function
    (torch.nn.functional's, a torch.nn module's constructor, torch's), or as a tensor's method (`method`: the
    tensor itself not among them); () where torch has none by that name."""
    if method:
        for member, skip in ((getattr(torch.Tensor, name, None), 0), (getattr(torch, name, None), 1)):
            names = _signature_names(member) if member is not None else None
            if names:
                return names[skip:]  # torch.f(input, ...) called as input.f(...)
        return ()
    for owner in (torch.nn.functional, torch.nn, torch):
        member = getattr(owner, name, None)
        names = _signature_names(member) if member is not None else None
        if names is not None:
            return names
    return ()


MODULE_NAMES = {"torch", "F", "nn", "functional", "math", "np", "numpy"}  # what a function is called on, not a
# tensor whose method it is


def _is_method(func):
    """Is this called as a method of a value (`valid_lens.repeat_interleave`), not as a module's function?"""
    if not isinstance(func, ast.Attribute):
        return False
    owner = func.value
    while isinstance(owner, ast.Attribute):
        owner = owner.value
    return not (isinstance(owner, ast.Name) and owner.id in MODULE_NAMES)


def _arguments(call):
    """[(what it is passed as, node)] of a call's arguments: the parameter's name where torch's signature of
    the operation gives one (`F.leaky_relu(x, 0.01)`: 'negative_slope'; a tensor method's without the tensor
    itself), else its position (a method's counted as the function's, the tensor first)."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    method = _is_method(func)
    names = _torch_parameters(name, method)
    shift = 1 if method and not names else 0  # unread: input.f(a) is f(input, a), a second
    positional = [(names[i] if i < len(names) else i + shift, node) for i, node in enumerate(call.args)]
    return positional + [(k.arg, k.value) for k in call.keywords if k.arg]


def _passed_parameters(scopes):
    """{(operation name, what it is passed as): parameter} of the calls in these reference functions that are
    given one of the functions' own parameters (not self) as an argument."""
    found = {}
    parameters = {a.arg for function in scopes for a in function.args.args + function.args.kwonlyargs} - {"self"}
    for function in scopes:  # a class's methods: self.num_heads is the constructor's parameter
        for call in ast.walk(function):
            if isinstance(call, ast.Call) and _call_name(call):
                for where, arg in _arguments(call):
                    name = _parameter_of(arg, parameters)
                    if name:
                        found.setdefault((_call_name(call), where), name)
    return found


def literal_argument(source, check, lang):
    """(hint, parameter) for a call of the learner's given a number where the reference's call of the same
    operation is given a parameter, as the same argument; or None."""
    passed = _passed_parameters(_reference_scopes(check))
    for function in _learner_scopes(source, called_name(check)):
        for call in ast.walk(function):
            if not isinstance(call, ast.Call):
                continue
            for where, arg in _arguments(call):
                name = passed.get((_call_name(call), where))
                if name and _number(arg) is not None and _number(arg) not in COMMON:
                    return tr("constant.argument", lang, function=called_name(check), line=arg.lineno,
                              number=_number(arg), call=ast.unparse(call.func), name=name), name
    return None


def _is_sqrt(node):
    """Is this expression a square root (`math.sqrt(...)`, `torch.sqrt(...)`, `... ** 0.5`)?"""
    if isinstance(node, ast.Call) and _call_name(node) in ("sqrt", "rsqrt"):
        return True
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and _number(node.right) == 0.5


def _divides_by_sqrt(scopes):
    return any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div) and _is_sqrt(n.right)
               for function in scopes for n in ast.walk(function))


def literal_scale(source, check, lang):
    """(hint, 'scale') for a division by a number (or by a product with one) in learner code that takes no
    square root where the reference divides by one; or None."""
    if not _divides_by_sqrt(_reference_scopes(check)):
        return None
    scopes = _learner_scopes(source, called_name(check))
    nodes = [n for function in scopes for n in ast.walk(function)]
    if any(_is_sqrt(n) for n in nodes):
        return None
    for node in nodes:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            divisor = node.right
            factors = [divisor.left, divisor.right] if isinstance(divisor, ast.BinOp) \
                and isinstance(divisor.op, ast.Mult) else [divisor]
            numbers = [f for f in factors if _number(f) is not None and _number(f) not in COMMON | {2}]
            if numbers:
                return tr("constant.scale", lang, function=called_name(check), line=numbers[0].lineno,
                          number=_number(numbers[0])), "scale"
    return None
