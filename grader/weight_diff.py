"""The learner's attention weights beside the expected ones, when a weight matrix is the first wrong quantity.

`first_wrong_weights(...)` names the weights result to show: the one a failing
property judged (weights that leak onto masked keys or do not sum to 1), the
one a check's sub-step localisation found first different, or, without those,
the first of the check's compared results that differs, if it is a weight
matrix. `weights_diff(key, expected, got)` then keeps only the failing example
(and head): its (queries, keys) matrix from both sides, cropped around the
worst cell when large, with that cell's coordinates. It is plain data (lists
of floats, None for a NaN cell; the report's JSON form writes a NaN or infinite
value as text, course/common/json_numbers.py, which also shows them) the report
carries as a check's `weights` field, read by the Practice page, the command
line's table and the notebooks; nothing of the reference's code, and no other
example, goes into it.
"""

import math
import unicodedata

import torch

from course.common.i18n import t_pair
from course.common.json_numbers import number_text

from .compare import tolerance
from .text import describe_name, tr

MAX_SIDE = 12  # queries and keys shown at most: a larger matrix is cropped around the worst cell
DIGITS = 4  # decimals kept per weight


def is_weights_key(key, declared=None):
    """Does a result (or probe) key hold attention weights, (..., queries, keys)? declared: the check's own list
    (Check.weights), else any key whose last part names weights."""
    if not isinstance(key, str):
        return False
    return key in (declared or ()) or "weights" in key.rsplit(".", 1)[-1]


def _differs(want, have):
    if not (isinstance(want, torch.Tensor) and isinstance(have, torch.Tensor)) or want.shape != have.shape \
            or not want.is_floating_point() or have.dtype != want.dtype:
        return False
    rtol, atol = tolerance(want.dtype)
    return not bool(torch.isclose(have, want, rtol=rtol, atol=atol, equal_nan=True).all())


def property_shown(said, located):
    """The message a failing property's weights diff follows (first_wrong_weights's `message`): the property's
    own (said) when it names its result (weights that leak onto masked keys), else the step its localisation
    found first different (located: the decoder's self-attention weights behind a causality failure), else
    the property's alone."""
    said = said if isinstance(said, tuple) else None
    names_result = said is not None and isinstance(said[1], dict) and "result" in said[1]
    return located if located and not names_result else said


def first_wrong_weights(keys, reference, got, message=None, declared=None):
    """The weights key to show for a failing check, or None. keys: the check's compared results in order;
    message: the (id, fields) of the failing property or of the sub-step localisation, if any (a property
    names its result, a localisation its step's probe); declared: the check's weights keys (Check.weights)."""
    fields = message[1] if message is not None and isinstance(message[1], dict) else {}
    named = fields.get("probe", fields.get("result"))
    if named is not None:
        return named if is_weights_key(named, declared) else None
    for key in keys:
        if _differs(reference.get(key), got.get(key)):
            return key if is_weights_key(key, declared) else None
    return None


def _window(size, centre):
    """(start, stop) of at most MAX_SIDE indices of range(size) around centre."""
    if size <= MAX_SIDE:
        return 0, size
    start = min(max(centre - MAX_SIDE // 2, 0), size - MAX_SIDE)
    return start, start + MAX_SIDE


def _rows(matrix):
    return [[None if math.isnan(v) else round(v, DIGITS) for v in row] for row in matrix.tolist()]


def unravel(flat, shape):
    """The index, one int per dimension, of position `flat` in a row-major tensor of this shape (what
    torch.unravel_index gives, without the sympy import it costs each judging fork: ~0.4 s)."""
    index = []
    for size in reversed(shape):
        flat, i = divmod(flat, size)
        index.append(i)
    return index[::-1]


def weights_diff(key, expected, got, example=None):
    """{result, example, rows_from, cols_from, expected, got, worst, shape, expected_value, got_value}: the
    matrix of the example the feedback names (`example`: its batch index), else of the worst cell; None when
    the two are not comparable weight tensors (at least 2-d, same shape) or agree."""
    if not _differs(expected, got) or expected.dim() < 2:
        return None
    want, have = expected.detach().double(), got.detach().double()
    error = (have - want).abs()
    error = torch.where(torch.isnan(error), torch.full_like(error, math.inf), error)  # a NaN is the worst cell
    if isinstance(example, int) and expected.dim() > 2 and 0 <= example < expected.shape[0] \
            and bool(error[example].gt(0).any()):
        error = torch.where(torch.arange(error.shape[0]).view(-1, *[1] * (error.dim() - 1)) == example, error,
                            torch.full_like(error, -1.0))  # only the named example's cells compete
    worst = unravel(int(error.reshape(-1).argmax()), error.shape)
    example, (q, k) = worst[:-2], worst[-2:]
    rows, cols = _window(want.shape[-2], q), _window(want.shape[-1], k)
    pick = tuple(example) + (slice(*rows), slice(*cols))
    return {
        "result": key,  # the result's key; the judge adds "name", [catalog key, fields], for a probe's step
        "example": example,  # leading indices: (batch,) or (batch, head)
        "rows_from": rows[0],
        "cols_from": cols[0],
        "expected": _rows(want[pick]),
        "got": _rows(have[pick]),
        "worst": [q, k],  # (query, key) in the full matrix
        "shape": list(want.shape),  # of the whole result
        "expected_value": float(want[tuple(worst)]),
        "got_value": float(have[tuple(worst)]),
    }


def worst_sentence(diff, lang="en"):
    """One sentence naming the worst (query, key) cell, and the crop when the matrices are cropped."""
    q, k = diff["worst"]
    example = ", ".join(str(i) for i in diff["example"]) or "0"
    said = tr("weights.worst", lang, result=t_pair(diff.get("name"), lang, describe_name(diff["result"], lang)),
              example=example, q=q, k=k, expected=number_text(diff["expected_value"]), got=number_text(diff["got_value"]))
    n_q, n_k = diff.get("shape", [None, None])[-2:] if diff.get("shape") else (None, None)
    rows, cols = len(diff["got"]), len(diff["got"][0]) if diff["got"] else 0
    if n_q is not None and (rows < n_q or cols < n_k):
        said += " " + tr("weights.cropped", lang, q_from=diff["rows_from"], q_to=diff["rows_from"] + rows - 1,
                         k_from=diff["cols_from"], k_to=diff["cols_from"] + cols - 1, n_q=n_q, n_k=n_k)
    return said


def text_lines(diff, lang="en"):
    """The diff for a terminal or a notebook: the sentence, then both grids side by side."""
    labels = {name: tr(f"weights.{name}", lang) for name in ("expected", "got", "query", "key")}
    return [worst_sentence(diff, lang)] + text_grid(diff, labels)


def text_grid(diff, labels):
    """The two matrices side by side as lines of text, the worst cell in [brackets]; labels: {"expected",
    "got", "query", "key"} in the report's language."""
    q, k = diff["worst"]

    def cells(matrix):
        out = []
        for i, row in enumerate(matrix):
            line = []
            for j, value in enumerate(row):
                text = number_text(value, ".2f")  # a NaN cell (None, or "NaN" as a report stores it): NaN
                mark = (i + diff["rows_from"], j + diff["cols_from"]) == (q, k)
                line.append(f"[{text}]" if mark else f" {text} ")
            out.append(f"{labels['query']}{i + diff['rows_from']:<3d}" + "".join(f"{c:>7s}" for c in line))
        return out

    head = " " * (len(labels["query"]) + 3) + "".join(
        f"{labels['key'] + str(j + diff['cols_from']):>7s}" for j in range(len(diff["got"][0])))
    left, right = [labels["expected"], head] + cells(diff["expected"]), [labels["got"], head] + cells(diff["got"])
    width = max(_width(line) for line in left)
    return [a + " " * (width - _width(a) + 3) + b for a, b in zip(left, right)]


def _width(text):
    """Columns a string takes in a terminal (CJK characters take two)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
