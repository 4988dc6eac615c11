"""A regrade grades what was submitted: with the dependencies as they stood then, under today's deadlines."""

from datetime import timedelta

import pytest
from sqlalchemy import select

from classroom import cli
from classroom.data.settings import set_rule
from classroom.data.submissions import submit
from classroom.data.models import Result, Submission, utcnow
from classroom.line.worker import run_worker
from tests.classroom_support import solution, user_id


def _newest(store):
    """{submission id: (status, score, late)} from each submission's newest result."""
    with store.session() as session:
        rows = session.execute(select(Submission.id, Result.status, Result.score, Submission.late)
                               .join(Result, Result.submission_id == Submission.id).order_by(Result.id)).all()
    return {sid: (status, score, late) for sid, status, score, late in rows}


@pytest.mark.slow
def test_a_regrade_keeps_dependencies_as_submitted_and_recomputes_lateness(class_store, sqlite_url, capsys):
    ann = user_id(class_store, "ann@class.test")
    set_rule(class_store, "ex01", utcnow() - timedelta(hours=1), "accept", 48, 0.2)
    ex03 = submit(class_store, ann, "ex03", solution("ex03"), "ex03_scoring.py")  # before any ex01
    ex01 = submit(class_store, ann, "ex01", solution("ex01"), "ex01_softmax.py")  # an hour late
    run_worker(sqlite_url, sandbox="process", once=True, log=lambda _: None)
    assert _newest(class_store) == {ex03: ("blocked", 0.0, False), ex01: ("passed", 0.8, True)}
    assert cli.main(["deadline", "ex01", "none", "--db", sqlite_url]) == 0
    assert cli.main(["regrade", "--all", "--here", "--sandbox", "process", "--db", sqlite_url]) == 0
    out = capsys.readouterr()
    assert "dependencies as they stood when it was submitted" in out.err
    assert f"submission {ex01} (ann@class.test, ex01): score 0.8 -> 1 (passed -> passed)" in out.out
    # ex03 was submitted before ann passed ex01: it stays blocked, not graded with her later code
    assert _newest(class_store) == {ex03: ("blocked", 0.0, False), ex01: ("passed", 1.0, False)}
