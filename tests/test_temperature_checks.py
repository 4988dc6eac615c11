"""The temperature checks appended to ex01 and ex03: they run at an explicit temperature where the learner's code
takes the parameter, and are reported as not applicable (passed) where it does not, so that an answer written
before the exercises had the parameter is never failed by them."""

from pathlib import Path

import pytest

from grader import checks as checks_registry
from grader.core import Submission, grade_submissions, reference_modules
from grader.diagnosis.variant_default import lacks_parameter
from grader.harness.procedures import NOT_APPLICABLE
from grader.judge import judge_check
from grader.sandbox import SandboxLimits
from grader.text import hint_text
from tests.exercise_variant_support import PROCEDURES, load_module

ROOT = Path(__file__).resolve().parent / "fresh_learners"
OLD = {"ex01": ROOT / "set_a" / "ex01" / "01_amax_neginf.py",  # correct answers without a temperature parameter
       "ex03": ROOT / "set_a" / "ex03" / "01_bmm.py"}
WRONG = {"ex01": (ROOT / "set_d" / "ex01" / "01_no_temp_mask.py", "masked_temperature_ignored"),
         "ex03": (ROOT / "set_d" / "ex03" / "03_temp_precedence.py", "dot_temperature_multiplies")}


PUBLISHED_CHECKS = {"ex01": 11, "ex03": 13}  # the checks each had before the temperature checks were appended


def _temperature_checks(ex_id):
    return [c for c in checks_registry.for_exercise(ex_id).build() if c.spec.get("needs_parameter") == "temperature"]


def _run(check, modules):
    """A check's procedure run in this process on trusted code, as the grader's record of it."""
    return {"ok": PROCEDURES[check.procedure](modules, check.spec)}


@pytest.mark.parametrize("ex_id", ["ex01", "ex03"])
def test_the_temperature_checks_come_after_the_published_ones_and_keep_the_earlier_ids(ex_id):
    checks = checks_registry.for_exercise(ex_id).build()
    flagged = [i for i, c in enumerate(checks) if c.spec.get("needs_parameter")]
    published = PUBLISHED_CHECKS[ex_id]  # the checks before them (tests/test_check_ids.py pins every id)
    assert flagged == [published, published + 1]
    assert all(c.spec.get("kwargs", {}).get("temperature") or c.spec.get("init_kwargs", {}).get("temperature")
               for c in checks[published:published + 2])
    # what was appended after them (the square cases) takes no parameter
    assert not any(c.spec.get("needs_parameter") for c in checks[published + 2:])


@pytest.mark.parametrize("ex_id", ["ex01", "ex03"])
def test_code_without_the_parameter_is_not_judged_on_it(ex_id):
    module = load_module(ex_id, OLD[ex_id].read_text(encoding="utf-8"), f"old_{ex_id}")
    for check in _temperature_checks(ex_id):
        reference = PROCEDURES[check.procedure](reference_modules, check.spec)
        record = _run(check, lambda name: module)
        assert record["ok"].get(NOT_APPLICABLE) == "temperature"
        assert NOT_APPLICABLE not in reference and any(k.startswith("output") for k in reference)
        result = judge_check(check, reference, record, None, SandboxLimits(), source=module.SOURCE)
        assert result.passed and "not applicable" in result.message
        # the same record from a file that takes the parameter (say, a harness it rewrote) is not believed
        path, _ = WRONG[ex_id]
        refused = judge_check(check, reference, record, None, SandboxLimits(), source=path.read_text(encoding="utf-8"))
        assert not refused.passed and "not accepted" in refused.message


def test_a_missing_parameter_is_read_from_the_source():
    assert lacks_parameter("def softmax(X, dim=-1):\n    pass\n", "softmax", "temperature")
    assert not lacks_parameter("def softmax(X, dim=-1, temperature=1.0):\n    pass\n", "softmax", "temperature")
    assert not lacks_parameter("def softmax(X, dim=-1, **kwargs):\n    pass\n", "softmax", "temperature")
    assert not lacks_parameter("softmax = lambda X, dim=-1: X\n", "softmax", "temperature")  # not shown: not believed
    assert lacks_parameter("class A:\n    def __init__(self, d):\n        pass\n", "A", "temperature")
    assert not lacks_parameter("class A:\n    def __init__(self, d, *, temperature=1):\n        pass\n", "A",
                               "temperature")
    assert not lacks_parameter("class A(B):\n    pass\n", "A", "temperature")  # its __init__ is elsewhere
    assert not lacks_parameter("def softmax(:\n", "softmax", "temperature")


@pytest.mark.parametrize("ex_id", ["ex01", "ex03"])
def test_code_with_the_parameter_is_judged_at_that_temperature(ex_id):
    path, _ = WRONG[ex_id]
    module = load_module(ex_id, path.read_text(encoding="utf-8"), f"wrong_{ex_id}")
    verdicts = []
    for check in _temperature_checks(ex_id):
        reference = PROCEDURES[check.procedure](reference_modules, check.spec)
        verdicts.append(judge_check(check, reference, _run(check, lambda name: module), None, SandboxLimits()).passed)
        assert judge_check(check, reference, _run(check, reference_modules), None, SandboxLimits()).passed
    assert not all(verdicts)  # the file's own slip shows at a temperature other than 1.0


@pytest.mark.slow  # grades four files
def test_a_temperature_slip_fails_with_its_hint_and_old_answers_pass():
    paths = list(OLD.values()) + [path for path, _ in WRONG.values()]
    results = grade_submissions([Submission(p.parent.name, p.read_text(encoding="utf-8"), p.name) for p in paths])
    for result in results[:2]:
        assert result.passed and not any(c.hint for c in result.checks), result.summary
        assert sum("not applicable" in c.message for c in result.checks) == 2
    for (ex_id, (_, mistake)), result in zip(WRONG.items(), results[2:]):
        failing = [c for c in result.checks if not c.passed]
        assert failing and all(c.id.endswith(("softmax.7", "masked_softmax.6", "DotProductAttention.8",
                                              "AdditiveAttention.7")) for c in failing), [c.id for c in failing]
        assert failing[0].hint == hint_text(ex_id, next(m for m in checks_registry.for_exercise(ex_id).MISTAKES
                                                       if m.id == mistake))
