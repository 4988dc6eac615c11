"""Mutation operators: mistaken variants of a reference file, derived from its syntax tree.

`mutations(source)` yields Mutation(source, op, function, target, fields): the
reference with one place changed the way learners get it wrong (a comparison off
by one, a constant scaled, an axis changed, a step dropped, moved or swapped, the
old state returned), and what was changed in words: the mutation operator `op`,
the function or method it lives in, and what the changed line computes
(`target`: the name it assigns, or "" for a returned value or a condition).
No reference code is kept in the description; only its own names.
"""

import ast
import copy
from dataclasses import dataclass, field

from ..variants import PARAMETERS

DIM_VALUES = (-1, 0, 1, 2)
SHAPE_INDICES = (0, 1, 2, -1)
PERMUTERS = {"permute", "transpose"}
JOINERS = {"cat", "stack", "concat"}
UNWRAPPABLE = {"tanh", "relu", "sigmoid", "dropout", "sqrt", "exp", "ln"}
REDUCTIONS = {"amax", "max", "amin", "min", "sum", "mean", "logsumexp"}
SWAPPABLE = {"reshape", "view", "expand", "bmm", "matmul", "masked_fill", "where", "repeat"}
DROPPABLE_METHODS = {"abs", "clamp", "clamp_min", "clamp_max", "neg", "t"}  # x.abs() -> x: a step left out
FLIPPED_COMPARISONS = {ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE}


@dataclass(frozen=True)
class Mutation:
    source: str  # the whole mutated file
    op: str  # the operator, a key under grader.mutant.<op>
    function: str  # "masked_softmax", "PositionalEncoding.__init__"
    target: str  # the name the changed line assigns ("" when it returns or tests a value)
    fields: tuple = field(default=())  # (name, value) pairs for the description
    condition: str = ""  # the test a changed condition belongs to, when it is short and reads only names


def _name_of(node):
    """'torch.cat' / 'self.dropout' / 'tanh' for a call's function, else ''."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _name_of(node.value)
        return f"{inner}.{node.attr}" if inner else node.attr
    return ""


def _short(name):
    return name.rsplit(".", 1)[-1]


def _int_literal(node):
    """The int a node spells (3, -1), else None."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _target_of(stmt):
    """The name a statement assigns, '' for a return, 'loop'/'condition' for while/if tests."""
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target
        while isinstance(target, (ast.Subscript, ast.Attribute)):
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                return f"self.{target.attr}"
            target = target.value
        if isinstance(target, ast.Tuple):
            return ", ".join(_name_of(e) for e in target.elts)
        return _name_of(target)
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute):
        return _name_of(stmt.value.func.value)  # dilations.append(...): what it changes
    if isinstance(stmt, (ast.While, ast.If)):
        return "?condition"
    return ""


def _candidates(node, params, locals_=(), modules=()):
    """(op, fields, new node) for one node: each a one-place change (modules: the function's self.* callees
    with their argument counts)."""
    out = []
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        swap = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
        if type(node.ops[0]) in swap:
            new = copy.deepcopy(node)
            new.ops = [swap[type(node.ops[0])]()]
            strict = isinstance(node.ops[0], (ast.Lt, ast.Gt))
            out.append(("cmp_includes" if strict else "cmp_excludes", (), new))
            flipped = copy.deepcopy(node)
            flipped.ops = [FLIPPED_COMPARISONS[type(node.ops[0])]()]
            out.append(("cmp_reversed", (), flipped))
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        value = node.value
        if abs(value) >= 100:
            out.append(("const_smaller", (("factor", 10),), ast.Constant(type(value)(value / 10))))
            out.append(("const_larger", (("factor", 10),), ast.Constant(type(value)(value * 10))))
        elif value == 2:
            out.append(("const_smaller", (("factor", 2),), ast.Constant(1)))
            out.append(("const_larger", (("factor", 2),), ast.Constant(4)))
        if isinstance(value, int) and value in (0, 1, 2):
            out.append(("const_off_by_one", (("value", value),), ast.Constant(value + 1)))
            if value > 0:
                out.append(("const_off_by_one", (("value", value),), ast.Constant(value - 1)))
    if isinstance(node, ast.Call):
        name = _name_of(node.func)
        short = _short(name)
        out += _call_candidates(node, name, short, params, locals_)
        out += _module_swaps(node, name, modules) + _applied_again(node, name)
    if isinstance(node, ast.BinOp):
        out += _binop_candidates(node)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and not isinstance(node.operand, ast.Constant):
        out.append(("minus_dropped", (), node.operand))
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape" \
            and _int_literal(node.slice) is not None and isinstance(node.value.value, ast.Name):
        owner, index = node.value.value.id, _int_literal(node.slice)
        for other in [owner] + [p for p in params if p != owner]:
            for i in SHAPE_INDICES:
                if (other, i) != (owner, index):
                    new = ast.Subscript(ast.Attribute(ast.Name(other, ast.Load()), "shape", ast.Load()),
                                        ast.Constant(i), ast.Load())
                    out.append(("size_from", (("size", f"{other}.shape[{i}]"),), new))
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple) \
            and any(isinstance(e, ast.Slice) and e.upper is not None and e.lower is None for e in node.slice.elts):
        new = copy.deepcopy(node)
        new.slice.elts = [ast.Slice() if isinstance(e, ast.Slice) and e.upper is not None and e.lower is None else e
                          for e in new.slice.elts]
        out.append(("slice_dropped", (), new))
    if isinstance(node, ast.Slice) and isinstance(node.lower, (ast.Name, ast.Attribute)) and node.upper is not None:
        upper = node.upper
        if isinstance(upper, ast.BinOp) and isinstance(upper.op, ast.Add) and ast.dump(upper.left) == ast.dump(node.lower):
            upper = upper.right  # x[offset : offset + T] -> x[:T]
        out.append(("slice_from_zero", (("name", _short(_name_of(node.lower))),), ast.Slice(None, upper, node.step)))
    return out


def _call_candidates(node, name, short, params, locals_):
    out = []
    if name in ("math.floor", "math.ceil", "floor", "ceil", "torch.floor", "torch.ceil"):
        other = name.replace("floor", "CEIL").replace("ceil", "floor").replace("CEIL", "ceil")
        new = copy.deepcopy(node)
        new.func = ast.parse(other, mode="eval").body
        out.append(("rounds_up" if "ceil" in other else "rounds_down", (), new))
    if short == "sqrt" and len(node.args) == 1:
        out.append(("sqrt_dropped", (), node.args[0]))
        out.append(("sqrt_doubled", (), ast.BinOp(copy.deepcopy(node), ast.Mult(), ast.Constant(2))))
    if short in JOINERS and node.args and isinstance(node.args[0], (ast.Tuple, ast.List)) and len(node.args[0].elts) > 1:
        new = copy.deepcopy(node)
        new.args[0].elts = list(reversed(new.args[0].elts))
        out.append(("joined_reversed", (("call", short),), new))
    if short in JOINERS and node.args and isinstance(node.args[0], (ast.Tuple, ast.List)) and len(node.args[0].elts) > 2:
        for i in range(len(node.args[0].elts) - 1):
            new = copy.deepcopy(node)
            new.args[0].elts[i], new.args[0].elts[i + 1] = new.args[0].elts[i + 1], new.args[0].elts[i]
            out.append(("joined_swapped", (("call", short),), new))
    if short in ("sum", "mean") and isinstance(node.func, ast.Attribute):
        new = copy.deepcopy(node)
        new.func.attr = "mean" if short == "sum" else "sum"
        out.append(("mean_for_sum" if short == "sum" else "sum_for_mean", (), new))
    out += _moved_to_other(node)
    if short == "repeat_interleave":
        out += _tile_instead(node)
    if short == "len":
        out.append(("one_more", (), ast.BinOp(copy.deepcopy(node), ast.Add(), ast.Constant(1))))
    if short in ("range", "arange"):
        for i, arg in enumerate(node.args[:2]):
            if isinstance(arg, (ast.Name, ast.Attribute, ast.BinOp)):
                for op, kind in ((ast.Add(), "range_one_more"), (ast.Sub(), "range_one_less")):
                    new = copy.deepcopy(node)
                    new.args[i] = ast.BinOp(new.args[i], op, ast.Constant(1))
                    out.append((kind, (), new))
    if short in PERMUTERS and isinstance(node.func, ast.Attribute):
        out.append(("permute_dropped", (("call", short),), node.func.value))
        if short == "permute" and len(node.args) > 2:
            for i in range(len(node.args) - 1):
                new = copy.deepcopy(node)
                new.args[i], new.args[i + 1] = new.args[i + 1], new.args[i]
                out.append(("permute_reordered", (("call", short),), new))
    for i, kw in enumerate(node.keywords):
        if kw.arg == "dim" and isinstance(kw.value, (ast.Constant, ast.UnaryOp, ast.Name)):
            current = kw.value.id if isinstance(kw.value, ast.Name) else ast.literal_eval(kw.value)
            for value in DIM_VALUES:
                if value != current:
                    new = copy.deepcopy(node)
                    new.keywords[i].value = ast.Constant(value)
                    out.append(("dim_changed", (("call", short), ("dim", value)), new))
    if short in ("unsqueeze", "squeeze", "amax", "sum", "softmax", "masked_softmax") and node.args:
        pos = 0 if isinstance(node.func, ast.Attribute) and short != "softmax" else 1
        if len(node.args) > pos and isinstance(node.args[pos], (ast.Constant, ast.UnaryOp)):
            current = ast.literal_eval(node.args[pos])
            for value in DIM_VALUES:
                if value != current and isinstance(current, int):
                    new = copy.deepcopy(node)
                    new.args[pos] = ast.Constant(value)
                    out.append(("dim_changed", (("call", short), ("dim", value)), new))
    if (short in UNWRAPPABLE or name.startswith("self.")) and len(node.args) == 1 and not node.keywords \
            and short not in ("sqrt",):
        out.append(("call_dropped", (("call", name.replace("self.", "")),), node.args[0]))
    if (short in UNWRAPPABLE or name.startswith("self.")) and len(node.args) == 1 and not node.keywords \
            and isinstance(node.args[0], ast.BinOp) and isinstance(node.args[0].op, ast.Add):
        left, right = node.args[0].left, node.args[0].right  # dropout(X + P) -> X + dropout(P), dropout(X) + P
        for inner, outer, first in ((right, left, False), (left, right, True)):
            wrapped = ast.Call(copy.deepcopy(node.func), [copy.deepcopy(inner)], [])
            pair = (wrapped, copy.deepcopy(outer)) if first else (copy.deepcopy(outer), wrapped)
            out.append(("applied_to_term", (("call", name.replace("self.", "")),), ast.BinOp(pair[0], ast.Add(), pair[1])))
    if len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Call) \
            and len(node.args[0].args) == 1 and not node.args[0].keywords and _name_of(node.args[0].func):
        inner = node.args[0]  # f(g(x)) -> g(f(x)): two steps in the opposite order
        swapped = ast.Call(inner.func, [ast.Call(node.func, [inner.args[0]], [])], [])
        out.append(("order_swapped", (("outer", _short(name)), ("inner", _short(_name_of(inner.func)))), swapped))
    if short == "masked_fill" and isinstance(node.func, ast.Attribute):
        out.append(("mask_dropped", (), node.func.value))
        if len(node.args) == 2 and "inf" in ast.unparse(node.args[1]):
            new = copy.deepcopy(node)
            new.args[1] = ast.Constant(0.0)
            out.append(("filled_with_zero", (), new))
            new = copy.deepcopy(node)
            new.args[1] = ast.Constant(-1e9)
            out.append(("filled_finite", (), new))
    if short in DROPPABLE_METHODS and isinstance(node.func, ast.Attribute) and len(node.args) <= 1 \
            and _name_of(node.func.value) not in ("torch", "math"):
        out.append(("call_dropped", (("call", short),), node.func.value))
    if short == "where" and len(node.args) == 3:
        for kept in node.args[1:]:
            out.append(("guard_dropped", (), kept))
    for i, kw in enumerate(node.keywords):
        if kw.arg == "keepdim":
            new = copy.deepcopy(node)
            del new.keywords[i]
            out.append(("keepdim_dropped", (("call", short),), new))
    if short in REDUCTIONS and (node.keywords or node.args[(0 if isinstance(node.func, ast.Attribute) else 1):]):
        new = copy.deepcopy(node)
        new.keywords = []
        new.args = [] if isinstance(node.func, ast.Attribute) else new.args[:1]
        out.append(("reduced_all", (("call", short),), new))
    if isinstance(node.func, ast.Name) and len(node.args) >= 3 and not node.keywords:
        new = copy.deepcopy(node)
        new.args = new.args[:-1]
        dropped = _name_of(node.args[-1])  # 'w', 'self.w': said by name; an expression is not
        out.append(("arg_dropped_name", (("call", short), ("arg", dropped.removeprefix("self."))), new) if dropped
                   else ("arg_dropped", (("call", short),), new))
    if short in SWAPPABLE:
        for i in range(len(node.args) - 1):
            a, b = node.args[i], node.args[i + 1]
            if not isinstance(a, ast.Constant) and not isinstance(b, ast.Constant) and ast.dump(a) != ast.dump(b):
                new = copy.deepcopy(node)
                new.args[i], new.args[i + 1] = new.args[i + 1], new.args[i]
                out.append(("args_swapped", (("call", short),), new))
    for i, arg in enumerate(node.args if isinstance(node.func, ast.Name) or name.startswith("self.") else ()):
        if isinstance(arg, ast.Name) and arg.id in locals_:
            for other in locals_:
                if other != arg.id:
                    new = copy.deepcopy(node)
                    new.args[i] = ast.Name(other, ast.Load())
                    out.append(("name_swapped", (("call", name.replace("self.", "")), ("used", other),
                                                 ("meant", arg.id)), new))
    return out


ACTIVATIONS = {"relu", "tanh", "sigmoid", "gelu", "activation"}  # self.relu(...), torch.tanh(...): a non-linearity


def _self_modules(fn):
    """(name, argument count) of every self.<module>(...) call in a function, in order, once each."""
    found = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and _name_of(node.func).startswith("self.") and _name_of(node.func).count(".") == 1 \
                and not node.keywords and (_name_of(node.func), len(node.args)) not in found:
            found.append((_name_of(node.func), len(node.args)))
    return found


def _module_swaps(node, name, modules):
    """self.W_v(x) -> self.W_k(x): another of the function's modules taking as many arguments (a copy-paste)."""
    if not name.startswith("self.") or node.keywords:
        return []
    out = []
    for other, count in modules:
        if other != name and count == len(node.args):
            new = copy.deepcopy(node)
            new.func = ast.parse(other, mode="eval").body
            out.append(("module_swapped", (("used", other.removeprefix("self.")),
                                           ("meant", name.removeprefix("self."))), new))
    return out


def _applied_again(node, name):
    """self.dense2(self.relu(h)) -> self.relu(self.dense2(self.relu(h))): a non-linearity after the last layer too."""
    if not (name.startswith("self.") and len(node.args) == 1 and isinstance(node.args[0], ast.Call)):
        return []
    inner = node.args[0]
    activation = _name_of(inner.func)
    if _short(activation) not in ACTIVATIONS or len(inner.args) != 1:
        return []
    again = ast.Call(copy.deepcopy(inner.func), [copy.deepcopy(node)], copy.deepcopy(inner.keywords))
    return [("applied_again", (("call", activation.removeprefix("self.")), ("outer", name.removeprefix("self."))),
             again)]


def _moved_to_other(node):
    """f(self.g(a), b) -> f(a, self.g(b)): a one-argument step (dropout) applied to the other operand."""
    out = []
    for i, arg in enumerate(node.args):
        if isinstance(arg, ast.Call) and _name_of(arg.func).startswith("self.") and len(arg.args) == 1 \
                and not arg.keywords:
            for j, other in enumerate(node.args):
                if j != i and not isinstance(other, ast.Constant):
                    new = copy.deepcopy(node)
                    new.args[i] = copy.deepcopy(arg.args[0])
                    new.args[j] = ast.Call(copy.deepcopy(arg.func), [copy.deepcopy(other)], [])
                    out.append(("moved_to_other", (("call", _short(_name_of(arg.func))),), new))
            if isinstance(node.func, (ast.Name, ast.Attribute)) and not _name_of(node.func).startswith("self."):
                inside = copy.deepcopy(node)  # f(self.g(a), b) -> self.g(f(a, b)): on the result, not the argument
                inside.args[i] = copy.deepcopy(arg.args[0])
                out.append(("moved_outside", (("call", _short(_name_of(arg.func))), ("outer", _short(_name_of(node.func)))),
                            ast.Call(copy.deepcopy(arg.func), [inside], [])))
    return out


def _tile_instead(node):
    """repeat_interleave(x, n, dim=d) -> the whole of x repeated n times (a, b, a, b instead of a, a, b, b)."""
    if isinstance(node.func, ast.Attribute) and _name_of(node.func) != "torch.repeat_interleave":
        tensor, rest = node.func.value, node.args
    else:
        tensor, rest = (node.args[0], node.args[1:]) if node.args else (None, [])
    if tensor is None or not rest:
        return []
    dim = next((kw.value for kw in node.keywords if kw.arg == "dim"), rest[1] if len(rest) > 1 else ast.Constant(0))
    tiled = ast.Call(ast.parse("torch.cat", mode="eval").body,
                     [ast.BinOp(ast.List([copy.deepcopy(tensor)], ast.Load()), ast.Mult(), copy.deepcopy(rest[0]))],
                     [ast.keyword("dim", copy.deepcopy(dim))])
    return [("tiled_instead", (), tiled)]


def _binop_candidates(node):
    out = []
    flips = {ast.Add: (ast.Sub, "sign_flipped"), ast.Sub: (ast.Add, "sign_flipped"),
             ast.Div: (ast.Mult, "multiplied_instead"), ast.Mult: (ast.Div, "divided_instead")}
    if type(node.op) in flips and not (isinstance(node.right, ast.Constant) and node.right.value in (1, 2)):
        other, op = flips[type(node.op)]
        out.append((op, (), ast.BinOp(copy.deepcopy(node.left), other(), copy.deepcopy(node.right))))
    if isinstance(node.op, (ast.BitAnd, ast.BitOr)):
        for keep in (node.left, node.right):
            out.append(("part_dropped", (), keep))
    kinds = {ast.Add: "term", ast.Sub: "term", ast.Mult: "factor", ast.Div: "divisor", ast.Pow: "power"}
    kind = kinds.get(type(node.op))
    if kind is None:
        return out
    if kind == "divisor":
        out.append(("division_dropped", (), node.left))
    elif kind == "power":
        out.append(("power_dropped", (), node.left))
    else:
        for keep, gone in ((node.left, node.right), (node.right, node.left)):
            if isinstance(gone, ast.Constant) and gone.value == 1 and kind == "term":
                out.append(("one_dropped", (), keep))
            elif not isinstance(keep, ast.Constant):
                out.append((f"{kind}_dropped", (("name", _short(_name_of(gone))),) if _name_of(gone) else (), keep))
    if isinstance(node.op, (ast.Sub, ast.Div)) and not isinstance(node.left, ast.Constant):
        out.append(("operands_swapped", (), ast.BinOp(copy.deepcopy(node.right), node.op, copy.deepcopy(node.left))))
    if isinstance(node.op, ast.Mult) and isinstance(node.right, ast.Name):  # the width squared twice
        out.append(("factor_squared", (("name", node.right.id),),
                    ast.BinOp(node.left, ast.Mult(), ast.BinOp(node.right, ast.Mult(), node.right))))
    if isinstance(node.op, ast.Add):  # dropout(Y) + X -> Y + dropout(X): the step on the other term
        for side, other in ((node.left, node.right), (node.right, node.left)):
            if isinstance(side, ast.Call) and len(side.args) == 1 and not side.keywords \
                    and _name_of(side.func).startswith("self.") and not isinstance(other, ast.Constant):
                moved = ast.Call(copy.deepcopy(side.func), [copy.deepcopy(other)], [])
                pair = (side.args[0], moved) if side is node.left else (moved, side.args[0])
                out.append(("moved_to_term", (("call", _short(_name_of(side.func))),),
                            ast.BinOp(copy.deepcopy(pair[0]), ast.Add(), copy.deepcopy(pair[1]))))
    if isinstance(node.op, ast.Add) and isinstance(node.left, ast.Call) and len(node.left.args) == 1 \
            and _short(_name_of(node.left.func)) in UNWRAPPABLE:  # g(a) + b -> g(a + b): dropout after the residual
        moved = ast.Call(node.left.func, [ast.BinOp(node.left.args[0], ast.Add(), node.right)], [])
        out.append(("applied_after_sum", (("call", _short(_name_of(node.left.func))),), moved))
    return out


def _statement_moves(fn):
    """`v = x.masked_fill(m, -inf)` then `f(v, ...)` -> `v = x` and `f(v, ...).masked_fill(m, 0.0)`: a step
    moved after the next one (the mask after the softmax)."""
    body = fn.body
    for i, stmt in enumerate(body[:-1]):
        if not (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call)
                and isinstance(stmt.value.func, ast.Attribute) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)):
            continue
        var, call = stmt.targets[0].id, stmt.value
        nxt = body[i + 1]
        value = getattr(nxt, "value", None)
        if not (isinstance(value, ast.Call) and value.args and isinstance(value.args[0], ast.Name)
                and value.args[0].id == var):
            continue
        args = [ast.Constant(0.0) if "inf" in ast.unparse(a) else a for a in call.args]
        yield i, call.func.attr, _name_of(value.func), call.func.value, \
            ast.Call(ast.Attribute(copy.deepcopy(value), call.func.attr, ast.Load()), args, call.keywords)


def _functions(tree):
    """(qualified name, FunctionDef) for every function and method."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            yield node.name, node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    yield f"{node.name}.{item.name}", item


def _tensor_names(fn, params):
    """Names a learner may mix up inside one function: its parameters and the single names it assigns."""
    names = [p for p in params if p not in ("dropout", "num_heads", "i")]
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if node.targets[0].id not in names:
                names.append(node.targets[0].id)
    return names


def _params(fn):
    return [a.arg for a in fn.args.args if a.arg != "self"]


def _statements(fn):
    """Every statement in a function's body, nested ones too, with the statement itself."""
    for node in ast.walk(fn):
        if isinstance(node, ast.stmt) and node is not fn:
            yield node


def _expressions(stmt):
    """The expression nodes a statement owns (not those of nested statements), in a fixed order."""
    parts = []
    for name, value in ast.iter_fields(stmt):
        if name in ("body", "orelse", "finalbody", "handlers"):
            continue
        if name == "targets" or (name == "target" and not isinstance(stmt, ast.AugAssign)):
            # a subscripted target's slices can mutate (P[0, :, 0::2]), not the name itself
            values = value if isinstance(value, list) else [value]
            parts += [n for v in values for n in ast.walk(v) if isinstance(n, ast.expr) and n is not v]
            continue
        values = value if isinstance(value, list) else [value]
        parts += [n for v in values if isinstance(v, ast.AST) for n in ast.walk(v) if isinstance(n, ast.expr)]
    return parts


def _is_docstring(stmt):
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _replace(tree, old, new):
    """tree with the node `old` (by identity) replaced by `new`, in a deep copy."""
    memo = {}
    copied = copy.deepcopy(tree, memo)
    target = memo[id(old)]
    for parent in ast.walk(copied):
        for name, value in ast.iter_fields(parent):
            if value is target:
                setattr(parent, name, copy.deepcopy(new))
                return copied
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if item is target:
                        value[i] = copy.deepcopy(new)
                        return copied
    return None


def _unparse(tree):
    try:
        return ast.unparse(ast.fix_missing_locations(tree))
    except Exception:  # an operator built something unparseable: skip it
        return None


VARIANT_DEFAULTS = {p.name for p in PARAMETERS.values()}  # published constants that became parameters


def _default_mutations(tree):
    """(op, fields, text, function, target) for the constant default of a variant parameter (grader/variants.py:
    ex06's and ex09's base were a constant in the line that uses them, and are still mistyped like one): the
    same slip in every default of that parameter at once (a learner writes their value once per constructor),
    named at the first function that has it, at its first statement that reads it."""
    sites = {}  # parameter -> [(qualname, fn, index in fn.args.defaults)]
    for qualname, fn in _functions(tree):
        args = fn.args.args[len(fn.args.args) - len(fn.args.defaults):]
        for index, (arg, default) in enumerate(zip(args, fn.args.defaults)):
            if arg.arg in VARIANT_DEFAULTS and isinstance(default, ast.Constant):
                sites.setdefault(arg.arg, []).append((qualname, fn, index))
    for name, found in sites.items():
        qualname, fn, index = found[0]
        user = next((stmt for stmt in _statements(fn) if not _is_docstring(stmt) and any(
            isinstance(n, ast.Name) and n.id == name for n in _expressions(stmt))), None)
        for op, fields, new in _candidates(fn.args.defaults[index], set()):
            memo = {}
            copied = copy.deepcopy(tree, memo)
            for _, other, i in found:
                memo[id(other)].args.defaults[i] = copy.deepcopy(new)
            text = _unparse(copied)
            if text:
                yield op, tuple(fields), text, qualname, _target_of(user) if user is not None else ""


CONDITION_CHARS = 40  # a test longer than this is not quoted in a hint


def _condition(test):
    """The test's text when it is short and made of names, attributes, constants and comparisons only (it
    restates the docstring, such as `n == 1` or `T > self.max_len`), else ''."""
    allowed = (ast.Compare, ast.BoolOp, ast.Name, ast.Attribute, ast.Constant, ast.cmpop, ast.boolop,
               ast.expr_context, ast.UnaryOp, ast.unaryop)
    text = ast.unparse(test)
    return text if len(text) <= CONDITION_CHARS and all(isinstance(n, allowed) for n in ast.walk(test)) else ""


def _return_dropped(tree, stmt, qualname, seen):
    """`if test: return value` left out (a special case missing, or tested only after a general rule)."""
    text = _unparse(_replace(tree, stmt, ast.Pass()))
    if text and text not in seen:
        seen.add(text)
        yield Mutation(text, "early_return_dropped", qualname, "?condition", (), _condition(stmt.test))


def _validation_slips(tree, stmt, qualname, seen):
    """An argument check that raises: left out, or its comparison off at the boundary."""
    changes = [("raise_dropped", (), stmt, stmt.orelse[0] if len(stmt.orelse) == 1 else ast.Pass())]
    for node in ast.walk(stmt.test):
        if isinstance(node, ast.Compare):
            changes += [(op, fields, node, new) for op, fields, new in _candidates(node, ())
                        if op in ("cmp_includes", "cmp_excludes")]
    for op, fields, old, new in changes:
        text = _unparse(_replace(tree, old, new))
        if text and text not in seen:
            seen.add(text)
            yield Mutation(text, op, qualname, "?condition", tuple(fields), _condition(stmt.test))


def _tests_reordered(tree, fn, qualname, seen):
    """Two neighbouring `if ...: return ...` tests in the other order (an early return taken too soon)."""
    body = fn.body
    for i in range(len(body) - 1):
        first, second = body[i], body[i + 1]
        if all(isinstance(s, ast.If) and not s.orelse and isinstance(s.body[-1], ast.Return) for s in (first, second)):
            swapped = _replace(tree, first, second)
            copied_fn = dict(_functions(swapped))[qualname]
            text = _unparse(_replace(swapped, copied_fn.body[i + 1], first))
            if text and text not in seen:
                seen.add(text)
                yield Mutation(text, "tests_reordered", qualname, "?condition", ())


def mutations(source):
    """Every one-place mistaken variant of the reference `source` (see the module docstring)."""
    tree = ast.parse(source)
    seen = {_unparse(copy.deepcopy(tree))}
    for qualname, fn in _functions(tree):
        params = _params(fn)
        locals_ = _tensor_names(fn, params)
        modules = _self_modules(fn)
        for stmt in _statements(fn):
            if _is_docstring(stmt) or isinstance(stmt, ast.Raise):
                continue
            if isinstance(stmt, ast.If) and any(isinstance(s, ast.Raise) for s in stmt.body):
                yield from _validation_slips(tree, stmt, qualname, seen)
                continue
            if isinstance(stmt, ast.If) and not stmt.orelse and len(stmt.body) == 1 \
                    and isinstance(stmt.body[0], ast.Return):
                yield from _return_dropped(tree, stmt, qualname, seen)
            target = _target_of(stmt)
            for node in _expressions(stmt):
                for op, fields, new in _candidates(node, params, locals_, modules):
                    text = _unparse(_replace(tree, node, new))
                    if text and text not in seen:
                        seen.add(text)
                        yield Mutation(text, op, qualname, target, tuple(fields))
            if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Tuple) \
                    and isinstance(stmt.value, ast.Tuple) and len(stmt.value.elts) == 2:
                swapped = ast.Tuple(list(reversed(stmt.value.elts)), ast.Load())
                text = _unparse(_replace(tree, stmt.value, swapped))
                if text and text not in seen:
                    seen.add(text)
                    yield Mutation(text, "pair_swapped", qualname, target, ())
            if isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Tuple):
                for i, element in enumerate(stmt.value.elts):
                    if isinstance(element, (ast.Tuple, ast.Name)) and not (
                            isinstance(element, ast.Name) and element.id in params):
                        for param in params:
                            text = _unparse(_replace(tree, element, ast.Name(param, ast.Load())))
                            if text and text not in seen:
                                seen.add(text)
                                yield Mutation(text, "old_returned", qualname, "", (("param", param),))
        yield from _tests_reordered(tree, fn, qualname, seen)
        for i, method, callee, receiver, moved in _statement_moves(fn):
            stmt = fn.body[i]
            nxt = fn.body[i + 1]
            step1 = _replace(tree, stmt.value, receiver)
            if step1 is None:
                continue
            # find the copy of nxt.value in step1 by position in its function
            copied_fn = dict(_functions(step1))[qualname]
            text = _unparse(_replace(step1, copied_fn.body[i + 1].value, moved))
            if text and text not in seen:
                seen.add(text)
                yield Mutation(text, "moved_after", qualname, _target_of(stmt),
                               (("call", method), ("after", _short(callee))))
            del nxt

    for op, fields, text, function, target in _default_mutations(tree):
        if text not in seen:
            seen.add(text)
            yield Mutation(text, op, function, target, fields)
