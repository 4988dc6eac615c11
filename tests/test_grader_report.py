"""The report's JSON read back (Report.from_dict) and the grader's own "blocked" verdict."""

import io
import json
from pathlib import Path

import pytest

from course.common.exercise_index import GRADER_STATUSES
from grader.core import Submission, grade_submissions
from grader.report import REPORT_VERSION, CheckResult, ExerciseResult, Report, print_table

ROOT = Path(__file__).resolve().parent.parent


def source(folder, name):
    return (ROOT / folder / name).read_text(encoding="utf-8")


def table(report):
    out = io.StringIO()
    print_table(report, out=out)
    return out.getvalue()


@pytest.fixture(scope="module")
def graded():
    """A failing, an unwritten and a blocked exercise, graded in Chinese, without references."""
    noscale = source("solutions", "ex03_scoring.py").replace(" / math.sqrt(d)", "")
    return grade_submissions([
        Submission("ex01", source("solutions", "ex01_softmax.py"), "ex01_softmax.py"),
        Submission("ex03", noscale, "ex03_scoring.py"),
        Submission("ex00", source("exercises", "ex00_paths.py"), "ex00_paths.py"),
        Submission("ex05", source("solutions", "ex05_multihead.py"), "ex05_multihead.py", dependencies={}),
    ], references_for_dependencies=False, lang="zh")


def test_a_report_survives_its_json_round_trip(graded):
    report = Report("somewhere", graded, "zh")
    back = Report.from_dict(json.loads(json.dumps(report.to_dict())))
    assert back == report
    assert [type(c) for ex in back.exercises for c in ex.checks] == [CheckResult] * sum(len(e.checks) for e in graded)
    assert table(back) == table(report)
    assert {ex.status for ex in back.exercises} == {"passed", "failed", "not_written", "blocked"}


def test_from_dict_ignores_unknown_fields_and_refuses_what_it_cannot_read(graded):
    data = Report("x", graded[:1]).to_dict()
    data["exercises"][0]["added_later"] = 1
    data["exercises"][0]["checks"][0]["also_later"] = 2
    assert Report.from_dict(data) == Report("x", graded[:1])
    with pytest.raises(ValueError, match="version"):
        Report.from_dict(dict(data, version=REPORT_VERSION + 1))
    data["exercises"][0]["status"] = "mystery"
    with pytest.raises(ValueError, match="mystery"):
        Report.from_dict(data)


def test_a_dependency_that_did_not_pass_blocks_the_exercise_without_running_it(graded):
    ex05 = graded[3]
    assert ex05.status == "blocked" and not ex05.passed and ex05.score == 0.0 and ex05.duration_s == 0.0
    assert ex05.summary.startswith("请先通过 ex01 和 ex03")
    assert [c.id for c in ex05.checks] == ["ex05.dependencies"]
    assert "待前置练习" in table(Report("x", [ex05], "zh"))


@pytest.mark.slow
def test_a_dependency_failing_in_the_same_run_blocks_what_builds_on_it():
    ex01_stub, ex03 = source("exercises", "ex01_softmax.py"), source("solutions", "ex03_scoring.py")
    done = grade_submissions([Submission("ex01", ex01_stub, "ex01_softmax.py"),
                              Submission("ex03", ex03, "ex03_scoring.py")], references_for_dependencies=False)
    assert [r.status for r in done] == ["not_written", "blocked"]
    assert done[1].summary.startswith("pass ex01 first") and "did not pass in this run" in done[1].summary
    with_references = grade_submissions([Submission("ex01", ex01_stub, "ex01_softmax.py"),
                                         Submission("ex03", ex03, "ex03_scoring.py")])
    assert [r.status for r in with_references] == ["not_written", "passed"]  # self-study: the reference stands in


def test_the_error_and_blocked_constructors_speak_the_report_language():
    error = ExerciseResult.error("ex02", "boom", "file", "en")
    assert (error.status, error.summary, error.checks[0].id, error.checks[0].message) == \
        ("error", "boom", "ex02.file", "boom")
    blocked = ExerciseResult.blocked("ex07", ["ex03", "ex05"], hosted=True, lang="en")
    assert blocked.status == "blocked" and blocked.file == "ex07_transformer.py"
    assert blocked.summary.startswith("pass ex03 and ex05 first") and "none of yours has passed yet" in blocked.summary
    assert {error.status, blocked.status} <= set(GRADER_STATUSES)
