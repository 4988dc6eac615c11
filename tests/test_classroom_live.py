"""A deadline's queue: claims go round-robin by learner, open pages share one live snapshot, and the worker's
own error verdicts are worded in the learner's language."""

import threading
import time

from sqlalchemy import event, select

from classroom.web import feedback
from classroom.line import grading, line, live, queue
from classroom.data.submissions import submit
from classroom.data.models import Result
from course.common.i18n import t
from grader.warm_server import ServerFailed
from tests.classroom_support import passed_verdict, user_id
from tests.waiting import FakeClock

ANN, BOB, CY = "ann@class.test", "bob@class.test", "cy@class.test"


def _submit(store, email, source="x = 1\n"):
    return submit(store, user_id(store, email), "ex00", source, "ex00_paths.py")


def test_one_learners_many_jobs_do_not_hold_back_the_others(class_store):
    ann = [_submit(class_store, ANN, f"x = {i}\n") for i in range(4)]
    bob, cy = _submit(class_store, BOB), _submit(class_store, CY)
    assert line.position(class_store, bob) == ("queued", 2)
    assert line.position(class_store, ann[1]) == ("queued", 4)
    order = []
    while (claim := queue.claim(class_store, "w")) is not None:
        order.append(claim.submission_id)
    assert order == [ann[0], bob, cy, ann[1], ann[2], ann[3]]


def test_a_learner_with_a_job_running_waits_behind_the_others_first(class_store):
    ann = [_submit(class_store, ANN, f"x = {i}\n") for i in range(3)]
    first = queue.claim(class_store, "w1")
    assert first.submission_id == ann[0]
    bob = _submit(class_store, BOB)  # submitted after ann's queue was long
    assert line.position(class_store, bob) == ("queued", 1)
    assert queue.claim(class_store, "w2").submission_id == bob


def _count_queries(store):
    """A list that grows by one per SELECT the store's engine runs."""
    seen = []
    event.listen(store.engine, "before_cursor_execute",
                 lambda conn, cursor, statement, *rest: seen.append(1) if statement.lstrip().upper().startswith("SELECT")
                 else None)
    return seen


def test_fifty_open_pages_cost_one_read_per_interval(class_store, monkeypatch):
    ids = [_submit(class_store, email) for email in (ANN, BOB, CY)]
    users = [user_id(class_store, email) for email in (ANN, BOB, CY)]
    live.snapshot(class_store, max_age_s=0)  # a fresh one
    monkeypatch.setattr(live, "MAX_AGE_S", 60.0)  # every poll below falls within one interval, however slow
    seen = _count_queries(class_store)
    gate, states = threading.Barrier(50), []

    def page(i):
        gate.wait()
        states.append(live.state_of(class_store, users[i % 3], ids[i % 3]))

    threads = [threading.Thread(target=page, args=(i,)) for i in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 0  # the snapshot was fresh: no page touched the database
    assert [s.position for s in states].count(2) == len([i for i in range(50) if i % 3 == 1])
    late = time.monotonic()
    assert live.state_of(class_store, users[0], ids[0], late).state == "queued"  # followed from after the read
    assert len(seen) == 5  # one snapshot: the regrade clock, the submissions, the first and the running regrades, the workers


def test_a_change_shows_within_a_second(class_store):
    assert live.POLL_S + live.MAX_AGE_S <= 1.0
    ann = user_id(class_store, ANN)
    live.snapshot(class_store, max_age_s=0)
    clock = FakeClock(time.monotonic())  # the snapshot's age, moved by the test
    acknowledged = clock()
    sid = _submit(class_store, ANN)
    assert live.state_of(class_store, ann, sid, acknowledged, clock) == live.LiveState("queued", 1, True)  # no worker
    assert live.state_of(class_store, user_id(class_store, BOB), sid, clock=clock).state == "finished"  # not bob's
    claim = queue.claim(class_store, "w")
    assert live.state_of(class_store, ann, sid, clock=clock).state == "queued"  # the snapshot is still fresh
    clock.advance(live.MAX_AGE_S + 0.01)
    assert live.state_of(class_store, ann, sid, clock=clock).state == "running"
    queue.finish(class_store, claim, passed_verdict())
    clock.advance(live.MAX_AGE_S + 0.01)
    assert live.state_of(class_store, ann, sid, clock=clock).state == "finished"


def test_a_job_given_up_is_worded_in_the_learners_language(class_store):
    sid = submit(class_store, user_id(class_store, ANN), "ex00", "x = 1\n", "ex00_paths.py", lang="zh")
    for attempt in range(queue.MAX_ATTEMPTS):  # its worker "dies" every time: the lease runs out at once
        assert queue.claim(class_store, f"w{attempt}", lease_s=-1.0) is not None
    assert queue.claim(class_store, "last") is None
    with class_store.session() as session:
        result = session.scalars(select(Result).where(Result.submission_id == sid)).one()
    assert result.status == "error" and result.summary == t("classroom.grading_gave_up", "zh", attempts=3)
    assert "中断" in feedback.feedback_text(result.report)


def test_a_sandbox_that_cannot_start_is_said_in_words(class_store):
    submit(class_store, user_id(class_store, BOB), "ex00", "x = 1\n", "ex00_paths.py", lang="zh")
    claim = queue.claim(class_store, "w")
    verdict = grading.failure_verdict(claim, ServerFailed("the warm sandbox server did not start (no answer)"), "strict")
    assert verdict["status"] == "error" and verdict["summary"] == t("classroom.grading_sandbox_down", "zh", tries=1)
    assert "warm sandbox" not in feedback.feedback_text(verdict["report"])
