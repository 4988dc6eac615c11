"""The Practice page's grading server with the real grader: the second click reuses the warm server and is fast;
a server that was killed is replaced, and the grade still comes back."""

import os
import signal
import time

import pytest

from course.app import grading_client
from course.common.paths import PROJECT_ROOT

pytestmark = pytest.mark.timeout(600)
SOLUTIONS = PROJECT_ROOT / "solutions"


@pytest.mark.slow
@pytest.mark.timing
def test_a_second_grade_reuses_the_warm_server_and_a_killed_one_is_replaced(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_HOME", str(tmp_path / "home"))
    server = grading_client.GradingServer()
    try:
        times, pids = [], []
        for _ in range(2):
            start = time.monotonic()
            report = grading_client.run_grader(["ex03"], target=SOLUTIONS, server=server)
            times.append(time.monotonic() - start)
            pids.append(server.pid)
            assert [(e["id"], e["status"]) for e in report["exercises"]] == [("ex03", "passed")]
        assert pids[0] == pids[1] is not None
        assert times[1] < times[0] / 2 and times[1] < 3.0, times  # no Python start, no torch import
        os.killpg(pids[1], signal.SIGKILL)  # the server and its warm sandbox server
        start = time.monotonic()
        report = grading_client.run_grader(["ex03"], target=SOLUTIONS, server=server, timeout=120)
        assert report["passed"] and server.pid not in (None, pids[0])
        print(f"first {times[0]:.2f} s, second {times[1]:.2f} s, after a kill {time.monotonic() - start:.2f} s "
              f"(load {os.getloadavg()})")
    finally:
        server.close()
