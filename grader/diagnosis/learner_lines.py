"""Where an automatic mutant's slip sits in the learner's own file: their line number, their names.

A mutant (operators.py) is the reference with one line changed, and it describes that line by the
reference's names (`target`: the name the line assigns). A learner who wrote `attn_logits` where the
reference writes `scores`, or put the lines in another order, must read their own name and line number,
never a name they did not write. This module finds the learner's statement that plays the changed line's
part, from the syntax trees alone (the learner's source is parsed here, never run):

- both functions (the mutant's, the learner's of the same qualified name) are read as a list of
  statements; each value a statement computes is described by the inputs it is computed from (the
  function's parameters by position and its `self.` attributes, those both functions read), followed
  through local names and reassignments;
- the statements whose values come from the same inputs as the changed one form a chain in each function
  (each one computed from the one before: `scores`, then `scores / sqrt(d)`); when both chains are as long
  and the changed line is the k-th of the mutant's, the learner's k-th is theirs;
- else, when the learner's function sets a variable of the changed line's name as many times as the
  mutant's does, the learner's line that sets it at the same turn;
- a returned value is the learner's one return with the same inputs, a changed test their one test with
  the same text (else the one at the same place among their tests on the same inputs);
- a line of theirs that only passes a value on (`return out`) where the changed line computes it is not
  the slip's line.

Anything else (the learner computes it inline, in a helper of their own, in more or fewer steps, or the
file does not parse) finds nothing, and the hint names no line: a wrong line would mislead more than none.
"""

import ast
import difflib
import functools
from typing import NamedTuple

from ..messages import clean_text

MAX_SOURCE = 200_000  # characters of a learner's file read; a longer one gets no line named
MAX_STATEMENTS = 400  # statements of one function followed; a longer function gets no line named (what each
# statement is computed from is kept for every statement: memory grows with the square of this)
MAX_NAME = 40  # a learner's name (or test) longer than this is not quoted


class Site(NamedTuple):
    """A line of the learner's file: its number, and the name it assigns or the test it makes (or None)."""

    line: int
    text: str | None = None


def parse_source(source):
    """The module tree of a learner's source, or None (too long, not Python, too deeply nested to parse): the one
    way the diagnosis parses what a learner wrote."""
    if not isinstance(source, str) or len(source) > MAX_SOURCE:
        return None
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


@functools.lru_cache(maxsize=32)
def _functions(source):
    """{qualified name: function node} for the top-level functions and the methods of top-level classes."""
    tree = parse_source(source)
    found = {}
    for node in tree.body if tree is not None else ():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found[f"{node.name}.{item.name}"] = item
    return found


@functools.lru_cache(maxsize=32)
def _written(source):
    """Every name the source writes: variables, parameters, attributes."""
    tree = parse_source(source)
    found = set()
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
    return frozenset(found)


@functools.lru_cache(maxsize=32)
def _self_attributes(source):
    """The attributes of self the source writes or reads anywhere (W_v for self.W_v)."""
    tree = parse_source(source)
    return frozenset(n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                     and n.value.id == "self") if tree is not None else frozenset()


class _Renamer(ast.NodeTransformer):
    def __init__(self, mapping):
        self.mapping = mapping

    def visit_Name(self, node):
        return ast.copy_location(ast.Name(self.mapping.get(node.id, node.id), node.ctx), node)


def renamed(learner_source, mutant_source, function, text, reference_source=None):
    """`text` (a name, or a short expression of names, of the mutant's function: 'd', 'X.shape[1]') with each
    variable as the learner writes it: a parameter by its position, a local by the line that plays its part
    (site), or else by the same name when their function writes it too (or their class, as an attribute of
    self); None when a variable has no such counterpart (the hint must not quote it)."""
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    theirs, ours = _functions(learner_source).get(function), _functions(mutant_source).get(function)
    if not names or theirs is None or ours is None:
        return text if names and names <= _written(learner_source) else None
    own = {n.id for n in ast.walk(theirs) if isinstance(n, ast.Name)} | set(_params(theirs)) \
        | _self_attributes(learner_source)  # W_v for the self.W_v of their module
    by_key = {key: name for name, key in _params(theirs).items()}
    mapping = {}
    for name in names:
        if name in _params(ours):
            mapping[name] = by_key.get(_params(ours)[name])
        else:
            found = site(learner_source, mutant_source, function, name, reference_source)
            mapping[name] = found.text if found is not None and found.text and found.text.isidentifier() else None
        if mapping[name] is None and name in own:
            mapping[name] = name
        if mapping[name] is None:
            return None
    try:
        return ast.unparse(_Renamer(mapping).visit(tree))
    except (ValueError, RecursionError):
        return None


def defines(source, function):
    """Does this source define the function or method ('DotProductAttention.forward')?"""
    return function in _functions(source)


class _Statement:
    """One statement of a function as data flow: what kind, the names it assigns, what it reads, and the
    node to quote from (the assigned target, the test)."""

    __slots__ = ("node", "kind", "defs", "uses", "quoted", "text", "inputs", "after")

    def __init__(self, node, kind, defs, uses, quoted):
        self.node, self.kind, self.defs, self.uses, self.quoted = node, kind, defs, uses, quoted
        self.text = ""
        self.inputs, self.after = frozenset(), set()


def _stored(target):
    """The names an assignment target writes: 'x', 'self.x', the base of `x[i] = ...`, each of a tuple."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for element in target.elts for n in _stored(element)]
    if isinstance(target, ast.Starred):
        return _stored(target.value)
    while isinstance(target, (ast.Subscript, ast.Attribute)):
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
            return [f"self.{target.attr}"]
        target = target.value
    return [target.id] if isinstance(target, ast.Name) else []


def _read(*nodes):
    """The names the expressions read: plain names, and `self.x` for an attribute of self."""
    found = set()
    for node in nodes:
        if node is None:
            continue
        for sub in ast.walk(node):
            if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Load) and isinstance(sub.value, ast.Name) \
                    and sub.value.id == "self":
                found.add(f"self.{sub.attr}")
            elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id != "self":
                found.add(sub.id)
    return found


def _statement(node):
    """The _Statement of one statement (a compound one by its header: the test, the loop's iterable)."""
    if isinstance(node, ast.Assign):
        defs = [n for t in node.targets for n in _stored(t)]
        return _Statement(node, "value", defs, _read(node.value, *node.targets), node.targets[0])
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return _Statement(node, "value", _stored(node.target), _read(node.value, node.target), node.target)
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return _Statement(node, "value", _stored(node.target), _read(node.iter), node.target)
    if isinstance(node, (ast.If, ast.While)):
        return _Statement(node, "test", [], _read(node.test), node.test)
    if isinstance(node, ast.Return):
        return _Statement(node, "return", [], _read(node.value), None)
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute):
        changed = _stored(node.value.func.value)  # dilations.append(...): it changes what it is called on
        return _Statement(node, "value" if changed else "other", changed, _read(node.value), node.value.func.value)
    return _Statement(node, "other", [], _read(node), None)


def _flatten(body, out):
    """The statements of a body in source order, compound ones followed by their own bodies (nested
    functions and classes left out)."""
    for node in body:
        if len(out) >= MAX_STATEMENTS:
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                out.append(_Statement(node, "value" if item.optional_vars else "other",
                                      _stored(item.optional_vars) if item.optional_vars else [],
                                      _read(item.context_expr), item.optional_vars))
        elif not isinstance(node, ast.Try):
            out.append(_statement(node))
        for field in ("body", "orelse", "finalbody"):
            _flatten(getattr(node, field, None) or [], out)
        for handler in getattr(node, "handlers", None) or []:
            _flatten(handler.body, out)


def _params(function):
    """{parameter name: '#0', '#1', ... by position (self left out), 'kw:<name>' for a keyword-only one}."""
    args = function.args
    positional = [a.arg for a in args.posonlyargs + args.args]
    if positional and positional[0] == "self":
        positional = positional[1:]
    params = {name: f"#{i}" for i, name in enumerate(positional)}
    params.update({a.arg: f"kw:{a.arg}" for a in args.kwonlyargs})
    return params


def _flow(function):
    """The function's statements with, for each, the inputs its values come from (parameters by position as
    '#0', '#1', keyword-only ones by name; `self.` attributes it reads before assigning) and the statements
    it is computed from, directly or not (`after`)."""
    params = _params(function)
    statements = []
    _flatten(function.body, statements)
    carried, last = {}, {}  # name -> inputs of its current value; name -> index of the statement that set it
    for index, statement in enumerate(statements):
        inputs, after = set(), set()
        for name in statement.uses:
            if name in carried:
                inputs |= carried[name]
                after |= {last[name]} | statements[last[name]].after
            elif name in params:
                inputs.add(params[name])
            elif name.startswith("self."):
                inputs.add(name)
        statement.inputs, statement.after = frozenset(inputs), after
        for name in statement.defs:
            carried[name], last[name] = statement.inputs, index
        try:
            statement.text = ast.unparse(statement.node if statement.kind != "test" else statement.quoted)
        except (ValueError, RecursionError):
            statement.text = ""
    return statements


def _key(statement, shared):
    """The inputs of a statement, with those only one of the two functions reads left out (a parameter the
    learner's function does not have, an attribute only one of them reads)."""
    return frozenset(i for i in statement.inputs if i in shared)


def _is_chain(statements, flow):
    """Is each statement computed (directly or not) from the one before it?"""
    return all(flow.index(a) in b.after for a, b in zip(statements, statements[1:]))


def _changed(mutant, reference, candidates):
    """Of the mutant's candidate statements, the one the mutation changed (its text differs from the
    reference's there), or None."""
    if len(candidates) == 1:
        return candidates[0]
    if reference is None:
        return None
    matcher = difflib.SequenceMatcher(a=[s.text for s in reference], b=[s.text for s in mutant], autojunk=False)
    changed = {j for op, _, _, j1, j2 in matcher.get_opcodes() if op != "equal" for j in range(j1, j2)}
    found = [s for s in candidates if mutant.index(s) in changed]
    return found[0] if len(found) == 1 else None


def _alias(statement):
    """Does the statement only pass a value on (`return out`, `self.weights = probs`): its value is names?"""
    value = getattr(statement.node, "value", None)
    if statement.kind not in ("value", "return") or value is None:
        return False
    parts = value.elts if isinstance(value, ast.Tuple) else [value]
    return all(isinstance(p, ast.Name) or isinstance(p, ast.Attribute) and isinstance(p.value, ast.Name)
               for p in parts)


def _found(learner_source, statement, changed):
    """The Site of the learner's statement found for the mutant's changed one, or None when theirs only
    passes on a value computed elsewhere where the changed line computes it (the slip is not on their line)."""
    if _alias(statement) and not _alias(changed):
        return None
    quoted = None if statement.kind == "return" else _quoted(learner_source, statement.quoted)
    return Site(statement.node.lineno, quoted)


def _quoted(source, node):
    """A learner's name or test as they wrote it, when it is one short line, else None."""
    if node is None:
        return None
    try:
        text = ast.get_source_segment(source, node)
    except (ValueError, IndexError):
        return None
    text = clean_text(text or "").strip()
    if not text or "\n" in text or len(text) > MAX_NAME or "`" in text:
        return None
    return text


def site(learner_source, mutant_source, function, target, reference_source=None, condition=""):
    """The learner's Site for the line a mutant changed (`target` as in operators.Mutation: a name, '' for
    what the function returns, '?condition', '?input'), or None when no line of theirs is surely that line.
    reference_source: the unmutated reference (to tell which of several lines assigning `target` changed);
    condition: the reference's changed test, as explain quotes it."""
    if target == "?input" or not isinstance(learner_source, str):
        return None
    theirs, ours = _functions(learner_source).get(function), _functions(mutant_source).get(function)
    if theirs is None or ours is None:
        return None
    mine, flow = _flow(theirs), _flow(ours)
    if len(mine) >= MAX_STATEMENTS or len(flow) >= MAX_STATEMENTS:
        return None
    reference = _functions(reference_source).get(function) if reference_source else None
    reference = _flow(reference) if reference is not None else None
    shared = {i for s in mine for i in s.inputs} & {i for s in flow for i in s.inputs}
    if target == "?condition":
        return _test_site(learner_source, mine, flow, reference, shared, condition)
    if target == "":
        changed = _changed(flow, reference, [s for s in flow if s.kind == "return"])
        if changed is None:
            return None
        same = [s for s in mine if s.kind == "return" and _key(s, shared) == _key(changed, shared)]
        return _found(learner_source, same[0], changed) if len(same) == 1 else None
    names = target.split(", ")
    changed = _changed(flow, reference, [s for s in flow if s.kind == "value" and set(names) <= set(s.defs)])
    if changed is None:
        return None
    if all(n.startswith("self.") for n in names):  # an attribute the exercise names: the learner's is the same
        same = [s for s in mine if s.kind == "value" and set(names) <= set(s.defs)]
        if len(same) == 1:
            return _found(learner_source, same[0], changed)
    key = _key(changed, shared)
    ours_chain = [s for s in flow if s.kind == "value" and _key(s, shared) == key]
    mine_chain = [s for s in mine if s.kind == "value" and _key(s, shared) == key]
    if len(ours_chain) == len(mine_chain) and _is_chain(ours_chain, flow) and _is_chain(mine_chain, mine):
        return _found(learner_source, mine_chain[ours_chain.index(changed)], changed)
    ours_named = [s for s in flow if s.kind == "value" and set(names) <= set(s.defs)]
    mine_named = [s for s in mine if s.kind == "value" and set(names) <= set(s.defs)]
    if len(ours_named) == len(mine_named):  # the learner's variable of the same name, set as many times
        return _found(learner_source, mine_named[ours_named.index(changed)], changed)
    return None


def _test_site(learner_source, mine, flow, reference, shared, condition):
    """The learner's test for a changed condition: the one with the reference's text, else the one at the
    same place among the tests on the same inputs (as many on each side), or None."""
    tests = [s for s in mine if s.kind == "test"]
    if condition:
        same = [s for s in tests if s.text == condition]
        if len(same) == 1:
            return Site(same[0].node.lineno, _quoted(learner_source, same[0].quoted))
    changed = _changed(flow, reference, [s for s in flow if s.kind == "test"])
    if changed is None:
        return None
    key = _key(changed, shared)
    ours = [s for s in flow if s.kind == "test" and _key(s, shared) == key]
    same = [s for s in tests if _key(s, shared) == key]
    if len(ours) != len(same):
        return None
    found = same[ours.index(changed)]
    return Site(found.node.lineno, _quoted(learner_source, found.quoted))
