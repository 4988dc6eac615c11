"""The wait forecast against real workers: 12 submissions at once to a pool of two, each compared with the
forecast its page showed just after it was acknowledged (bench/classroom.py's part 1b at a small scale)."""

import os
import signal
import statistics

import pytest

from bench.classroom import burst_with_forecasts, forecast_errors, percentile, start_pool, wait_graded
from classroom import store as store_ops
from tests.classroom_support import make_class, solution, stub, user_id

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
EASY = ("ex00", "ex01", "ex06")


@pytest.mark.slow
def test_forecasts_shown_at_submission_are_near_the_actual_waits(tmp_path):
    url = f"sqlite:///{tmp_path / 'class.db'}"
    store = make_class(url, tmp_path)
    roster = tmp_path / "more.csv"
    roster.write_text("email,name,role\n" + "".join(f"m{i:02d}@class.test,M{i},learner\n" for i in range(12)))
    store_ops.import_roster(store, roster)
    users = [user_id(store, f"m{i:02d}@class.test") for i in range(12)]
    mix = [("correct" if i % 2 else "stub", ex_id, solution(ex_id) if i % 2 else stub(ex_id))
           for i, ex_id in enumerate(EASY * 4)]
    pool, _ = start_pool(url, 2, tmp_path, "workers.log")
    try:
        warm = [store_ops.submit(store, users[i], ex_id, source, f"{ex_id}.py")
                for i, (_, ex_id, source) in enumerate(mix)]  # measured grading times for each exercise
        wait_graded(store, warm, timeout_s=600)
        acked = burst_with_forecasts(store, users, mix, "burst")
        graded = wait_graded(store, acked, timeout_s=600)
    finally:
        pool.send_signal(signal.SIGTERM)
        pool.wait(timeout=300)
        store.close()
    errors = forecast_errors(acked, graded)
    median, p90 = statistics.median(errors), percentile(errors, 0.9)
    print(f"forecast error |est - actual| / actual over {len(errors)}: median {median:.0%}, p90 {p90:.0%} "
          f"(load {os.getloadavg()})")
    assert len(errors) == len(acked)  # two live workers: every page showed a forecast
    assert median <= 0.5, [f"{e:.2f}" for e in errors]  # the goal is 25%; the margin is for a loaded machine
