"""The queue and the wait forecast stay cheap at 20,000 jobs: a claim (classroom/line/queue.py) and the forecast's
measurements (classroom/line/eta.py) read only what they need, whatever the size of the regrade and of the history.

Timed in this thread's CPU seconds (SQLite runs in it), best of a few, so that other work on a shared machine
does not fail them. At a load average of 12 on 2 cores, ordering the whole queue per claim took 0.038-0.06 s
(now 0.015-0.02 s: the rest is the regrade clock and the submissions' window, which read the state index), and
reading every graded job for the measurements 0.11 s (now 0.005 s)."""

import time
from datetime import timedelta

import pytest
from sqlalchemy import insert, or_, select, update

from classroom.line import eta, grading_times, line, queue
from classroom.data.submissions import submit
from classroom.data.models import Job, Submission, User, utcnow
from tests.classroom_support import make_class

pytestmark = pytest.mark.slow

LEARNERS, PER_LEARNER = 200, 100  # 20,000 submissions, each graded once and queued again for a regrade
CLAIM_CPU_S = 0.03  # one claim behind the 20,000-job regrade, best of 5
MEASURED_CPU_S = 0.04  # the measurements with 20,000 graded jobs in the history, best of 3


def _graded_class(store, now):
    """LEARNERS x PER_LEARNER submissions of ex00, each with a done job of 1 s on w0 or w1 (every 25th ran to the
    time limit), then a regrade of all of them queued (each learner's turns 1 to PER_LEARNER, as
    queue.enqueue_regrade gives them) -> the learners' ids."""
    with store.session() as session:
        session.execute(insert(User), [dict(email=f"l{i}@class.test", name=f"L{i}", role="learner", created_at=now)
                                       for i in range(LEARNERS)])
        ids = list(session.scalars(select(User.id).where(User.email.like("l%@class.test")).order_by(User.id)))
        session.execute(insert(Submission), [
            dict(user_id=uid, exercise_id="ex00", source="x = 1\n", kind=".py", filename="ex00.py", created_at=now,
                 status="done", attempts=1, late=False, penalty=0.0, lang="en")
            for uid in ids for _ in range(PER_LEARNER)])
        sids = list(session.scalars(select(Submission.id).order_by(Submission.id)))
        start = now - timedelta(hours=1)
        session.execute(insert(Job), [
            dict(submission_id=sid, reason="submit", state="done", worker_id=f"w{n % 2}", attempts=1, error="",
                 created_at=start, started_at=start + timedelta(seconds=n),
                 finished_at=start + timedelta(seconds=n + (eta.LIMIT_S if n % 25 == 24 else 1.0)))
            for n, sid in enumerate(sids)])
        session.execute(insert(Job), [dict(submission_id=sid, reason="regrade", state="queued", attempts=0,
                                           error="", created_at=now, turn=n % PER_LEARNER + 1)  # as queued
                                      for n, sid in enumerate(sids)])
    return ids


def _best_cpu_s(action, runs):
    """(best CPU seconds of this thread over runs, the results)."""
    spent, results = [], []
    for _ in range(runs):
        start = time.thread_time()
        results.append(action())
        spent.append(time.thread_time() - start)
    return min(spent), results


def _claim_order_in_sql(session, now, read, regrades=True):
    """The first `read` claimable jobs of one class of work (the regrades, or the others) as the claim order's SQL
    ranks the whole of it (the reference): by batch, then turn, then id."""
    order = queue.claim_order(regrades=regrades)
    return [row[0] for row in session.execute(
        select(order.c.job_id).where(or_(order.c.state == "queued", order.c.lease_until < now))
        .order_by(order.c.batch, order.c.turn, order.c.job_id).limit(read))]


def test_a_claim_and_the_measurements_stay_cheap_behind_a_20000_job_regrade(tmp_path):
    store = make_class(f"sqlite:///{tmp_path / 'class.db'}", tmp_path)
    now = utcnow()
    ids = _graded_class(store, now)
    fresh = submit(store, ids[57], "ex00", "x = 2\n", "ex00.py")

    def claim():
        with store.session() as session:
            expected = (_claim_order_in_sql(session, now, 1, regrades=False)
                        or _claim_order_in_sql(session, now, 1, regrades=True))[0]  # submissions first
        with store.session() as session:  # the claim order read in full, then the claim itself, timed
            start = time.thread_time()
            found = queue.claim_in(session, "w", now=now)
            spent = time.thread_time() - start
        return spent, found.job_id, expected

    runs = [claim() for _ in range(5)]
    print(f"claims behind a 20,000-job regrade: CPU {[round(s, 4) for s, *_ in runs]} s")
    assert [found for _, found, _ in runs] == [expected for _, _, expected in runs]  # in claim order
    with store.session() as session:
        assert session.scalar(select(Job.submission_id).where(Job.id == runs[0][1])) == fresh  # submissions first
    assert min(spent for spent, *_ in runs) < CLAIM_CPU_S, runs

    with store.session() as session:
        spent, found = _best_cpu_s(lambda: grading_times.measured(session), 3)
    print(f"measurements over 20,000 graded jobs: CPU {spent:.4f} s")
    timing = found[0].durations[("ex00", eta.SUBMIT)]
    assert (timing.typical_s, timing.hang_share, timing.hang_s) == (1.0, pytest.approx(2 / 30), eta.LIMIT_S)  # 2 of the last 30
    assert spent < MEASURED_CPU_S


LINE_CPU_S = 0.05  # the waiting line behind the 20,000-job regrade, best of 5 (ordering the whole regrade: 0.1-0.4 s)


def test_the_waiting_line_reads_only_the_first_regrades_of_a_20000_job_regrade(tmp_path):
    store = make_class(f"sqlite:///{tmp_path / 'class.db'}", tmp_path)
    now = utcnow()
    _graded_class(store, now)  # each learner's 100 regrades have consecutive ids: 64 learners' first need 6,400
    with store.session() as session:  # three claimed: one still held, one whose lease lapsed (claimable again)
        for job_id, lease in ((20001, 30), (20101, -30), (20301, 30)):
            session.execute(update(Job).where(Job.id == job_id).values(
                state="running", started_at=now, lease_until=now + timedelta(seconds=lease), worker_id="w"))
    with store.session() as session:
        spent, found = _best_cpu_s(lambda: line.read(session, now), 5)
        expected = _claim_order_in_sql(session, now, line.REGRADES_READ)
    print(f"the waiting line behind a 20,000-job regrade: CPU {spent:.4f} s")
    first = [row[0] for row in found[0].rows if row[5] == eta.REGRADE and found[0].claimable(row)]
    assert first == expected and len(first) == line.REGRADES_READ
    assert 20101 in first and 20002 not in first  # a lapsed lease: claimable; behind a held one: a second turn
    assert found[0].regrades_claimable == 20000 - 3 + 1  # the lapsed one counted
    assert spent < LINE_CPU_S
