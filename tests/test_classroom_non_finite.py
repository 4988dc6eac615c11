"""A report that carries NaN (an honest ex01 whose masked softmax gives 0/0) is stored on every backend and shown
as NaN; a verdict the database refuses becomes an error verdict at once, not a retry loop.

`python -m pytest -p no:xdist tests/test_classroom_non_finite.py -s -k promptly` prints each job's hold time
(claim -> verdict stored) on SQLite and Postgres; bench/non_finite_verdict.py measures the same with a worker
process of its own.
"""

import json
import math
import threading
import time

import pytest
import torch
from sqlalchemy import select

from classroom.web import feedback
from classroom.line import grading, worker
from classroom.data.submissions import submit
from classroom.data.models import Job, Result
from course.app import weights_view
from course.common import json_numbers
from course.common.i18n import t
from grader import weight_diff
from grader.report import CheckResult, ExerciseResult, Report
from tests.classroom_support import ROOT, run_cli, solution, user_id

NAN_FILE = ROOT / "tests" / "non_finite" / "ex01_zero_over_zero.py"


def _diff_with_non_finite():
    """A weights diff whose learner side holds NaN (the worst cell), inf and -inf."""
    want = torch.full((1, 2, 3), 1 / 3)
    got = want.clone()
    got[0, 0, 0], got[0, 1, 1], got[0, 1, 2] = float("nan"), float("inf"), float("-inf")  # the first is the worst
    return weight_diff.weights_diff("attention_weights", want, got)


def test_json_ready_writes_every_non_finite_number_as_text_and_number_reads_it_back():
    data = {"a": [math.nan, math.inf, -math.inf, 0.5, 2, True, None, "NaN"], "b": (1.5, {"c": float("nan")})}
    ready = json_numbers.json_ready(data)
    text = json.dumps(ready, allow_nan=False)  # strict JSON: would raise on a NaN left as a number
    assert json.loads(text) == {"a": ["NaN", "Infinity", "-Infinity", 0.5, 2, True, None, "NaN"],
                                "b": [1.5, {"c": "NaN"}]}
    assert math.isnan(data["b"][1]["c"])  # the caller's value is left as it was
    assert [json_numbers.number_text(v) for v in ready["a"][:4]] == ["NaN", "inf", "-inf", "0.5"]
    assert json_numbers.number_text(None, ".2f") == "NaN" and json_numbers.number_text(0.25, ".2f") == "0.25"
    assert math.isinf(json_numbers.number("-Infinity")) and json_numbers.number("-Infinity") < 0
    with pytest.raises(ValueError):
        json_numbers.number("hello")


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.slow
def test_a_report_with_nan_weights_is_strict_json_and_shows_nan_after_a_round_trip(lang):
    diff = _diff_with_non_finite()
    check = CheckResult("masked_softmax", False, "wrong weights", kind="mismatch", id="ex01.x.1", weights=diff)
    result = ExerciseResult("ex01", "t", "ex01_softmax.py", "failed", False, 0.5, 0.1, "wrong weights", [check],
                            checks_passed=1, checks_total=2)
    text = json.dumps(Report("t", [result], lang).to_dict(), allow_nan=False)
    stored = json.loads(text)["exercises"][0]["checks"][0]["weights"]
    assert stored["got_value"] == "NaN" and stored["got"][1][1:] == ["Infinity", "-Infinity"]
    table = feedback.feedback_text(json.loads(text))  # the class's feedback: the command line's table
    assert "NaN" in table and "[NaN]" in table and " inf " in table and " -inf " in table
    assert "NaN" in weights_view.worst_sentence(stored, lang)  # the Practice page's sentence
    _, got = weights_view.diff_frames(stored, lang)
    assert math.isnan(got.iloc[0, 0]) and got.iloc[1, 1] == math.inf and got.iloc[1, 2] == -math.inf
    chart = json.dumps(weights_view.diff_chart(stored, lang))  # the heatmap's labels say NaN, not 0.00
    assert '"label": "NaN"' in chart and '"label": "inf"' in chart


def _results(store):
    """{submission id: (status, score, summary, grading_s, checks)} of the stored verdicts."""
    with store.session() as session:
        rows = session.execute(select(Result.submission_id, Result.status, Result.score, Result.summary,
                                      Result.grading_s, Result.checks, Result.report)).all()
    return {row[0]: row[1:] for row in rows}


@pytest.mark.slow
def test_a_nan_verdict_and_two_jobs_behind_it_finish_promptly_on_one_worker(any_store):
    store = any_store
    nan = submit(store, user_id(store, "ann@class.test"), "ex01", NAN_FILE.read_text(), "ex01_softmax.py")
    behind = [submit(store, user_id(store, email), "ex01", solution("ex01"), "ex01_softmax.py")
              for email in ("bob@class.test", "cy@class.test")]
    url = store.engine.url.render_as_string(hide_password=False)
    # one worker process; before NaN was stored as text, on Postgres it retried storing the verdict for ever
    started = time.monotonic()
    result = run_cli("worker", "--db", url, "--once", "--sandbox", "process", timeout=300)
    took = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    assert "database unavailable" not in result.stderr and "refused" not in result.stderr, result.stderr
    found = _results(store)
    status, score, _, hold_s, checks, report = found[nan]
    print(f"\n{store.engine.dialect.name}: NaN job held {hold_s:.1f} s (claim -> verdict stored), {status} {score:.2f}; "
          f"jobs behind it {[round(found[b][3], 1) for b in behind]} s; all three in {took:.1f} s")
    assert status == "failed" and 0.5 < score < 1.0  # its own verdict: most checks pass, the 0/0 row's fail
    assert [found[b][:2] for b in behind] == [("passed", 1.0)] * 2
    shown = [c["weights"]["got_value"] for c in checks if c.get("weights")]
    assert "NaN" in shown, shown  # stored as text, read back the same on both backends
    text = feedback.feedback_text(report)
    assert "got NaN" in text and "[NaN]" in text, text


@pytest.mark.slow
def test_a_verdict_the_database_refuses_becomes_an_error_verdict_at_once(any_store, monkeypatch):
    store = any_store
    postgres = store.is_postgres
    first, second = (submit(store, user_id(store, email), "ex00", solution("ex00"), "ex00_paths.py")
                     for email in ("ann@class.test", "bob@class.test"))
    real = grading.grade_claim

    def refused_by_the_database(store_, claim, sandbox, limits=None):
        """The real verdict, with a value the database refuses for the first submission: a NUL character in
        its summary for Postgres (text may not hold one); bytes in its report for SQLite (which stores any
        text; JSON has no bytes)."""
        verdict = real(store_, claim, sandbox, limits)
        if claim.submission_id != first:
            return verdict
        if postgres:
            return dict(verdict, summary=verdict["summary"] + "\x00")
        return dict(verdict, report=dict(verdict["report"], raw=b"\x00"))

    monkeypatch.setattr(grading, "grade_claim", refused_by_the_database)
    url = store.engine.url.render_as_string(hide_password=False)
    lines, graded = [], []
    thread = threading.Thread(target=lambda: graded.append(
        worker.run_worker(url, sandbox="process", once=True, log=lines.append)), daemon=True)
    thread.start()
    thread.join(timeout=180)  # before: on Postgres it retried storing that verdict for ever
    assert not thread.is_alive(), "\n".join(lines[-5:])
    assert graded == [2]
    assert not [line for line in lines if "database unavailable" in line], lines
    assert [line for line in lines if "the database refused its verdict" in line]
    found = _results(store)
    assert found[first][:3] == ("error", 0.0, t("classroom.grading_not_stored", "en"))
    assert found[second][:2] == ("passed", 1.0)
    with store.session() as session:  # the job is closed: nothing waits for it
        assert set(session.scalars(select(Job.state))) == {"done"}
    assert "refused" in feedback.feedback_text(found[first][5])


def test_outages_are_told_from_refusals():
    import sqlite3

    from sqlalchemy.exc import DataError, IntegrityError, InterfaceError, OperationalError, ProgrammingError

    assert worker.is_outage(OperationalError("x", {}, sqlite3.OperationalError("attempt to write a readonly database")))
    assert worker.is_outage(InterfaceError("x", {}, Exception("the connection is closed")))
    assert not worker.is_outage(DataError("x", {}, Exception("invalid input syntax for type json")))
    assert not worker.is_outage(IntegrityError("x", {}, Exception("duplicate key")))
    assert not worker.is_outage(ProgrammingError("x", {}, sqlite3.ProgrammingError("type 'set' is not supported")))

    class ReadOnly(Exception):
        sqlstate = "25006"  # Postgres: cannot execute INSERT in a read-only transaction

    from sqlalchemy.exc import InternalError

    assert worker.is_outage(InternalError("x", {}, ReadOnly()))
