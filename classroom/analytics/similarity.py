"""Code similarity between submissions of one exercise, calibrated per exercise (copy detection evidence).

Fingerprints are copydetect's (winnowing over a token stream whose names, strings and comments are
already abstracted: variables become V, functions F, strings S), with the exercise's stub as boilerplate.
Before fingerprinting, a file is put in a canonical form with the standard library (`canonical`):
docstrings dropped, the values a learner's exercise variant changes replaced by one placeholder
(`variant_values`: in a class with variants a copier writes their own value as the parameter's default,
the one edit the Practice page asks for, which alone took a copy from 1.000 to 0.913), top-level
definitions and the methods of each class sorted by name (their names are the exercise's API, so a
copier keeps them), and `ast.unparse` for layout and quotes. A pair's
score is copydetect's: the larger of the two shares of a file's (non-stub) code found in the other.

Short PyTorch exercises converge on similar code, so a fixed threshold flags innocent learners
(copydetect's own 0.33 display threshold puts 30 of the 64 pairs of independent correct files in
tests/variants and solutions/ above it; `python bench/similarity.py` prints it). Hence the threshold is
chosen per exercise from a null distribution: the scores of pairs known or presumed independent
(every pair of the reference and tests/variants files, and, once NULL_MIN_LEARNERS learners passed,
every pair of the class's own passing submissions). On the logit scale each exercise's null is
centred on its median; the spread is pooled over all exercises (1.4826 x the median absolute
deviation, robust to the few copies a class's pairs contain), and the threshold is that normal
model's QUANTILE (0.99995) quantile, never below FLOOR nor above CEILING. A pair is flagged only when
its score is above its exercise's threshold.
"""

import ast
import functools
import io
import itertools
import json
import math
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist

import numpy as np
from copydetect import CodeFingerprint, compare_files, defaults

from course.common.exercise_variants import PARAMETERS

from ..data import exercise_table

PROJECT_ROOT = Path(__file__).resolve().parents[2]
VARIANTS = PROJECT_ROOT / "tests" / "variants"  # independent correct files, one folder per exercise
NOISE = defaults.NOISE_THRESHOLD  # copydetect's k: the shortest match it counts (characters of the token stream)
WINDOW = defaults.GUARANTEE_THRESHOLD - defaults.NOISE_THRESHOLD + 1  # copydetect's default winnowing window
QUANTILE = 0.99995  # the share of independent pairs the threshold stays above, under the null model (at 0.9995,
# 2 of the 64 independent pairs were flagged out of sample once ex06/ex09 gained a parameter; 0 at this one)
FLOOR = 0.6  # never flag a pair sharing less than this share of its code
CEILING = 0.95  # always flag a pair sharing more, whatever an exercise's null says
CLIP = 0.02  # scores are clipped into [CLIP, 1 - CLIP] before the logit (0 and 1 have none)
NULL_MIN_LEARNERS = 8  # the class's passing submissions join the null once this many learners passed
PLACEHOLDER = "variant_value"  # what a value an exercise variant changes becomes before fingerprinting


@dataclass(frozen=True)
class Threshold:
    """An exercise's flagging threshold and the null it came from."""

    ex_id: str
    value: float  # flag a pair scoring above this
    center: float  # the null's median score
    quantile: float  # QUANTILE
    reference_pairs: int  # null pairs among the reference and tests/variants files
    class_pairs: int  # null pairs among the class's passing submissions (0 until NULL_MIN_LEARNERS passed)


def _strip_docstrings(tree):
    """The tree without docstrings (a body left empty gets `pass`)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                node.body = node.body[1:] or [ast.Pass()]
    return tree


def _sort_definitions(tree):
    """Top-level definitions, and each class's methods, sorted by name in the slots they held."""
    is_def = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    for node in [tree, *(n for n in tree.body if isinstance(n, ast.ClassDef))]:
        slots = [i for i, stmt in enumerate(node.body) if isinstance(stmt, is_def)]
        for slot, definition in zip(slots, sorted((node.body[i] for i in slots), key=lambda d: d.name)):
            node.body[slot] = definition
    return tree


def _is_literal(node):
    """Is the expression made of numbers, strings and arithmetic alone (3, 3.0, -0.5, 1 / 2.5, "gelu")?"""
    return all(isinstance(n, (ast.Constant, ast.UnaryOp, ast.BinOp, ast.unaryop, ast.operator))
               for n in ast.walk(node))


def _is_variant_number(node, values):
    """Is the node a number (not a bool) equal to one of the values, however written (3, 3.0, 3., 3e0)?"""
    return isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value in values


class _VariantValues(ast.NodeTransformer):
    """Puts PLACEHOLDER where a learner writes their exercise variant's value (see `variant_values`)."""

    def __init__(self, parameter):
        self.name = parameter.name
        self.values = {v for v in (parameter.default, *parameter.choices) if type(v) in (int, float)}

    def _placeholder(self, node):
        return ast.copy_location(ast.Name(id=PLACEHOLDER, ctx=ast.Load()), node)

    def visit_arguments(self, node):
        """A literal default of an argument named like the parameter becomes the placeholder."""
        positional = node.posonlyargs + node.args
        named = positional[len(positional) - len(node.defaults):]
        node.defaults = [self._placeholder(d) if a.arg == self.name and _is_literal(d) else d
                         for a, d in zip(named, node.defaults)]
        node.kw_defaults = [self._placeholder(d) if d is not None and a.arg == self.name and _is_literal(d) else d
                            for a, d in zip(node.kwonlyargs, node.kw_defaults)]
        return self.generic_visit(node)

    def visit_keyword(self, node):
        """A literal passed by the parameter's name (softmax(X, temperature=0.37)) becomes the placeholder."""
        if node.arg == self.name and _is_literal(node.value):
            node.value = self._placeholder(node.value)
        return self.generic_visit(node)

    def visit_Constant(self, node):
        """Any number equal to the default or a variant's value (a file without the parameter writes its own
        value in place of the published constant: 2500 ** (2 * j / d))."""
        return self._placeholder(node) if _is_variant_number(node, self.values) else node


def variant_values(tree, ex_id):
    """The tree with PLACEHOLDER for every value a learner's exercise variant changes: the literal defaults of
    the exercise's parameter and literals passed by its name, and every number equal to its default or to any
    variant's value (course/common/exercise_variants.py). Two learners' copies of one file differ by their
    variants' values alone; unchanged for an exercise without a parameter."""
    parameter = PARAMETERS.get(ex_id)
    return tree if parameter is None else _VariantValues(parameter).visit(tree)


def canonical(source, ex_id=None):
    """The source without docstrings, the values its exercise variant changes abstracted (ex_id given), its
    definitions sorted by name, laid out by ast.unparse (unchanged when it does not parse)."""
    try:
        tree = _strip_docstrings(ast.parse(source))
        if ex_id is not None:
            tree = variant_values(tree, ex_id)
        return ast.unparse(_sort_definitions(tree))
    except (SyntaxError, ValueError, RecursionError):
        return source


def code_of(source, kind=".py"):
    """A submission's Python code: the file, or a notebook's code cells joined."""
    if kind != ".ipynb":
        return source
    try:
        cells = json.loads(source).get("cells", [])
        return "\n\n".join("".join(c["source"]) if isinstance(c.get("source"), list) else str(c.get("source", ""))
                           for c in cells if isinstance(c, dict) and c.get("cell_type") == "code")
    except (ValueError, AttributeError, TypeError):
        return ""


def fingerprint(source, boilerplate=None, ex_id=None):
    """copydetect's fingerprint of the source's canonical form (for exercise ex_id), without the boilerplate
    hashes."""
    return CodeFingerprint("submission.py", NOISE, WINDOW, boilerplate, fp=io.StringIO(canonical(source, ex_id)))


@functools.cache
def stub_hashes(ex_id):
    """The hashes of an exercise's stub (its boilerplate: every learner starts from it)."""
    stub = (PROJECT_ROOT / "exercises" / exercise_table.get(ex_id).filename).read_text(encoding="utf-8")
    return np.unique(np.array(sorted(fingerprint(stub, ex_id=ex_id).hashes), dtype=np.int64))


def exercise_fingerprint(ex_id, source, kind=".py"):
    """The fingerprint of one submission of an exercise (its stub as boilerplate, its variant values
    abstracted)."""
    return fingerprint(code_of(source, kind), stub_hashes(ex_id), ex_id)


def score(a, b):
    """copydetect's similarity of two fingerprints: the larger share of either file found in the other."""
    _, (first, second), _ = compare_files(a, b)
    return float(max(first, second))


def _marked(fp):
    """(positions, hashes) of a fingerprint's winnowed k-grams in position order (int64 arrays)."""
    found = sorted((int(i), int(h)) for h, positions in fp.hash_idx.items() for i in positions)
    return np.array([i for i, _ in found], dtype=np.int64), np.array([h for _, h in found], dtype=np.int64)


def shares(prints, rows, cols):
    """(len(rows), len(cols)) array: the share of row file's code found in col file, exactly as compare_files
    counts it (the tokens under k-grams whose hash the other file has, over the file's token coverage), for
    many pairs at once: copydetect compares one pair in ~0.3 ms, a class has 20,000 pairs per exercise."""
    out = np.zeros((len(rows), len(cols)))
    vocabulary = np.unique(np.concatenate([np.array(sorted(prints[c].hashes), dtype=np.int64) for c in cols]
                                          + [np.zeros(0, dtype=np.int64)]))
    if not len(vocabulary):
        return out
    member = np.zeros((len(cols), len(vocabulary) + 1), dtype=bool)  # (cols, hashes); the last column: none
    for n, c in enumerate(cols):
        member[n, np.searchsorted(vocabulary, np.array(sorted(prints[c].hashes), dtype=np.int64))] = True
    for r, row in enumerate(rows):
        fp = prints[row]
        positions, hashes = _marked(fp)
        if not len(positions) or not len(fp.filtered_code) or not fp.token_coverage:
            continue
        where = np.minimum(np.searchsorted(vocabulary, hashes), len(vocabulary) - 1)  # (positions,)
        where = np.where(vocabulary[where] == hashes, where, len(vocabulary))  # a k-gram's column, or "none"
        marks = member[:, where]  # (cols, positions): does the col file have this k-gram?
        starts = np.zeros((len(cols), len(fp.filtered_code) + fp.k + 1), dtype=np.int32)  # (cols, tokens)
        np.add.at(starts, (slice(None), positions), marks.astype(np.int32))
        running = np.cumsum(starts, axis=1)  # (cols, tokens): shared k-grams starting at or before each token
        window = running.copy()
        window[:, fp.k:] -= running[:, :-fp.k]  # (cols, tokens): shared k-grams covering each token
        out[r] = (window > 0).sum(axis=1) / fp.token_coverage
    return out


def all_scores(prints):
    """{(i, j): score} for every pair i < j of fingerprints (the larger share, as `score`)."""
    both = shares(prints, range(len(prints)), range(len(prints)))  # (files, files)
    return {(i, j): float(max(both[i, j], both[j, i])) for i, j in itertools.combinations(range(len(prints)), 2)}


def reference_files(ex_id):
    """The independent correct files of an exercise: the reference and every tests/variants file."""
    reference = PROJECT_ROOT / "solutions" / exercise_table.get(ex_id).filename
    return [reference, *sorted((VARIANTS / ex_id).glob("*.py"))]


@functools.cache
def reference_null(ex_id):
    """The scores of every pair of an exercise's independent correct files (a tuple)."""
    prints = [exercise_fingerprint(ex_id, p.read_text(encoding="utf-8")) for p in reference_files(ex_id)]
    return tuple(all_scores(prints).values())


def _logit(values):
    """The logits of scores clipped into [CLIP, 1 - CLIP]."""
    clipped = np.clip(np.asarray(values, dtype=float), CLIP, 1 - CLIP)
    return np.log(clipped / (1 - clipped))


def calibrate(nulls, class_pairs=None):
    """{ex_id: Threshold} from each exercise's null scores ({ex_id: scores}; see the module docstring).

    class_pairs: {ex_id: how many of those scores are pairs of class submissions} (for the record)."""
    logits = {ex_id: _logit(scores) for ex_id, scores in nulls.items() if len(scores)}
    centers = {ex_id: float(np.median(values)) for ex_id, values in logits.items()}
    residuals = np.concatenate([values - centers[ex_id] for ex_id, values in logits.items()] or [np.zeros(1)])
    spread = 1.4826 * float(np.median(np.abs(residuals)))  # the MAD, scaled to a normal's standard deviation
    z = NormalDist().inv_cdf(QUANTILE)
    thresholds = {}
    for ex_id, scores in nulls.items():
        center = centers.get(ex_id, _logit([CLIP])[0])
        value = 1 / (1 + math.exp(-(center + z * spread)))
        thresholds[ex_id] = Threshold(ex_id, min(CEILING, max(FLOOR, value)), 1 / (1 + math.exp(-center)), QUANTILE,
                                      len(scores) - (class_pairs or {}).get(ex_id, 0),
                                      (class_pairs or {}).get(ex_id, 0))
    return thresholds
