"""Disguised copies of a Python file, to measure how well copy detection sees through them.

`disguise(source, seed)` does what a learner hiding a copy does, all at once and at random (seeded):
renames the local variables of every function, puts the top-level functions and classes (and the
methods of each class) in another order, replaces the docstrings and writes new comments, and
reformats (ast.unparse: other line breaks, spacing and quotes, then another indent width and blank
lines). The copy still compiles and defines the same names. Standard library only.

`own_value(source, ex_id, seed, rename=False)` is the copy a class with exercise variants sees most: the
one edit the Practice page asks of the copier, their own variant's value written as the parameter's default
(course/common/exercise_variants.py), in a form drawn at random (3, 3.0 or 3.), the rest of the file as it
was (rename: with its locals renamed too, as above).
"""

import ast
import random

from course.common.exercise_variants import MAX_VARIANT, PARAMETERS, variant

WORDS = ("acc", "buf", "tmp", "val", "res", "out", "item", "data", "part", "piece", "thing", "cur", "nxt", "agg")
COMMENTS = ("# compute the next step", "# shapes line up here", "# see the notes", "# TODO tidy",
            "# keep this simple", "# the main part", "# works for both dtypes", "# checked by hand")
DOCSTRINGS = ("My own version.", "Does the job.", "Written from the docstring.", "Helper.", "See above.")


class _Renamer(ast.NodeTransformer):
    """Renames the names bound inside one function (not its parameters, which callers may pass by name)."""

    def __init__(self, mapping):
        self.mapping = mapping

    def visit_Name(self, node):
        """A local variable gets its new name."""
        if node.id in self.mapping:
            node.id = self.mapping[node.id]
        return node


def _bound_locals(function):
    """The names a function assigns (targets of =, for, with, comprehensions), without its parameters."""
    params = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
    bound = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id not in params:
            bound.add(node.id)
    nonlocal_names = {n for node in ast.walk(function) if isinstance(node, (ast.Global, ast.Nonlocal))
                      for n in node.names}
    return sorted(bound - nonlocal_names)


def rename_locals(tree, rng):
    """Every function's local variables renamed to fresh names (the same name in one function alike)."""
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
        a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
    for function in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
        mapping = {}
        for name in _bound_locals(function):
            new = f"{rng.choice(WORDS)}_{rng.randrange(100)}"
            while new in taken:
                new = f"{rng.choice(WORDS)}_{rng.randrange(1000)}"
            taken.add(new)
            mapping[name] = new
        _Renamer(mapping).visit(function)
    return tree


def _load_time_names(node):
    """The module names a definition needs when it is defined (bases, decorators, default values)."""
    parts = list(node.decorator_list)
    if isinstance(node, ast.ClassDef):
        parts += node.bases + [k.value for k in node.keywords]
    else:
        parts += node.args.defaults + [d for d in node.args.kw_defaults if d is not None]
    return {n.id for part in parts for n in ast.walk(part) if isinstance(n, ast.Name)}


def _shuffled_definitions(definitions, rng):
    """The definitions in a random order in which each comes after the definitions it needs at load time."""
    names = {d.name: d for d in definitions}
    needs = {d.name: _load_time_names(d) & set(names) - {d.name} for d in definitions}
    order, placed = [], set()
    while len(order) < len(definitions):
        ready = [n for n in names if n not in placed and needs[n] <= placed]
        pick = rng.choice(sorted(ready))
        order.append(names[pick])
        placed.add(pick)
    return order


def reorder(tree, rng):
    """Top-level functions and classes, and the methods of each class, in another (valid) order."""
    is_def = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    for node in [tree, *(n for n in tree.body if isinstance(n, ast.ClassDef))]:
        slots = [i for i, stmt in enumerate(node.body) if isinstance(stmt, is_def)]
        for slot, definition in zip(slots, _shuffled_definitions([node.body[i] for i in slots], rng)):
            node.body[slot] = definition
    return tree


def new_docstrings(tree, rng):
    """Each docstring replaced by another short text (or dropped where something else follows)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                if len(node.body) > 1 and rng.random() < 0.5:
                    node.body.pop(0)
                else:
                    first.value.value = rng.choice(DOCSTRINGS)
    return tree


def reformat(text, rng):
    """Another indent width, new comment lines and blank lines, double quotes for single (code lines only)."""
    width = rng.choice((2, 3, 4, 8))
    out = []
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        indent = " " * ((len(line) - len(stripped)) // 4 * width)
        if rng.random() < 0.15 and not stripped.startswith(("elif", "else", "except", "finally", ")")):
            out.append(indent + rng.choice(COMMENTS))
        if "'" in stripped and '"' not in stripped and "\\" not in stripped:
            stripped = stripped.replace("'", '"')
        out.append(indent + stripped)
        if rng.random() < 0.1:
            out.append("")
    return "\n".join(out) + "\n"


def disguise(source, seed=0):
    """A disguised copy of source: locals renamed, definitions reordered, new docstrings and comments,
    reformatted. Deterministic for one seed."""
    rng = random.Random(seed)
    tree = ast.parse(source)
    tree = new_docstrings(reorder(rename_locals(tree, rng), rng), rng)
    text = reformat(ast.unparse(ast.fix_missing_locations(tree)), rng)
    compile(text, "<disguised>", "exec")  # a disguise that breaks the file is a bug here, not a copy
    return text


def _forms(value):
    """The ways a learner writes a value: 3, 3.0 and 3. for a whole number, 0.37 and .37 for a fraction."""
    if isinstance(value, str):
        return (repr(value),)
    if float(value).is_integer():
        return (str(int(value)), f"{int(value)}.0", f"{int(value)}.")
    text = repr(float(value))
    return (text, text[1:]) if text.startswith("0.") else (text,)


def _default_nodes(tree, ex_id):
    """The nodes a learner of another variant rewrites: the defaults of the exercise's parameter where the
    Practice page asks for them (in the functions it names and the constructors of the classes it names), else,
    in a file without the parameter, the published constant (every number equal to its default)."""
    parameter = PARAMETERS[ex_id]
    owners = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
              and n.name in parameter.functions]
    owners += [m for c in ast.walk(tree) if isinstance(c, ast.ClassDef) and c.name in parameter.classes
               for m in c.body if isinstance(m, ast.FunctionDef) and m.name == "__init__"]
    found = []
    for function in owners:
        positional = function.args.posonlyargs + function.args.args
        pairs = list(zip(positional[len(positional) - len(function.args.defaults):], function.args.defaults))
        pairs += list(zip(function.args.kwonlyargs, function.args.kw_defaults))
        found += [default for arg, default in pairs if arg.arg == parameter.name and default is not None]
    if not found:  # a file without the parameter writes the value in place of the published constant
        found = [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and type(n.value) in (int, float)
                 and n.value == parameter.default]
    return found


def own_value(source, ex_id, seed=0, rename=False):
    """A copy of source handed in by a learner of another variant of ex_id: every default of the exercise's
    parameter (in the functions and classes the Practice page names; without one, the published constant)
    replaced by that learner's value, each written in a form drawn at random; the rest as it was (rename: the
    locals of every function renamed too, laid out by ast.unparse). ValueError when there is nothing to change."""
    rng = random.Random(seed)
    parameter = PARAMETERS[ex_id]
    value = variant(ex_id, rng.randrange(1, MAX_VARIANT + 1)).kwargs()[parameter.name]
    if rename:
        source = ast.unparse(rename_locals(ast.parse(source), rng))
    nodes = _default_nodes(ast.parse(source), ex_id)
    if not nodes:
        raise ValueError(f"{ex_id}: neither a default of {parameter.name!r} nor the published "
                         f"{parameter.default!r} to change in this file")
    lines = source.splitlines(keepends=True)
    for node in sorted(nodes, key=lambda n: (n.lineno, n.col_offset), reverse=True):  # the last first: positions hold
        if node.lineno != node.end_lineno:
            raise ValueError(f"{ex_id}: the default of {parameter.name!r} on line {node.lineno} spans lines")
        line = lines[node.lineno - 1].encode()  # ast's offsets count UTF-8 bytes
        lines[node.lineno - 1] = (line[:node.col_offset] + rng.choice(_forms(value)).encode()
                                  + line[node.end_col_offset:]).decode()
    text = "".join(lines)
    compile(text, "<own value>", "exec")
    return text
