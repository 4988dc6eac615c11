"""Feedback that finds the mistake nobody listed: learner-written bugs (tests/learner_bugs/, none a
registered known mistake) get a hint that names the function and the slip, or none; never a wrong one.

The bug files are graded as a learner's would be; the engine (grader/diagnosis/) is never called here
except to check its operators, texts and what it says when an exercise's mutant cache is missing.
"""

import functools
import re
from pathlib import Path

import pytest
import torch

from course.common.exercise_index import EXERCISES
from course.common.i18n import catalog
from grader import checks as checks_registry
from grader.core import Submission, grade_submissions
from grader.diagnosis import explain, mutants, operators
from grader.report import CheckResult
from grader.text import hint_text

ROOT = Path(__file__).resolve().parent.parent
BUGS = sorted((ROOT / "tests" / "learner_bugs").glob("ex*/*.py"))
# Each must get its right hint (at least one per exercise): the examples and a fresh set.
MUST_NAME = {
    "ex00/dilations_from_2", "ex00/rounded_down", "ex01/global_max", "ex01/mask_after_softmax", "ex01/max_over_last_axis",
    "ex02/width_squared_twice", "ex02/module_ignores_w", "ex02/pooled_over_queries", "ex02/queries_tiled",
    "ex03/scaled_by_num_keys", "ex03/scale_doubled", "ex04/old_state_returned", "ex05/merge_heads_swapped",
    "ex05/lens_tiled_2d_only", "ex06/base_1000", "ex06/odd_num_hiddens_breaks", "ex07/dropout_after_residual",
    "ex07/ffn_on_block_input", "ex07/relu_after_second_layer", "ex08/scaled_by_num_keys", "ex09/base_1000",
    "ex10/mask_keeps_length_key",
    "ex11/kv_head_in_turn",
}
ZH = ("ex06/base_1000", "ex01/mask_after_softmax")


def name(path):
    return f"{path.parent.name}/{path.stem}"


def expectation(path):
    """(function, phrase) from the file's second line."""
    line = path.read_text(encoding="utf-8").splitlines()[1]
    function, phrase = line.split(":", 1)[1].split("|")
    return function.strip(), phrase.strip()


def first_failing(result):
    return next(c for c in result.checks if not c.passed)


def registered_hints(ex_id, lang="en"):
    return {hint_text(ex_id, m, lang) for m in checks_registry.for_exercise(ex_id).MISTAKES}


def is_right(path, hint, lang="en"):
    function, phrase = expectation(path)
    named = function in hint or hint in registered_hints(path.parent.name, lang)
    return named and (lang != "en" or phrase.lower() in hint.lower())


@pytest.fixture(scope="module")
def graded():
    results = grade_submissions([Submission(p.parent.name, p.read_text(encoding="utf-8"), p.name) for p in BUGS])
    return dict(zip(BUGS, results))


@pytest.fixture(scope="module")
def graded_zh():
    paths = [p for p in BUGS if name(p) in ZH]
    results = grade_submissions([Submission(p.parent.name, p.read_text(encoding="utf-8"), p.name) for p in paths],
                                lang="zh")
    return dict(zip(paths, results))


def test_every_exercise_has_learner_bugs_that_must_be_named():
    for ex in EXERCISES:
        assert any(n.startswith(ex.id + "/") for n in MUST_NAME), ex.id
    assert MUST_NAME <= {name(p) for p in BUGS}


@pytest.mark.slow  # grades every learner bug file
@pytest.mark.parametrize("path", BUGS, ids=[name(p) for p in BUGS])
def test_a_learner_bug_fails_and_no_hint_misleads(path, graded):
    result = graded[path]
    assert result.status == "failed", (result.status, result.summary)
    hint = first_failing(result).hint
    if hint or name(path) in MUST_NAME:
        assert hint and is_right(path, hint), (expectation(path), hint)


@pytest.mark.slow  # grades every learner bug file
def test_three_in_four_learner_bugs_get_the_right_hint(graded):
    right = [p for p in BUGS if first_failing(graded[p]).hint and is_right(p, first_failing(graded[p]).hint)]
    assert len(right) * 4 >= len(BUGS) * 3, f"{len(right)}/{len(BUGS)}"


@pytest.mark.slow  # grades every learner bug file
def test_the_hint_in_chinese_names_the_function_in_full_width_punctuation(graded_zh):
    for path, result in graded_zh.items():
        hint = first_failing(result).hint
        assert hint and is_right(path, hint, "zh"), hint
        assert re.search("[\u4e00-\u9fff]", hint) and "：" in hint and "(" not in hint.replace("`", ""), hint


# ---- the engine's parts, without grading ---------------------------------------------------------

LISTED = {  # the kinds of slip the operators must produce, somewhere in the references
    "cmp_includes", "range_one_more", "one_dropped", "const_smaller", "sqrt_dropped", "sqrt_doubled",
    "joined_reversed", "tiled_instead", "permute_dropped", "permute_reordered", "dim_changed", "call_dropped",
    "term_dropped", "division_dropped", "moved_after", "applied_after_sum", "old_returned", "operands_swapped",
    "size_from", "reduced_all", "order_swapped", "name_swapped", "args_swapped", "slice_dropped",
    "module_swapped", "applied_again", "moved_outside", "moved_to_term",
}


@functools.cache
def reference_ops():
    """Every operator the references' mutants use."""
    return {m.op for p in sorted((ROOT / "solutions").glob("ex*.py"))
            for m in operators.mutations(p.read_text(encoding="utf-8"))}


@pytest.mark.slow  # derives every mutant of the references (about 15 s)
def test_the_operators_derive_every_listed_kind_of_slip_from_the_references():
    assert LISTED <= reference_ops(), LISTED - reference_ops()


@pytest.mark.slow  # derives every mutant of the references
def test_every_operator_is_worded_in_both_languages():
    ops = reference_ops()
    for lang in ("en", "zh"):
        worded = {k.removeprefix("grader.mutant.op.") for k in catalog(lang) if k.startswith("grader.mutant.op.")}
        assert ops <= set(worded), (lang, ops - set(worded))


def test_a_mutant_is_one_place_changed_and_says_no_reference_code():
    source = "def f(x, n):\n    '''Doc.'''\n    y = x[:n] * 2\n    return y < n\n"
    found = list(operators.mutations(source))
    assert {m.op for m in found} >= {"cmp_includes", "const_smaller", "const_larger"}
    for m in found:
        assert m.function == "f" and m.source != source
        assert all("x[" not in str(v) for _, v in m.fields)


def test_the_cache_key_follows_the_references(tmp_path):
    copy = tmp_path / "solutions"
    copy.mkdir()
    for path in (ROOT / "solutions").glob("*.py"):
        (copy / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    grader = tuple(mutants.GRADER_DIR / part for part in mutants.RESULT_SOURCES)
    before = mutants.source_digest((copy,) + grader)
    assert before == mutants.source_digest((ROOT / "solutions",) + grader) == mutants.version_key()
    (copy / "ex01_softmax.py").write_text("# changed\n", encoding="utf-8")
    assert mutants.source_digest((copy,) + grader) != before


def test_a_missing_mutant_cache_is_said_by_each_diagnosis_and_forgotten_once_built(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_MUTANT_CACHE", str(tmp_path))
    results = [CheckResult("first", True), CheckResult("second", False, kind="mismatch")]
    assert explain.diagnose("ex03", [], [], [], results) == explain.Diagnosis(None, mutants_missing=True)
    torch.save({"drawn": False, "mutants": []}, mutants.cache_path("ex03"))  # built: no mutant explains it
    assert explain.diagnose("ex03", [], [], [], results) == explain.Diagnosis(None, mutants_missing=False)
