"""A submission whose first run passes its exercise's normal time is set aside (classroom/line/queue.py `set_aside`,
classroom/line/worker.py): it runs again with the whole time limit after the other submissions, and before regrades.
The queue's rules on SQLite and Postgres; the worker's on real grading; the wait forecast's on hand-worked
numbers."""

from datetime import timedelta

import pytest
from sqlalchemy import func, select

from classroom.line import eta, grading_times, line, live, queue, reference_times, worker
from classroom.data.submissions import submit
from classroom.data.db import Store
from classroom.data.models import Job, Result, Submission, utcnow
from tests.classroom_support import claim_at, passed_verdict, user_id


def test_a_set_aside_submission_runs_after_the_other_submissions_and_before_regrades(any_store):
    ann, bob, cy = (user_id(any_store, f"{n}@class.test") for n in ("ann", "bob", "cy"))
    old = submit(any_store, cy, "ex00", "x = 0\n", "ex00.py")
    first = claim_at(any_store, "w")
    assert first.may_set_aside  # a submission's first run
    assert queue.finish(any_store, first, passed_verdict())
    queue.enqueue_regrade(any_store)
    slow = submit(any_store, ann, "ex00", "while True: pass\n", "ex00.py")
    fresh = [submit(any_store, bob, "ex00", f"x = {i}\n", "ex00.py") for i in range(2)]
    probe = claim_at(any_store, "w1")
    assert probe.submission_id == slow and probe.may_set_aside
    assert queue.set_aside(any_store, probe)
    with any_store.session() as session:
        assert session.get(Submission, slow).status == "queued"  # the learner's page shows it queued again
        assert session.scalar(select(func.count(Result.id)).where(Result.submission_id == slow)) == 0
        [stamp] = grading_times.set_asides(session)  # the run's end on its worker, for the gaps (grading_times._claims)
        assert grading_times.set_aside_runs(session, [slow]) == [(slow, None)]  # not graded yet
        assert grading_times.set_aside_runs(session, fresh) == []
        assert stamp.worker_id == "w1" and stamp.at == session.scalar(select(Job.set_aside_at)
                                                                      .where(Job.id == probe.job_id))
        waiting = line.read(session)
        every = queue.claim_order()  # every batch in one query: ordered by the batches' numbers, the claim order
        assert session.scalars(select(every.c.submission_id).order_by(*queue.ordering(every))).all() == fresh + [slow, old]
    assert [row[1] for row in waiting.rows] == fresh + [slow, old]  # claim order: submissions, set aside, regrade
    assert [row[5] for row in waiting.rows] == [eta.SUBMIT, eta.SUBMIT, eta.SET_ASIDE, eta.REGRADE]
    assert line.position(any_store, slow) == ("queued", 3)
    shown = live.Snapshot(any_store)  # what the learner's page shows: queued again, and why
    assert (shown.of(ann, slow).state, shown.of(ann, slow).position, shown.of(ann, slow).set_aside) == ("queued", 3, True)
    assert not shown.of(bob, fresh[0]).set_aside
    order = [claim_at(any_store, f"w{i}") for i in range(2, 6)]
    assert [c.submission_id for c in order] == fresh + [slow, old]
    again = order[2]
    assert (again.job_id, again.attempt, again.may_set_aside) == (probe.job_id, 2, False)  # the whole limit now
    assert not order[3].may_set_aside  # a regrade runs with the whole limit at once
    assert live.Snapshot(any_store).of(ann, slow).state == "running" and live.Snapshot(any_store).of(ann, slow).set_aside
    assert queue.finish(any_store, again, passed_verdict(run_s=20.0))
    with any_store.session() as session:
        assert session.scalar(select(func.count(Result.id)).where(Result.submission_id == slow)) == 1
        assert [aside.worker_id for aside in grading_times.set_asides(session)] == ["w1"]  # kept once graded
        assert grading_times.set_aside_counts(session) == {"runs": 1, "graded": 1, "not_endless": 0}  # it ran to the limit
        assert grading_times.set_aside_runs(session) == [(slow, 20.0)]


def test_setting_aside_needs_the_claim_and_the_run_that_did_it_is_not_counted_as_a_death(any_store):
    ann = user_id(any_store, "ann@class.test")
    sid = submit(any_store, ann, "ex00", "while True: pass\n", "ex00.py")
    now = utcnow()
    lost = claim_at(any_store, "slow", now=now, lease_s=5)
    taken = claim_at(any_store, "w2", now=now + timedelta(seconds=6))  # the lease ran out: another worker has it
    assert queue.set_aside(any_store, lost, clock=lambda: now + timedelta(seconds=7)) is False
    assert queue.set_aside(any_store, taken, clock=lambda: now + timedelta(seconds=8)) is True
    # attempts 2 so far; the full-time run may still be retaken after its worker dies, up to MAX_ATTEMPTS deaths
    later = now + timedelta(seconds=9)
    for attempt in (3, 4):
        claim = claim_at(any_store, f"dies{attempt}", now=later, lease_s=5)
        assert (claim.submission_id, claim.attempt, claim.may_set_aside) == (sid, attempt, False)
        later += timedelta(seconds=6)
    assert claim_at(any_store, "w9", now=later) is None  # given up: 4 attempts, one of them the set-aside run
    with any_store.session() as session:
        [result] = session.scalars(select(Result).where(Result.submission_id == sid)).all()
        assert result.status == "error" and session.scalar(select(Job.state).where(Job.submission_id == sid)) == "error"


def _timing(typical_s, normal_s, hang_share=0.1, hang_s=20.0):
    return grading_times.Timing(typical_s, normal_s, hang_share, hang_s)


def test_the_set_aside_time_is_the_normal_time_when_measured_and_below_the_limit():
    assert eta.set_aside_s(_timing(0.3, 5.0)) == 5.0
    assert eta.set_aside_s(grading_times.DEFAULT) is None  # nothing measured: DEFAULT's normal time is the limit
    assert eta.set_aside_s(_timing(6.0, eta.LIMIT_S + 1)) is None
    assert eta.first_run(_timing(0.3, 5.0)).hang_s == 5.0  # a hang holds its worker until it is set aside
    assert eta.first_run(_timing(0.3, 5.0, hang_s=3.0)).hang_s == 3.0
    assert eta.first_run(grading_times.DEFAULT) == grading_times.DEFAULT


def test_a_hang_in_a_burst_costs_the_jobs_behind_it_its_set_aside_time_and_runs_last():
    """Two workers, ten 1 s submissions of which one in ten hangs (hang time 20 s, normal time 5 s), then the set
    aside one. The likely hang (the Poisson median reaches 1 at 0.7 hangs: the seventh job) holds its worker 5 s,
    not 20; the job set aside runs after the others, for 20 s."""
    timing = eta.first_run(_timing(1.0, 5.0, hang_share=0.1))
    pending = [eta.pending(i, eta.SUBMIT, timing) for i in range(10)]
    pending.append(eta.pending("aside", eta.SET_ASIDE, eta.rerun(_timing(1.0, 5.0), eta.LIMIT_S)))
    times = eta.schedule(pending, [], 2)
    # workers A and B: jobs 0-5 take 1 s each (A: 0, 2, 4 at 0, 1, 2; B: 1, 3, 5), job 6 at 3 s on A holds it to 8 s
    assert [times[i][0] for i in range(7)] == [0, 0, 1, 1, 2, 2, 3]
    assert [times[i][0] for i in range(7, 10)] == [3, 4, 5]  # B takes 7, 8, 9 while A is held
    assert times["aside"] == (6, 26)  # B is free at 6, before A (8): the set-aside run, its whole hang time
    # the mean model without setting aside: job 6 held its worker for 20 s; here 5 s
    before = eta.schedule([eta.pending(i, eta.SUBMIT, _timing(1.0, 5.0, hang_share=0.1)) for i in range(10)], [], 2)
    assert before[9][0] == times[9][0]  # the same here: B carries 7-9 either way
    held = eta.schedule([eta.pending(i, eta.SUBMIT, timing) for i in range(14)], [], 2)
    without = eta.schedule([eta.pending(i, eta.SUBMIT, _timing(1.0, 5.0, hang_share=0.1)) for i in range(14)], [], 2)
    assert held[13][0] == 8 and without[13][0] == 9  # job 13: A is back at 8; held to 23, B alone takes it


def test_a_first_run_past_its_normal_time_has_nothing_left_and_a_set_aside_run_its_hang_time():
    timing = eta.first_run(_timing(1.0, 5.0, hang_share=0.1))
    assert eta.remaining_s(timing, 6.0) == 0.0  # being stopped now, and set aside
    assert eta.share_in_flight(timing, 6.0) == 0.0
    aside = eta.rerun(_timing(1.0, 5.0), eta.LIMIT_S)
    assert eta.remaining_s(aside, 6.0) == pytest.approx(14.0)  # a hang: its 20 s hang time less the 6 s run


def test_the_worker_sets_aside_only_a_submission_s_first_run_and_only_below_the_limit(any_store, monkeypatch):
    ann = user_id(any_store, "ann@class.test")
    submit(any_store, ann, "ex00", "x = 1\n", "ex00.py")
    claim = claim_at(any_store, "w")
    runs = []
    monkeypatch.setattr(reference_times, "run_reference", lambda ex_id, mode: runs.append((ex_id, mode)) or 0.3)
    assert worker.set_aside_after(any_store, claim, 20.0, "strict") == pytest.approx(3.0)  # 10 x its reference
    assert worker.set_aside_after(any_store, claim, 3.0, "strict") is None  # the whole limit is not longer
    regrade = queue.Claim(**{**claim.__dict__, "may_set_aside": False})
    assert worker.set_aside_after(any_store, regrade, 20.0, "strict") is None
    assert runs == [("ex00", "strict")]  # measured once, kept with the store
    monkeypatch.setattr(reference_times, "run_reference", lambda ex_id, mode: None)  # the reference did not pass
    assert worker.set_aside_after(any_store, claim, 20.0, "process") is None
    assert worker.ran_to({"run_s": 5.0}, 5.0) and worker.ran_to({"run_s": 4.9995}, 5.0)
    assert not worker.ran_to({"run_s": 4.9}, 5.0)


def test_the_set_aside_time_is_ten_times_the_reference_s_run_at_least_the_floor():
    assert reference_times.set_aside_s(0.3) == pytest.approx(3.0)
    assert reference_times.set_aside_s(0.02) == eta.SET_ASIDE_FLOOR_S == 0.5
    assert reference_times.set_aside_s(0.3, limit_s=3.5) == pytest.approx(3.0)
    assert reference_times.set_aside_s(0.3, limit_s=3.0) is None
    assert reference_times.set_aside_s(None) is None


def test_a_reference_time_is_measured_once_and_again_once_older_than_its_age(class_store):
    now, runs, lines = [100.0], [], []

    def run(ex_id, mode):
        runs.append((ex_id, mode))
        if len(runs) == 3:
            raise OSError("the sandbox did not start")
        return 0.1 * len(runs)

    def reference(ex_id, mode="strict"):
        return reference_times.reference_s(class_store, ex_id, mode, lines.append, lambda: now[0], run)

    assert reference("ex00") == pytest.approx(0.1)
    now[0] += reference_times.MAX_AGE_S
    assert reference("ex00") == pytest.approx(0.1) and len(runs) == 1  # not older than its age yet
    assert reference("ex01") == pytest.approx(0.2) and reference("ex00", "process") is None  # each its own
    assert "could not time the reference of ex00 (OSError: the sandbox did not start)" in lines[-1], lines
    now[0] += 0.5
    assert reference("ex00") == pytest.approx(0.4) and len(runs) == 4
    assert "reference of ex00 ran 0.400 s: first runs set aside past 4.00 s" in lines[-1], lines


@pytest.mark.slow  # grades for real
def test_an_endless_submission_is_set_aside_and_the_one_behind_it_is_graded_first(class_store, sqlite_url,
                                                                                   monkeypatch):
    """One worker; ann's endless loop, cy's correct but slow file (1.5 s at import), then bob's correct file. With
    a set-aside time of 1 s (a seam, so the test takes seconds), ann's and cy's first runs stop after 1 s, bob's
    verdict comes next, then their runs with the whole limit (3 s): ann's verdict says 3 s, cy's passes. `status`
    counts the two runs set aside and cy's as not endless."""
    from tests.classroom_support import run_cli, solution

    ann, bob, cy = (user_id(class_store, f"{name}@class.test") for name in ("ann", "bob", "cy"))
    endless = submit(class_store, ann, "ex00", "while True:\n    pass\n", "ex00_paths.py")
    slow = submit(class_store, cy, "ex00", "import time\ntime.sleep(1.5)\n" + solution("ex00"),
                            "ex00_paths.py")
    correct = submit(class_store, bob, "ex00", solution("ex00"), "ex00_paths.py")
    monkeypatch.setattr(worker, "set_aside_after",
                        lambda store, claim, limit_s, *_: 1.0 if claim.may_set_aside and limit_s > 1.0 else None)
    lines = []
    worker.run_worker(sqlite_url, sandbox="process", once=True, log=lines.append, job_timeout_s=3)
    with class_store.session() as session:
        results = session.scalars(select(Result).order_by(Result.id)).all()
    assert [r.submission_id for r in results] == [correct, endless, slow], lines
    assert results[0].passed and results[2].passed and 1.5 <= results[2].run_s < 3.0
    assert not results[1].passed and "3 s" in results[1].summary and results[1].run_s >= 3.0, results[1].summary
    assert sum("set aside" in text for text in lines) == 2, lines
    with class_store.session() as session:
        assert grading_times.set_aside_counts(session, limit_s=3.0) == {"runs": 2, "graded": 2, "not_endless": 1}
    shown = run_cli("status", "--db", sqlite_url).stdout  # (the workers' default limit: both ended before it)
    assert "first runs set aside (past their exercise's set-aside time): 2; of the 2 graded since, 2 ended before " \
           f"the {eta.LIMIT_S:g} s limit" in shown, shown


@pytest.mark.slow  # grades for real, on SQLite and Postgres
def test_correct_files_that_run_long_do_not_move_the_set_aside_time(any_store):
    """The ratchet the set-aside time had when it was learnt from learners' jobs (their longest time, at least 4 x
    the median): correct files that sleep past it run again with the whole limit, and their long times raised it
    past the limit (off), so that the next infinite loop ran to the limit. Measured on the reference, it stays, and
    the loop is set aside at it. (The sleep and the limit follow the time measured first: it follows the load.)"""
    from tests.classroom_support import solution

    url = any_store.engine.url.render_as_string(hide_password=False)
    ann, bob = (user_id(any_store, f"{name}@class.test") for name in ("ann", "bob"))
    probe = queue.Claim(0, "probe", 1, 0, ann, "ex00", "", ".py", "ex00_paths.py", 0.0, None, may_set_aside=True)
    for _ in range(2):
        submit(any_store, bob, "ex00", solution("ex00"), "ex00_paths.py")
    worker.run_worker(url, sandbox="process", once=True, log=lambda _: None)
    before = worker.set_aside_after(any_store, probe, eta.LIMIT_S, "process")
    assert before is not None
    sleep_s = before + 0.5
    limit_s = 2 * sleep_s  # below the 4 x median of the slow files' times: learnt from them, the time is off
    slow = [submit(any_store, ann, "ex00", f"import time\ntime.sleep({sleep_s})\n" + solution("ex00"),
                             "ex00_paths.py") for _ in range(5)]
    lines = []
    worker.run_worker(url, sandbox="process", once=True, log=lines.append, job_timeout_s=limit_s)
    with any_store.session() as session:
        results = session.scalars(select(Result).where(Result.submission_id.in_(slow))).all()
        learnt = grading_times.measured(session).durations[("ex00", eta.SUBMIT)]
    assert len(results) == 5 and all(r.passed and r.run_s >= sleep_s for r in results), lines
    assert learnt.normal_s >= limit_s  # learnt from these jobs, the set-aside time would now be off
    fresh = Store(url)  # measured again on a store that kept nothing
    try:
        after = worker.set_aside_after(fresh, probe, limit_s, "process")
    finally:
        fresh.close()
    assert after is not None, (before, after)
    loop = submit(any_store, ann, "ex00", "while True:\n    pass\n", "ex00_paths.py")
    claim = claim_at(any_store, "w")
    assert claim.submission_id == loop and claim.may_set_aside
    lines.clear()
    assert worker.grade_job(any_store, claim, "process", queue.LEASE_S, lines.append, job_timeout_s=limit_s) == 0
    with any_store.session() as session:
        job = session.get(Job, claim.job_id)
        assert (job.state, job.set_aside_by) == ("queued", "w") and job.set_aside_at is not None
        assert session.scalar(select(func.count(Result.id)).where(Result.submission_id == loop)) == 0
    [said] = [text for text in lines if "): set aside" in text]
    assert f"past its set-aside time ({before:.1f} s" in said, said  # the time this store kept: the same


def test_a_run_set_aside_ends_a_worker_s_gap_like_a_verdict():
    """A run set aside leaves no verdict, but its stamp (Job.set_aside_by, set_aside_at): the gap from the worker's
    verdict before it to its next claim holds that run (5 s here), and once counted as overhead it made every job
    of the next burst cost 0.2 s more in the bench. With the stamp the gap after it is a claim's overhead like any
    other, and a long overhead with no run set aside in it still counts."""
    t0 = utcnow()

    def at(seconds):
        return t0 + timedelta(seconds=seconds)

    jobs = [grading_times.Graded("w", "ex00", eta.SUBMIT, at(0), at(0.0), at(0.2)),  # the burst is queued at 0
            grading_times.Graded("w", "ex00", eta.SUBMIT, at(0), at(0.25), at(0.45)),  # 0.05 s after the verdict
            grading_times.Graded("w", "ex00", eta.SUBMIT, at(0), at(5.6), at(5.8)),  # a run set aside at 5.55 s in between
            grading_times.Graded("w", "ex00", eta.SUBMIT, at(0), at(5.85), at(6.0))]  # 0.05 s
    # w2's: another worker's, no gap of w's
    asides = [grading_times.SetAside("w", at(5.55)), grading_times.SetAside("w2", at(5.0))]
    assert grading_times.overhead_of(jobs, asides=asides) == pytest.approx(0.05)
    assert grading_times.overhead_of(jobs) == pytest.approx((0.05 + 5.15 + 0.05) / 3)  # the stamp is what tells them apart
    slow = jobs + [grading_times.Graded("w", "ex00", eta.SUBMIT, at(0), at(6.8), at(7.0))]  # 0.8 s after a verdict: a slow claim
    assert grading_times.overhead_of(slow, asides=asides) == pytest.approx((0.05 + 0.05 + 0.05 + 0.8) / 4)
    # submitted while the worker ran one set aside
    late = grading_times.Graded("w", "ex00", eta.SUBMIT, at(6.5), at(11.6), at(11.8))
    idle = grading_times.Graded("w", "ex00", eta.SUBMIT, at(12.0), at(12.1), at(12.3))  # found it idle: claimed 0.1 s after
    asides.append(grading_times.SetAside("w", at(11.55)))
    assert grading_times.idle_of(jobs + [late, idle], asides=asides) == pytest.approx(0.1)
    assert grading_times.overhead_of(jobs + [late, idle], asides=asides) == pytest.approx(0.05)  # late: claimed 0.05 s after
    assert grading_times.idle_of(jobs + [late, idle]) == pytest.approx((5.1 + 0.1) / 2)  # without the stamps: late looks idle
