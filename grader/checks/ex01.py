"""Checks and known mistakes for exercise 1 (softmax, masked softmax)."""

import ast

import torch

from .base import (Check, Mistake, call_desc, generator, number_checks, randn, unchanged_input, weights_property,
                   with_parameter)

MODULE = "ex01_softmax"


def _softmax(name, X, dim, seed, precision_note=False):
    spec = {"module": MODULE, "fn": "softmax", "args": [X], "arg_names": ["X"],
            "kwargs": {"dim": dim}, "grad": ("X",), "grad_seed": seed, "watch_inputs": ("X",)}
    return Check(name, call_desc("softmax", ["X", "dim"], [X, dim]), "call_without_builtin_softmax",
                 spec, properties=(_no_softmax_op, unchanged_input("X")), target="softmax",
                 precision_note=precision_note)


def _mixed_rows(g):
    """Rows near 1e4, ordinary rows and rows near -1e4 in one batch: a softmax shifted by one maximum for
    the whole tensor (X.max()) turns the ordinary rows into 0/0."""
    offsets = torch.tensor([1e4, 0.0, -1e4, 1e4 - 3.0], dtype=torch.float64)[:, None]  # (4, 1)
    return (offsets + randn(g, 4, 5, dtype=torch.float64)).float()  # (4, 5)


def _masked(name, X, valid_lens, seed):
    spec = {"module": MODULE, "fn": "masked_softmax", "args": [X, valid_lens],
            "arg_names": ["X", "valid_lens"], "grad": ("X",), "grad_seed": seed, "watch_inputs": ("X",)}
    return Check(name, call_desc("masked_softmax", ["X", "valid_lens"], [X, valid_lens]),
                 "call_without_builtin_softmax", spec,
                 properties=(_no_softmax_op, weights_property("output", 1), unchanged_input("X")),
                 target="masked_softmax", weights=("output",))  # its output is attention weights: diffed when wrong


def _no_softmax_op(results, spec):
    """torch's own softmax kernels must not run (recorded in the child, judged here)."""
    ops = results.get("softmax_ops")
    if ops:
        return ("prop.softmax_op", {"ops": ops})
    return None


# Ways to reach a function by a name computed at run time, which no reading of the source can follow.
COMPUTED_LOOKUPS = {"getattr", "setattr", "vars", "globals", "locals", "eval", "exec", "compile", "__import__",
                    "attrgetter", "methodcaller", "import_module", "__builtins__"}
HIDDEN_ATTRIBUTES = {"__dict__", "__getattribute__", "__getattr__", "__globals__", "__builtins__", "__import__",
                     "modules", "__self__", "__func__"}
LOOKUP_MODULES = {"importlib", "builtins", "inspect", "ctypes", "operator", "pydoc"}


def _names_softmax(name):
    return "softmax" in name.lower() or "softmin" in name.lower()


def _literal_name(call):
    """Is a getattr-like call's name argument a string written out in the source?"""
    return len(call.args) >= 2 and isinstance(call.args[1], ast.Constant) and isinstance(call.args[1].value, str)


def _computed_lookup(tree):
    """(what, line) of the first name looked up at run time (getattr with a computed name, __dict__,
    __import__, importlib, exec/eval/compile, ...), or None."""
    literal_getattrs = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)
                        and isinstance(node.func, ast.Name) and node.func.id == "getattr" and _literal_name(node)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in COMPUTED_LOOKUPS and id(node) not in literal_getattrs:
            return node.id, node.lineno
        if isinstance(node, ast.Attribute) and (node.attr in HIDDEN_ATTRIBUTES or node.attr in COMPUTED_LOOKUPS):
            return node.attr, node.lineno
        if isinstance(node, ast.Import):
            found = next((a.name for a in node.names if a.name.split(".")[0] in LOOKUP_MODULES), None)
            if found:
                return f"import {found}", node.lineno
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in LOOKUP_MODULES:
            return f"from {node.module} import", node.lineno
    return None


def no_builtin_softmax(source):
    """A source rule judged in the grader: no torch softmax named anywhere in the learner's code, and no
    name looked up at run time (which could hide one: getattr(torch, "xamtfos"[::-1]))."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # reported by the import
    for node in ast.walk(tree):
        found = None
        if isinstance(node, ast.Attribute) and _names_softmax(node.attr):
            found = node.attr
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found = next((a.name for a in node.names if _names_softmax(a.name)), None)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in ("getattr", "eval", "exec", "__import__", "compile"):
            found = next((a.value for a in node.args if isinstance(a, ast.Constant)
                          and isinstance(a.value, str) and _names_softmax(a.value)), None)
        if found:
            return ("rule.builtin_softmax_found", {"name": found, "line": node.lineno}), "builtin_softmax"
    lookup = _computed_lookup(tree)
    if lookup:
        return ("rule.computed_lookup_found", {"what": lookup[0], "line": lookup[1]}), "builtin_softmax"
    return None


SOURCE_RULES = (no_builtin_softmax,)


def variant_checks(chosen, rng):
    """Off the published exercise: one softmax and one masked softmax of shapes drawn for the variant
    (grader/variants.py gives them its temperature)."""
    g = generator(rng.randrange(2**31))
    B, n_q, n_k = rng.randint(1, 4), rng.randint(1, 5), rng.randint(2, 7)
    lens = torch.tensor([rng.randint(1, n_k) for _ in range(B)])  # (B,): the published cases test an empty row
    return [_softmax(("check.ex01.last_axis", {}), randn(g, B, n_q, n_k) * 3, -1, 21),
            _masked(("check.ex01.per_example", {}), randn(g, B, n_q, n_k, dtype=torch.float64) * 3, lens, 22)]


def build():
    """The exercise's checks, in the order they are reported."""
    g = generator(101)
    with_inf = randn(g, 3, 5)
    with_inf[0, 1] = with_inf[2, 0] = with_inf[2, 4] = float("-inf")
    return number_checks("ex01", [
        _softmax(("check.ex01.last_axis", {}), randn(g, 2, 3, 5), -1, 1),
        _softmax(("check.ex01.axis1", {}), randn(g, 2, 4, 3, dtype=torch.float64), 1, 2),
        _softmax(("check.ex01.overflow", {}), 1e4 + randn(g, 3, 4), -1, 3, precision_note=True),
        _softmax(("check.ex01.underflow", {}),
                 -1e4 + randn(g, 2, 4, dtype=torch.float64), -1, 4),
        _softmax(("check.ex01.minus_inf", {}), with_inf, -1, 5),
        _masked(("check.ex01.no_lens", {}), randn(g, 2, 3, 4), None, 6),
        _masked(("check.ex01.per_example", {}),
                randn(g, 3, 2, 5), torch.tensor([2, 5, 1]), 7),
        _masked(("check.ex01.per_query", {}),
                randn(g, 2, 3, 4, dtype=torch.float64), torch.tensor([[1, 2, 4], [3, 1, 2]]), 8),
        _masked(("check.ex01.zero_length", {}),
                randn(g, 2, 2, 3), torch.tensor([0, 2]), 9),
        _masked(("check.ex01.zeros_per_query", {}),
                randn(g, 2, 4, 6, dtype=torch.float64), torch.tensor([[0, 6, 3, 1], [2, 0, 0, 5]]), 10),
        _softmax(("check.ex01.mixed_rows", {}), _mixed_rows(g), -1, 11, precision_note=True),
        *_temperature_checks(),  # appended: the checks above keep their ids and draws
        *_square_checks(),  # appended after those
    ])


def _square_checks():
    """masked_softmax of square scores (n_q = n_k) with lengths per example and per query: with the published
    cases, whose lengths all come with n_q != n_k, code that builds the key positions from the query axis raises
    on every call given lengths, and its hint could only say "valid_lens given"; these two run it."""
    g = generator(102)
    return [_masked(("check.ex01.square_per_example", {}), randn(g, 3, 4, 4), torch.tensor([3, 1, 4]), 31),
            _masked(("check.ex01.square_per_query", {}), randn(g, 2, 3, 3, dtype=torch.float64),
                    torch.tensor([[1, 3, 2], [2, 2, 3]]), 32)]


TEMPERATURE = 0.7  # an explicit temperature, off the published 1.0 (a value no listed mistake computes)


def _temperature_checks():
    """softmax and masked_softmax (with valid lengths, the path a temperature is most often forgotten on) at an
    explicit temperature."""
    g = generator(102)
    masked = _masked(("check.ex01.per_example", {}), randn(g, 3, 2, 5), torch.tensor([2, 5, 1]), 13)
    return [with_parameter(_softmax(("check.ex01.last_axis", {}), randn(g, 2, 3, 5), -1, 12), "temperature",
                           TEMPERATURE),
            with_parameter(masked, "temperature", TEMPERATURE)]


MISTAKES = (
    Mistake(
        "softmax_no_shift",
        "X_exp = torch.exp(X - X_max)",
        "X_exp = torch.exp(X)",
        where=("softmax",),
    ),
    Mistake(
        "softmax_fixed_axis",
        "X_exp.sum(dim=dim, keepdim=True)",
        "X_exp.sum(dim=-1, keepdim=True)",
        also=(("X.detach().amax(dim=dim, keepdim=True)", "X.detach().amax(dim=-1, keepdim=True)"),),
        where=("softmax",),
    ),
    Mistake(
        "mask_fill_zero",
        'scores = X.masked_fill(~mask, float("-inf"))',
        "scores = X.masked_fill(~mask, 0.0)",
        where=("masked_softmax",),
    ),
    Mistake(
        "mask_off_by_one",
        "return key_index[None, None, :] < lens[:, :, None].to(X.device)",
        "return key_index[None, None, :] <= lens[:, :, None].to(X.device)",
        where=("masked_softmax",),
    ),
    Mistake(
        "empty_row_nan",
        "return X_exp / total.clamp_min(torch.finfo(X_exp.dtype).tiny)",
        "return X_exp / total",
        where=("masked_softmax",),
    ),
    Mistake(
        "mask_lens_per_query_ignored",
        "lens = valid_lens  # (B, n_q)",
        "lens = valid_lens[:, :1].expand(B, n_q)  # (B, n_q)",
        where=("masked_softmax",),
    ),
    Mistake(
        "builtin_softmax",
        "    X_max = X.detach().amax(dim=dim, keepdim=True)\n",
        "    return torch.ops.aten._softmax(X, dim, False)\n    X_max = X.detach().amax(dim=dim, keepdim=True)\n",
        where=("softmax", "masked_softmax"),
    ),
    Mistake(
        "input_modified_in_place",
        'scores = X.masked_fill(~mask, float("-inf"))',
        'X.masked_fill_(~mask, float("-inf"))\n    scores = X',
        raises=r"leaf Variable.*in-place",
    ),
    Mistake(
        "softmax_global_max",
        "X_max = X.detach().amax(dim=dim, keepdim=True)",
        "X_max = X.detach().amax()",
        where=("softmax",),
    ),
    Mistake(  # the same, without the guard against 0/0: the rows far below the maximum are NaN, not 0
        "softmax_global_max_unguarded",
        "X_max = X.detach().amax(dim=dim, keepdim=True)",
        "X_max = X.detach().amax()",
        also=(("return X_exp / total.clamp_min(torch.finfo(X_exp.dtype).tiny)", "return X_exp / total"),),
        where=("softmax",),
    ),
    Mistake(
        "masked_temperature_ignored",
        "return softmax(scores, dim=-1, temperature=temperature)",
        "return softmax(scores, dim=-1)",
        where=("masked_softmax",),
    ),
    Mistake(
        "lens_tiled_not_interleaved",
        "lens = valid_lens[:, None].expand(B, n_q)  # (B, n_q)",
        "lens = valid_lens.repeat(n_q).reshape(B, n_q)  # (B, n_q): the lengths tiled, not each one repeated",
        where=("masked_softmax",),
    ),
)
