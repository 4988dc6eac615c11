"""The wait forecast against real workers: LEARNERS submissions at once to a pool of two, each compared with the
forecast its page showed just after it was acknowledged (bench/classroom.py's part 1b at a smaller scale), first
without a hang, then while an infinite loop (set aside once, now running with the whole limit) holds one worker
until the sandbox's time limit.

The warm-up measures the grading times and, with one lone submission, an idle worker's claim delay
(grading_times.idle_of). On an idle machine a job takes 0.1-0.2 s and the waits are 0.2-3 s. The waits under
JUDGED_S (1 s, four idle polls) are printed, not judged: the first claims of a burst came 0.1-0.3 s after the
submissions (the poll's phase, and the claim's transaction waiting for the burst's own commits on SQLite), which no
forecast can know, and with a burst of 12 that offset alone put 42% of the forecasts more than 25% short in one run
of eight.

On a shared machine the burst's jobs ran 0.8-1.76x as long as the warm-up's (the load changes from one minute to
the next), which no forecast made at submission can know: the raw error then follows the speed (52% short at 1.76x
in process mode at a load of 16). So the test measures the burst's speed (its jobs' grading times over the typical
times measured before it) and holds the judged forecasts as shown, or else scaled by that speed, to at least
PACED_WITHIN within 25% and a median error of at most PACED_MEDIAN. Raw: a later place in the queue is forecast
later (rank correlation at least 0.7), and no forecast is off by more than the wait itself plus a worker's idle poll.
Measured in the strict sandbox as root, judged waits within 25% as shown (at the burst's speed), without and with
the hang: idle machine (load 0.9-1.6), six runs, 88-100% (96-100%) and 100% (100%); with three busy loops on the
2 cores (load 3.6-4.6), two runs, the bursts ran 1.1-1.5x slower than the warm-up: 84% and 66% (97% and 94%)
without the hang, 0% and 91% (100% and 100%) with it. A forecast that takes the set-aside run in flight for a
normal job (it expects the hung worker back) fails it: 0% within 25% with the hang, 44% short at the median (it
counts two workers where one grades)."""

import os
import signal
import statistics
import time

import pandas as pd
import pytest

from bench.classroom import start_pool, wait_graded
from bench.forecasts import burst_with_forecasts, error_summary, forecast_errors, within
from sqlalchemy import select

from classroom.line import eta, grading_times
from classroom.data.roster import import_roster
from classroom.data.settings import set_setting
from classroom.data.submissions import submit
from classroom.data.models import Job, utcnow
from tests.classroom_support import make_class, solution, stub, user_id

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
EASY = ("ex00", "ex01", "ex06")
LEARNERS = 36  # each burst: one submission each (on an idle machine a job takes 0.1-0.2 s: waits of 0.2-3 s)


@pytest.mark.slow
@pytest.mark.timing
def test_forecasts_shown_at_submission_are_near_the_actual_waits(tmp_path):
    url = f"sqlite:///{tmp_path / 'class.db'}"
    store = make_class(url, tmp_path)
    set_setting(store, "variants", 0)  # "correct" is the published solution: no per-learner variants
    roster = tmp_path / "more.csv"
    roster.write_text("email,name,role\n" + "".join(f"m{i:02d}@class.test,M{i},learner\n" for i in range(LEARNERS)))
    import_roster(store, roster)
    users = [user_id(store, f"m{i:02d}@class.test") for i in range(LEARNERS)]
    mix = [("correct" if i % 2 else "stub", ex_id, solution(ex_id) if i % 2 else stub(ex_id))
           for i, ex_id in enumerate(EASY * (LEARNERS // len(EASY)))]
    pool, _ = start_pool(url, 2, tmp_path, "workers.log")
    try:
        warm = [submit(store, users[i], ex_id, source, f"{ex_id}.py")
                for i, (_, ex_id, source) in enumerate(mix)]  # measured grading times for each exercise
        wait_graded(store, warm, timeout_s=600)
        _, ex_id, source = mix[1]  # both workers idle now: a lone submission measures an idle worker's start
        wait_graded(store, [submit(store, users[0], ex_id, source + "\n# lone\n", f"{ex_id}.py")])
        acked = burst_with_forecasts(store, users, mix, "burst")
        graded = wait_graded(store, acked, timeout_s=600)
        speed = _speed(store, acked)
        hang = submit(store, users[0], "ex00", "while True:\n    pass\n", "ex00.py")
        _wait_running_for(store, hang, HANG_SEEN_S)
        hung_acked = burst_with_forecasts(store, users[1:], mix[1:], "hang")
        hung_graded = wait_graded(store, hung_acked, timeout_s=600)
        hung_speed = _speed(store, hung_acked)
        wait_graded(store, [hang], timeout_s=300)
        hang_s = _took(store, hang)
    finally:
        pool.send_signal(signal.SIGTERM)
        pool.wait(timeout=300)
        store.close()
    bursts = [_measured(acked, graded, speed), _measured(hung_acked, hung_graded, hung_speed)]  # both printed first
    print(f"the hang ran {hang_s:.1f} s (the limit: {eta.LIMIT_S} s)")
    # it did hang: it ran to the limit (20.1 s claim to verdict in three runs against a limit of 20.0 s, a margin
    # too thin to assert on; the other jobs take under a second)
    assert hang_s >= 0.9 * eta.LIMIT_S
    for pairs in bursts:
        _check(pairs)


def _speed(store, acked):
    """How much slower a burst's jobs ran than the forecasts expected: the sum of their grading times (claim to
    verdict, hangs left out) over the sum of the typical times measured on the jobs graded before the burst."""
    since = min(submitted for _, submitted, _ in acked.values())
    with store.session() as session:
        graded = grading_times.recent(session)
    before = grading_times.measured_of([job for job in graded if job.finished_at <= since]).durations
    burst = [job for job in graded if job.created_at >= since and job.seconds() < eta.LIMIT_S]
    return sum(job.seconds() for job in burst) / sum(eta.timing(before, job.exercise_id, job.batch).typical_s
                                                    for job in burst)


def _measured(acked, graded, speed):
    """One burst's forecast errors as shown and at the burst's speed, and its (forecast, actual) pairs, printed."""
    errors = forecast_errors(acked, graded)
    signed = statistics.median(forecast_errors(acked, graded, signed=True))
    # a page shows no time for a job already graded at its first look (a 0.1 s job on an idle worker), or while it
    # sees no live worker (a heartbeat late under load): those have no forecast to judge; most pages show one
    with_forecast = [(sid, submitted, forecast) for sid, (_, submitted, forecast) in acked.items() if forecast]
    assert len(with_forecast) >= 0.8 * len(acked), f"{len(acked) - len(with_forecast)} of {len(acked)} had no forecast"
    pairs = pd.DataFrame([((forecast - submitted).total_seconds(), (graded[sid] - submitted).total_seconds())
                          for sid, submitted, forecast in with_forecast], columns=["forecast", "actual"])
    pairs["at_speed"] = pairs["forecast"] * speed  # the forecast, had it known the burst's speed
    paced = ((pairs["at_speed"] - pairs["actual"]).abs() / pairs["actual"]).tolist()
    print(f"forecast error |est - actual| / actual over {len(errors)}: {error_summary(errors)}, signed median "
          f"{signed:+.0%}; the burst ran at {speed:.2f} x the measured times; at that speed: "
          f"{error_summary(paced)} (load {os.getloadavg()})")
    print(pairs.sort_values("actual").round(2).to_string())
    return pairs


def _check(pairs):
    """The forecasts of one burst against its actual waits, with the burst's speed divided out (the module doc's
    bounds), judged on the waits of at least JUDGED_S."""
    judged = pairs[pairs["actual"] >= JUDGED_S]
    assert len(judged) >= len(pairs) / 2, pairs  # most waits are long enough to judge
    shown = ((judged["forecast"] - judged["actual"]).abs() / judged["actual"]).tolist()
    at_speed = ((judged["at_speed"] - judged["actual"]).abs() / judged["actual"]).tolist()
    # the forecasts as shown, or (on a machine whose speed changed after they were made) at the burst's speed
    assert near(shown) or near(at_speed), f"as shown: {error_summary(shown)}; at speed: {error_summary(at_speed)}"
    # a later place in the queue is forecast later (a forecast that ignores the queue ahead is flat)...
    # Spearman's rank correlation, as the Pearson correlation of the ranks (pandas' method="spearman" needs scipy)
    assert pairs["forecast"].rank().corr(pairs["actual"].rank()) >= 0.7, pairs
    # ... and no forecast is off by more than the wait itself plus a second (an idle poll and a claim)
    assert ((pairs["forecast"] - pairs["actual"]).abs() <= pairs["actual"] + 1.0).all(), pairs


PACED_WITHIN, PACED_MEDIAN = 0.8, 0.2  # at the burst's speed: this share within 25%, and the median error
JUDGED_S = 4 * grading_times.IDLE_POLL_S  # the waits judged: at least four idle polls (1 s). Below, the first
# claims' delay (the poll's phase, and the claim waiting for the burst's own commits on SQLite: 0.1-0.3 s on an idle
# machine) is most of the wait, and no forecast can know it; the page shows such a wait as "a few seconds"


def near(errors):
    """At least PACED_WITHIN of the errors within 25%, and their median at most PACED_MEDIAN."""
    return within(errors, 0.25) >= PACED_WITHIN and statistics.median(errors) <= PACED_MEDIAN


HANG_SEEN_S = 8.0  # the infinite loop has run this long (past ex00's normal time, 4 x its median at least) ...


def _wait_running_for(store, submission_id, seconds, timeout_s=120):
    """Wait until the submission's job has been graded for `seconds` (claimed that long ago, still running)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with store.session() as session:
            state, started = session.execute(select(Job.state, Job.started_at)
                                              .where(Job.submission_id == submission_id)).one()
        assert state in ("queued", "running"), state
        if started is not None and (utcnow() - started).total_seconds() >= seconds:
            return
        time.sleep(0.1)
    raise TimeoutError(f"submission {submission_id} was not graded for {seconds} s within {timeout_s} s")


def _took(store, submission_id):
    """Seconds from claim to verdict of the submission's job."""
    with store.session() as session:
        started, finished = session.execute(select(Job.started_at, Job.finished_at)
                                            .where(Job.submission_id == submission_id)).one()
    return (finished - started).total_seconds()
