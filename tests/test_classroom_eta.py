"""The wait forecast: the claim replay on hand-built queues (times worked out by hand in each test), the measured
grading times, and what a page and `status --submission` show."""

from datetime import timedelta

import pytest
from sqlalchemy import update

from classroom.line import eta, grading_times, line, live, queue
from classroom.data import turns
from classroom.data.submissions import submit
from classroom.cli import submission_wait
from classroom.data.models import REGRADE, SUBMIT, Job, Result, Worker, utcnow
from course.common.i18n import t
from tests.classroom_support import add_graded, run_cli, user_id

ANN, BOB, CY = "ann@class.test", "bob@class.test", "cy@class.test"


def _submits(*seconds):
    return [eta.Pending(f"s{i}", SUBMIT, s) for i, s in enumerate(seconds, 1)]


def test_each_free_worker_takes_the_next_job_in_claim_order():
    # worker 1 idle, worker 2 busy for 4 s: s1 on w1 0-10, s2 on w2 4-7, s3 on w2 7-13
    times = eta.schedule(_submits(10, 3, 6), in_flight=[4.0], workers=2)
    assert times == {"s1": (0, 10), "s2": (4, 7), "s3": (7, 13)}


def test_a_due_regrade_goes_ahead_once_per_age():
    # one worker; regrades due in 50 s, age 60 s: s1 0-30, s2 30-60, at 60 the regrade is due: r1 60-65 (next due
    # at 120), s3 65-95, then only regrades: r2 95-100
    pending = _submits(30, 30, 30) + [eta.Pending("r1", REGRADE, 5), eta.Pending("r2", REGRADE, 5)]
    times = eta.schedule(pending, in_flight=[], workers=1, regrade_due_in=50, age_s=60)
    assert times == {"s1": (0, 30), "s2": (30, 60), "r1": (60, 65), "s3": (65, 95), "r2": (95, 100)}


def test_without_a_regrade_clock_regrades_wait_for_every_submission():
    pending = [eta.Pending("r1", REGRADE, 5)] + _submits(2, 2)  # the order given need not list submissions first
    assert eta.schedule(pending, in_flight=[1.0], workers=1) == {"s1": (1, 3), "s2": (3, 5), "r1": (5, 10)}


def test_each_claim_comes_an_overhead_after_a_verdict_and_an_idle_worker_at_its_next_poll():
    # w1 busy for 4 s, then 1 s to its next claim; w2 idle, polls in 0.5 s: s1 on w2 0.5-3.5, s2 on w2 4.5-6.5
    # (free at 3.5 + 1), s3 on w1 5-11 (free at 4 + 1)
    times = eta.schedule(_submits(3, 2, 6), in_flight=[4.0], workers=2, overhead_s=1.0, idle_s=0.5)
    assert times == {"s1": (0.5, 3.5), "s2": (4.5, 6.5), "s3": (5.0, 11.0)}


def test_the_overhead_is_measured_between_back_to_back_claims(class_store):
    uid = user_id(class_store, ANN)
    base = utcnow() - timedelta(minutes=10)
    # (queued at, claimed at, verdict at) in seconds after base, all on one worker
    jobs = [(0, 1, 5), (2, 5.4, 8), (3, 8.8, 9), (20, 21, 22)]  # gaps 0.4 and 0.8; the last was queued idle
    for queued, claimed, done in jobs:
        sid = submit(class_store, uid, "ex00", f"x = {claimed}\n", "ex00.py")
        at = [base + timedelta(seconds=x) for x in (queued, claimed, done)]
        with class_store.session() as session:
            session.execute(update(Job).where(Job.submission_id == sid).values(
                state="done", worker_id="w", created_at=at[0], started_at=at[1], finished_at=at[2]))
    with class_store.session() as session:
        assert grading_times.overhead_s(session) == pytest.approx(0.6)
        assert grading_times.measured(session).overhead_s == pytest.approx(0.6)
        assert grading_times.overhead_s(session, gaps=1) == pytest.approx(0.8)  # the newest claim only


def test_no_live_worker_means_no_forecast():
    assert eta.schedule(_submits(3), in_flight=[], workers=0) is None
    assert eta.sentence(2, None, None, "en") == t("classroom.eta_no_worker", "en")


def test_more_jobs_in_flight_than_live_workers_keeps_the_soonest_free():
    assert eta.schedule(_submits(1), in_flight=[8.0, 2.0], workers=1) == {"s1": (2, 3)}


def test_expected_and_remaining_times():
    quick = grading_times.Timing(3.0, 6.0, 0.0, 20.0)
    durations = {("ex01", SUBMIT): quick, ("ex03", REGRADE): grading_times.Timing(9.0, 36.0, 0.0, 20.0)}
    assert eta.expected_s(durations, "ex01", SUBMIT) == 3.0
    assert eta.expected_s(durations, "ex03", SUBMIT) == 9.0  # only regrades measured: their time
    assert eta.expected_s(durations, "ex05", REGRADE) == 6.0  # not measured: the mean of those measured
    assert eta.expected_s({}, "ex05", REGRADE) == grading_times.DEFAULT_JOB_S
    assert eta.remaining_s(quick, 1.0) == 2.0
    assert eta.remaining_s(quick, 4.5) == 0.0  # overdue but within its normal time: expected any moment
    assert eta.remaining_s(quick, 7.0) == 13.0  # past its normal time: a hang, runs to its hang time
    assert eta.remaining_s(quick, 25.0) == 0.0


def test_timings_of_jobs_that_hang_and_of_jobs_in_flight():
    # ten jobs of 1 s, one of them a hang of 20 s (the limit): typical 1 s, normal 4 x 1 s, hang share 1/10
    assert (eta.LIMIT_S, eta.HANG_FLOOR_S, eta.SET_ASIDE_FLOOR_S) == (20.0, 2.0, 0.5)
    found = grading_times.timing_of([1.0] * 9 + [20.5])
    assert found == grading_times.Timing(1.0, 4.0, 0.1, 20.5)
    assert found.expected_s() == pytest.approx(1.0 + 0.1 * 19.5)  # the mean, for the regrades behind the line
    assert eta.remaining_s(found, 0.5) == pytest.approx(0.5)  # in flight: its typical time left
    assert eta.share_in_flight(found, 0.5) == 0.1  # ... and its chance of a hang, counted apart
    assert eta.remaining_s(found, 6.0) == pytest.approx(14.5)  # past its normal time: a hang, to its hang time
    assert eta.share_in_flight(found, 6.0) == 0.0  # that hang is in its time left
    # jobs of 0.2 s: a worker's first job, 1.4 s claim to verdict (its sandbox's start), is past 4 x 0.2 s but
    # not a hang in flight (the floor, 2 s); its first run is set aside past 0.8 s of the run itself (the limit
    # counts from the run's start in the warm server, after the sandbox's start)
    quick = grading_times.timing_of([0.2] * 10)
    assert quick.normal_s == pytest.approx(0.8) and eta.hangs_after(quick) == eta.HANG_FLOOR_S
    assert eta.remaining_s(quick, 1.4) == 0.0 and eta.share_in_flight(quick, 1.4) == 0.0
    assert eta.remaining_s(eta.rerun(quick, 0.2), 1.9) == 0.0  # a regrade at 1.9 s: late, not a hang
    assert eta.remaining_s(eta.rerun(quick, 0.2), 2.5) == pytest.approx(17.5)  # past the floor: a hang
    assert eta.set_aside_s(quick) == pytest.approx(0.8)
    assert eta.set_aside_s(grading_times.timing_of([0.05] * 10)) == eta.SET_ASIDE_FLOOR_S  # 4 x 0.05 s: the floor
    # a slow job that did not hang (1 s median, one of 6 s) makes the normal time longer, not a hang
    assert grading_times.timing_of([1.0, 1.0, 1.0, 6.0]) == grading_times.Timing(2.25, 6.0, 0.0, eta.LIMIT_S)
    # the typical time follows the newest jobs (the machine's load changes): the last TYPICAL that did not hang
    slower = grading_times.timing_of([1.0] * 18 + [20.0] * 2 + [2.0] * grading_times.TYPICAL)
    assert (slower.typical_s, slower.hang_share) == (2.0, pytest.approx(2 / 30))  # the share: all 30


def test_the_likely_number_of_hangs_is_the_median_of_a_poisson_count():
    # P(0) = e^-m: 0.549 at m = 0.6, 0.497 at 0.7; P(<= 1) = e^-m (1 + m): 0.525 at 1.6, 0.493 at 1.7
    assert [eta.likely_hangs(m) for m in (0.0, 0.6, 0.7, 1.6, 1.7)] == [0, 0, 1, 1, 2]
    assert eta.likely_hangs(100.0) == 100  # a large count: its mean, within a third


def test_the_replay_places_the_hangs_the_jobs_ahead_most_likely_hold():
    found = grading_times.timing_of([1.0] * 9 + [20.5])  # typical 1 s, hang share 0.1, hang 20.5 s
    # one worker, ten such jobs: the expected hangs reach 0.7 at the seventh, where the median count becomes 1:
    # it holds its worker 20.5 s; every other job 1 s, as most will (the mean would charge each 2.95 s)
    times = eta.schedule([eta.pending(f"s{i}", SUBMIT, found) for i in range(1, 11)], [], workers=1)
    assert [times[f"s{i}"][0] for i in range(1, 11)] == pytest.approx([0, 1, 2, 3, 4, 5, 6, 26.5, 27.5, 28.5])
    assert times["s7"] == pytest.approx((6, 7))  # its own feedback: after its typical time
    # the job in flight has run 8 s of an exercise whose jobs take 1 s: a hang, 12.5 s left; the job behind it
    # starts then, and carries no hang (its 0.1 alone is not likely one)
    times = eta.schedule([eta.pending("s1", SUBMIT, found)], [eta.remaining_s(found, 8.0)], workers=1,
                         hangs_in_flight=eta.share_in_flight(found, 8.0))
    assert times["s1"] == pytest.approx((12.5, 13.5))
    # jobs in flight that may still hang (0.65 of one between them) and one more share: 0.75, likely one hang,
    # placed on the queued job (the time left of those in flight holds none)
    times = eta.schedule([eta.pending("s1", SUBMIT, found), eta.pending("s2", SUBMIT, found)], [0.5], workers=1,
                         hangs_in_flight=0.65)
    assert times == pytest.approx({"s1": (0.5, 1.5), "s2": (21.0, 22.0)})


def _graded(worker, ex_id, seconds, start, queued=None, batch=SUBMIT):
    """A graded job on `worker` claimed `start` s after a fixed moment (queued then, or at `queued`)."""
    base = utcnow() - timedelta(hours=1)
    at = base + timedelta(seconds=start)
    return grading_times.Graded(worker, ex_id, batch, base + timedelta(seconds=start if queued is None else queued), at,
                      at + timedelta(seconds=seconds))


def _back_to_back(worker, jobs, start=0.0):
    """Graded jobs [(exercise, seconds)] one after another on one worker (each queued before the one before it ended)."""
    found = []
    for ex_id, seconds in jobs:
        found.append(_graded(worker, ex_id, seconds, start, queued=0.0))
        start += seconds + 0.05
    return found


def test_the_typical_times_follow_the_pace_of_the_newest_jobs():
    # after the cold first jobs, 8 jobs of ex01 at 1 s and 4 of ex02 at 2 s, then the newest PACE_JOBS of ex01 at
    # 1.5 s: the machine runs at 1.5 x the pace of the jobs before them; ex02 (none newest) follows it too
    newest = grading_times.PACE_JOBS
    earlier = [("ex01", 5.0), ("ex02", 9.0)] + [("ex01", 1.0)] * 8 + [("ex02", 2.0)] * 4
    assert len(earlier) - 2 >= newest  # enough jobs before the newest for a pace
    found = grading_times.timings(_back_to_back("w", earlier + [("ex01", 1.5)] * newest))
    assert found[("ex01", SUBMIT)].typical_s == pytest.approx(1.5)  # its earlier 1 s x 1.5
    assert found[("ex02", SUBMIT)].typical_s == pytest.approx(3.0)  # its earlier 2 s x 1.5
    assert found[("ex01", SUBMIT)].normal_s == pytest.approx(6.0)  # 4 x the median, at that pace too
    # a slower job among the newest does not move the median of their ratios; a hang is not one of them
    slower = [("ex01", 1.5)] * (newest - 2) + [("ex01", 6.0), ("ex01", 21.0), ("ex01", 1.5)]
    assert grading_times.timings(_back_to_back("w", earlier + slower))[("ex01", SUBMIT)].typical_s == pytest.approx(1.5)
    # until the newest have as many jobs before them, the typical time is the mean of the newest TYPICAL
    few = grading_times.timings(_back_to_back("w", [("ex01", 5.0)] + [("ex01", 1.0)] * 5 + [("ex01", 1.6)] * 5))
    assert few[("ex01", SUBMIT)].typical_s == pytest.approx(1.3)
    # a regrade's jobs with no regrade before them are paced against the exercise's submissions
    graded = _back_to_back("w", earlier + [("ex02", 2.0)] * 2) + _back_to_back("w", [("ex01", 2.0)] * newest, 100)
    graded = graded[:-newest] + [job._replace(batch=REGRADE) for job in graded[-newest:]]
    found = grading_times.timings(graded)
    assert found[("ex02", SUBMIT)].typical_s == pytest.approx(4.0)
    assert found[("ex01", REGRADE)].typical_s == pytest.approx(2.0)


def test_an_idle_worker_claims_after_the_delay_measured_on_jobs_that_found_one_idle():
    # a worker's first job, then three jobs queued while it was idle, claimed 0.2, 0.9 and 0.4 s after they were
    # queued (its poll, the claim): the median 0.4 s
    graded = [_graded("w", "ex01", 4.0, 0.0)] + [
        _graded("w", "ex01", 1.0, start + delay, queued=start) for delay, start in ((0.2, 10), (0.9, 20), (0.4, 30))]
    assert grading_times.idle_of(graded) == pytest.approx(0.4)
    assert grading_times.idle_of(graded, jobs=2) == pytest.approx(0.65)  # the newest two: 0.9 and 0.4 s
    assert grading_times.measured_of(graded).idle_s == pytest.approx(0.4)
    # a job queued before its worker's previous verdict did not find it idle; none measured: half a poll
    assert grading_times.idle_of(_back_to_back("w", [("ex01", 1.0)] * 4)) == grading_times.IDLE_POLL_S / 2


def test_waits_in_words():
    assert [eta.about(s, "en") for s in (4, 12, 42, 58, 95, 7300)] == [
        "a few seconds", "about 10 s", "about 40 s", "about 1 min", "about 2 min", "about 2 h"]
    assert eta.sentence(3, 40, 65, "en") == "Position 3 in the queue: about 40 s to start, feedback in about 1 min."
    assert eta.sentence(3, 40, 65, "zh") == "队列第 3 位：约 40 秒后开始评分，约 1 分钟后出结果。"
    assert eta.sentence(None, 0, 8, "en") == "Feedback in a few seconds."


def _history(store, email, ex_id, seconds, reason="submit", state="done", worker="w0"):
    """A graded job that took `seconds` from claim to verdict on `worker`, before the round robin's window (its
    learner's next job takes turn 1: classroom/data/turns.py)."""
    sid = add_graded(store, email, ex_id, 1.0, "passed")
    end = utcnow() - timedelta(seconds=turns.FAIR_WINDOW_S + 60)
    with store.session() as session:
        session.execute(update(Job).where(Job.submission_id == sid).values(
            reason=reason, state=state, worker_id=worker, started_at=end - timedelta(seconds=seconds), finished_at=end))
    return sid


def test_measured_times_are_typical_times_of_the_last_jobs_per_exercise_and_kind(class_store):
    _history(class_store, ANN, "ex01", 50)  # the worker's first job (it started its warm server): left out
    for seconds in (2, 4, 12):
        _history(class_store, ANN, "ex01", seconds)
    _history(class_store, ANN, "ex01", 1, reason="regrade")
    _history(class_store, ANN, "ex01", 100, state="error")  # given up: not a grading time
    _history(class_store, BOB, "ex03", 9)  # w0's first ex03 (it loads what grading ex03 needs): left out
    _history(class_store, BOB, "ex03", 6)
    _history(class_store, BOB, "ex03", 30, worker="w1")  # w1's first job: left out
    for seconds in (5, 1, 1, 2, 30):  # the first: a cold start; 30 s: a hang (ran to the 20 s limit)
        _history(class_store, CY, "ex02", seconds)
    with class_store.session() as session:
        found = {key: found.typical_s for key, found in grading_times.durations(session).items()}
        assert found == {("ex01", SUBMIT): 6.0, ("ex01", REGRADE): 1.0, ("ex03", SUBMIT): 6.0,
                         ("ex02", SUBMIT): pytest.approx(4 / 3)}
        assert grading_times.durations(session)[("ex02", SUBMIT)].hang_share == 0.25  # 30 s ran to the limit: 1 of 4
        assert grading_times.durations(session)[("ex02", SUBMIT)].hang_s == 30.0
        assert grading_times.durations(session, history=2)[("ex01", SUBMIT)].typical_s == 8.0  # the last two: 4 and 12
        # the last 3 read, 1 cold
        assert grading_times.durations(session, read=3) == {("ex02", SUBMIT): grading_times.timing_of([2, 30])}


def _claim(store, worker, seconds_ago):
    with store.session() as session:
        return queue.claim_in(session, worker, now=utcnow() - timedelta(seconds=seconds_ago))


def test_a_page_forecasts_from_the_job_in_flight_and_the_queue_ahead(class_store):
    for _ in range(3):
        _history(class_store, ANN, "ex00", 10)  # ex00 takes 10 s here (after the worker's first job)
    queue.register_worker(class_store, "w", "host", 1, "process")
    ann, bob, cy = (submit(class_store, user_id(class_store, e), "ex00", "x = 1\n", "ex00.py")
                    for e in (ANN, BOB, CY))
    _claim(class_store, "w", 4)  # ann's, claimed 4 s ago: 6 s left
    snap = live.Snapshot(class_store)
    # ann's has 6 s left (less the time since the claim); one worker: bob's runs from then for 10 s, then cy's,
    # each claim grading_times.DEFAULT_OVERHEAD_S after the verdict before it (no back-to-back claim measured yet)
    left, gap = snap.get(ann).finish_s, grading_times.DEFAULT_OVERHEAD_S
    assert snap.get(ann).state == "running" and 3 < left <= 6
    got = snap.get(cy)
    assert (got.state, got.position, got.delayed) == ("queued", 2, False)
    assert (got.start_s, got.finish_s) == (pytest.approx(left + gap + 10 + gap), pytest.approx(left + 2 * gap + 20))
    assert snap.of(user_id(class_store, BOB), cy) == live.LiveState("finished")  # not bob's to follow
    queue.unregister_worker(class_store, "w")
    gone = live.Snapshot(class_store).get(cy)
    assert (gone.position, gone.delayed, gone.start_s, gone.finish_s) == (2, True, None, None)


def test_during_a_regrade_a_page_shows_the_claim_order_position(class_store):
    old = [_history(class_store, e, "ex00", 2) for e in (ANN, ANN, BOB)]
    queue.enqueue_regrade(class_store, old)
    sid = submit(class_store, user_id(class_store, CY), "ex00", "x = 1\n", "ex00.py")
    snap = live.Snapshot(class_store)
    assert snap.get(sid).position == 1  # ahead of the three regrades, as the workers will claim it
    for submission in old + [sid]:
        assert line.position(class_store, submission) == ("queued", snap.get(submission).position)


def test_status_prints_a_submissions_forecast(class_store, sqlite_url):
    queue.register_worker(class_store, "w", "host", 1, "process")
    sid = submit(class_store, user_id(class_store, ANN), "ex00", "x = 1\n", "ex00.py")
    poll = grading_times.IDLE_POLL_S / 2  # the idle worker's next poll, on average (the status prints tenths of a second)
    finish = poll + grading_times.DEFAULT_JOB_S
    assert submission_wait(class_store, sid) == {"id": sid, "state": "queued", "position": 1, "delayed": False,
                                                 "start_s": round(poll, 1), "finish_s": round(finish, 1)}
    out = run_cli("status", "--db", sqlite_url, "--submission", sid)
    assert out.returncode == 0, out.stderr
    assert f"submission {sid}: queued, Position 1 in the queue: a few seconds to start" in out.stdout


def test_a_dead_worker_gives_no_forecast_and_its_lapsed_job_is_forecast_again(class_store):
    for _ in range(2):
        _history(class_store, ANN, "ex00", 10)
    queue.register_worker(class_store, "dead", "host", 1, "process", lease_s=5)
    ann, bob = (submit(class_store, user_id(class_store, e), "ex00", "x = 1\n", "ex00.py") for e in (ANN, BOB))
    with class_store.session() as session:  # "dead" claimed ann's 20 s ago with a 5 s lease, and was not heard since
        queue.claim_in(session, "dead", lease_s=5, now=utcnow() - timedelta(seconds=20))
        session.execute(update(Worker).where(Worker.id == "dead").values(last_seen=utcnow() - timedelta(seconds=20)))
    gone = live.Snapshot(class_store)
    assert (gone.get(ann).state, gone.get(ann).delayed, gone.get(ann).finish_s) == ("running", True, None)
    assert (gone.get(bob).position, gone.get(bob).delayed, gone.get(bob).start_s) == (1, True, None)
    queue.register_worker(class_store, "fresh", "host", 2, "process")
    back = live.Snapshot(class_store)  # the lapsed job is claimed first again (older), then bob's: at the fresh
    poll, gap = grading_times.IDLE_POLL_S / 2, grading_times.DEFAULT_OVERHEAD_S  # worker's next poll, and after ann's verdict
    assert (back.get(ann).start_s, back.get(ann).finish_s) == (poll, poll + 10.0)
    assert (back.get(bob).start_s, back.get(bob).finish_s) == (poll + 10.0 + gap, poll + 20.0 + gap)


def _verdict_took(store, submission_id, seconds):
    """Say that a submission's stored verdict took `seconds` from claim to verdict."""
    with store.session() as session:
        session.execute(update(Result).where(Result.submission_id == submission_id).values(grading_s=seconds))


def test_a_regrade_hangs_in_the_forecast_only_if_its_codes_newest_verdict_hung(class_store):
    for seconds in (2, 2, 2, 20, 20):  # ex00: the first a cold start; then typical 2 s, and half ran to the limit
        _history(class_store, ANN, "ex00", seconds)
    quick, stuck = (add_graded(class_store, e, "ex00", 0.5, "failed") for e in (BOB, CY))
    _verdict_took(class_store, quick, 2.0)
    _verdict_took(class_store, stuck, 20.4)  # its code ran to the limit
    queue.enqueue_regrade(class_store, [quick, stuck])
    queue.register_worker(class_store, "w", "host", 1, "process")
    _claim(class_store, "w", 0)  # the quick one's regrade, now in flight
    new = submit(class_store, user_id(class_store, ANN), "ex00", "x = 1\n", "ex00.py")
    snap = live.Snapshot(class_store)
    gap = snap.overhead_s
    got, regrade = snap.get(new), snap.get(stuck)
    assert (got.position, regrade.position) == (1, 2)
    assert got.start_s == pytest.approx(2 + gap, abs=0.2)  # after the regrade in flight's typical 2 s
    # the new submission may hang (half of ex00's jobs did), the regrade in flight not (its code did not): 0.5 of a
    # hang ahead, none likely; with the exercise's share the two would make 1.0, and the new one a likely hang
    assert regrade.start_s == pytest.approx(got.start_s + 2 + gap, abs=0.01)
    assert regrade.finish_s == pytest.approx(regrade.start_s + 20, abs=0.01)  # it will hang again: 20 s, not 2
