"""The parts of copy detection on their own: canonical form, the batched scores, calibration, rare traces."""

import itertools

from classroom.analytics import copy_evidence, similarity
from classroom.analytics.disguise import disguise
from tests.classroom_support import solution


def test_the_canonical_form_ignores_docstrings_order_and_layout():
    one = 'def b(x):\n    """Doc."""\n    return x+1\n\n\ndef a(y):\n    return y * 2\n'
    two = "def a(y):\n  return (y*2)  # twice\n\ndef b(x):\n  'Another doc.'\n  return x + 1\n"
    assert similarity.canonical(one) == similarity.canonical(two)
    assert similarity.canonical("def broken(:\n") == "def broken(:\n"  # kept as it is, still fingerprinted


def test_the_canonical_form_abstracts_the_values_an_exercise_variant_changes():
    """However the copier writes their own value (3, 3.0, 3., an expression, by keyword), the canonical form of
    an exercise's file is the same; other numbers and other arguments' defaults stay as they are."""
    ex01 = "def softmax(X, dim=-1, temperature={}, eps=1e-6):\n    return f(X / temperature, t=0.25, temperature={})\n"
    forms = ["1.0", "0.37", "3", "3.0", "3.", ".37", "1 / 2.5", "-0.5", "2.75"]
    assert len({similarity.canonical(ex01.format(v, v), "ex01") for v in forms}) == 1
    assert similarity.canonical(ex01.format(1.0, 1.0)) != similarity.canonical(ex01.format(0.37, 0.37))  # no ex_id
    assert similarity.canonical(ex01.format(1, 1), "ex01") != similarity.canonical(
        ex01.format(1, 1).replace("1e-6", "1e-9"), "ex01")  # not a variant's value: kept
    assert similarity.PLACEHOLDER in similarity.canonical(ex01.format(1, 1), "ex01")
    ex06 = "def table(d, max_len=1000):\n    return 1 / {} ** (torch.arange(0, d, 2) / d)\n"
    assert similarity.canonical(ex06.format("10000"), "ex06") == similarity.canonical(ex06.format("2500.0"), "ex06")
    assert similarity.canonical(ex06.format("10000"), "ex06") != similarity.canonical(
        ex06.format("10000").replace("1000)", "1234)"), "ex06")
    assert similarity.canonical("x = 0.37\n", "ex99") == "x = 0.37"  # an exercise without a parameter: as it is


def test_batched_shares_equal_copydetects_pair_by_pair_scores():
    sources = [solution("ex03"), disguise(solution("ex03"), 1), solution("ex05"), "x = 1\n", ""]
    prints = [similarity.exercise_fingerprint("ex03", s) for s in sources]
    batched = similarity.all_scores(prints)
    for i, j in itertools.combinations(range(len(prints)), 2):
        assert batched[(i, j)] == similarity.score(prints[i], prints[j]), (i, j)
    assert batched[(0, 1)] > 0.95 and batched[(0, 2)] < 0.5


def test_a_threshold_follows_its_exercise_and_keeps_to_floor_and_ceiling():
    nulls = {"ex01": [0.1, 0.15, 0.2, 0.12, 0.18], "ex02": [0.5, 0.55, 0.6, 0.52, 0.58], "ex03": [0.94] * 5}
    thresholds = similarity.calibrate(nulls, {"ex02": 2})
    assert thresholds["ex01"].value == similarity.FLOOR
    assert similarity.FLOOR < thresholds["ex02"].value < similarity.CEILING
    assert thresholds["ex02"].value > max(nulls["ex02"])
    assert thresholds["ex03"].value == similarity.CEILING
    assert (thresholds["ex02"].reference_pairs, thresholds["ex02"].class_pairs) == (3, 2)


def _verdict(learner, ex_id="ex05", status="failed", mistakes=(), got=None):
    check = {"id": "ex05.check.1", "passed": got is None, "weights": None if got is None else {"got": got}}
    return learner, ex_id, status, list(mistakes), [check]


def test_two_learners_sharing_a_rare_mistake_or_values_are_paired():
    rows = [_verdict(1, mistakes=["auto:f:3:Add>Sub"], got=[[0.5, 0.5]]),
            _verdict(2, mistakes=["auto:f:3:Add>Sub"], got=[[0.5, 0.5]])]
    rows += [_verdict(n, mistakes=["common"]) for n in range(1, 40)]  # everyone: not evidence
    rows += [_verdict(n, status="passed") for n in range(40, 60)]
    pairs = copy_evidence.shared_rare(rows)
    assert list(pairs) == [(1, 2)]
    assert {(s.trace.kind, s.trace.detail, s.holders, s.learners) for s in pairs[(1, 2)]} == {
        ("mistake", "auto:f:3:Add>Sub", 2, 59), ("values", "ex05.check.1", 2, 59)}


def test_different_wrong_values_or_a_passing_verdict_are_no_evidence():
    rows = [_verdict(1, got=[[0.5, 0.5]]), _verdict(2, got=[[0.5, 0.25]]),
            _verdict(3, status="passed", mistakes=["auto:x"]), _verdict(4, status="passed", mistakes=["auto:x"])]
    assert copy_evidence.shared_rare(rows) == {}


def test_rare_means_few_learners_of_the_exercise():
    assert copy_evidence.rare_limit(3) == 2
    assert copy_evidence.rare_limit(200) == 10
