"""A job whose warm sandbox server dies under it is graded again (up to queue.SANDBOX_TRIES runs), not closed with
an error verdict the learner must resubmit for; a server that dies every time ends the job with an error verdict
saying the grading sandbox failed, after the last run. (A submission that kills its own run gets its own verdict:
tests/test_classroom_grading.py::test_a_submission_that_kills_the_sandbox_gets_its_own_error_verdict.)"""

import os
import signal
import threading
import time

import pytest
from sqlalchemy import select

from classroom.line import queue, worker
from classroom.data.submissions import submit
from classroom.data.models import Job, Result
from course.common.i18n import t
from grader import warm_server
from tests.classroom_support import solution, submit_set_aside, user_id

# a correct ex00 whose import takes a second: its run is under way when the killer strikes
SLOW_SOLUTION = "import time\ntime.sleep(1.0)\n" + solution("ex00")


def _children(pid):
    """Pids of a process's children (from /proc); [] once it is gone."""
    found = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += f.read().split()
        except OSError:
            pass
    return found


class ServerKiller(threading.Thread):
    """Kills this process's warm server of process mode while it serves a run (it has forked the run's manager),
    `times` times at most; counts its kills."""

    def __init__(self, times):
        super().__init__(daemon=True)
        self.times, self.kills, self.stop = times, 0, threading.Event()

    def run(self):
        while self.kills < self.times and not self.stop.wait(0.05):
            pid = warm_server.server_pid("process")
            if pid is not None and _children(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    continue
                self.kills += 1
                while warm_server.server_pid("process") == pid and not self.stop.is_set():
                    time.sleep(0.05)  # until the grader has seen this one gone


def _grade_with(store, killer):
    """Run one worker (this process, process mode) until the queue is empty while `killer` strikes -> (jobs
    graded, its log)."""
    warm_server.recycle("process")  # a fresh server, in this process, for the killer to find
    url, lines, graded = store.engine.url.render_as_string(hide_password=False), [], []
    killer.start()
    thread = threading.Thread(target=lambda: graded.append(
        worker.run_worker(url, sandbox="process", once=True, log=lines.append)), daemon=True)
    thread.start()
    thread.join(timeout=400)
    killer.stop.set()
    assert not thread.is_alive(), "the worker did not finish: " + "\n".join(lines[-8:])
    return graded[0], lines


def _submit_slow(store, user, source=SLOW_SOLUTION, **kwargs):
    """Submit `source` (SLOW_SOLUTION) as a job already set aside: its first run would pass ex00's set-aside time
    (10 times the reference's run, at least 0.5 s) and be set aside, which is not what these tests count. (Jobs
    set aside are claimed after the others: a job meant to run behind it is submitted the same way.)"""
    return submit_set_aside(store, user, "ex00", source, "ex00_paths.py", **kwargs)


def _job_and_results(store, sid):
    with store.session() as session:
        job = session.scalars(select(Job).where(Job.submission_id == sid)).one()
        results = session.execute(select(Result.status, Result.score, Result.summary)
                                  .where(Result.submission_id == sid)).all()
    return job, results


@pytest.mark.slow
def test_a_job_whose_sandbox_server_dies_mid_run_is_graded_again_and_gets_its_real_verdict(class_store):
    ann, bob = user_id(class_store, "ann@class.test"), user_id(class_store, "bob@class.test")
    sid = _submit_slow(class_store, ann)
    behind = _submit_slow(class_store, bob, solution("ex00"))
    killer = ServerKiller(times=1)
    graded, lines = _grade_with(class_store, killer)
    assert killer.kills == 1
    job, results = _job_and_results(class_store, sid)
    assert results == [("passed", 1.0, results[0][2])], lines  # its real verdict, from its second run
    assert (job.state, job.sandbox_failures, job.attempts) == ("done", 1, 2), lines
    assert "sandbox failure 1 of 3" in job.error
    assert [line for line in lines if f"job {job.id} (submission {sid}, ex00): queued again" in line]
    assert _job_and_results(class_store, behind)[1][0][0] == "passed"
    assert graded == 2


@pytest.mark.slow
def test_a_sandbox_server_that_dies_every_time_ends_the_job_with_an_error_after_its_tries(class_store):
    ann, bob = user_id(class_store, "ann@class.test"), user_id(class_store, "bob@class.test")
    sid = _submit_slow(class_store, ann, lang="zh")
    killer = ServerKiller(times=queue.SANDBOX_TRIES)
    graded, lines = _grade_with(class_store, killer)
    assert killer.kills == queue.SANDBOX_TRIES and graded == 1
    job, results = _job_and_results(class_store, sid)
    assert results == [("error", 0.0, t("classroom.grading_sandbox_down", "zh", tries=queue.SANDBOX_TRIES))]
    assert (job.state, job.sandbox_failures, job.attempts) == ("done", queue.SANDBOX_TRIES, queue.SANDBOX_TRIES)
    # the worker and its sandbox work again: the next submission gets its verdict
    after = submit(class_store, bob, "ex00", solution("ex00"), "ex00_paths.py")
    graded, _ = _grade_with(class_store, ServerKiller(times=0))
    assert graded == 1 and _job_and_results(class_store, after)[1][0][0] == "passed"


def test_sandbox_failures_count_apart_from_dead_workers(class_store):
    """A run whose sandbox failed is not a dead worker's: the job keeps its MAX_ATTEMPTS for those."""
    from tests.classroom_support import claim_at

    sid = submit(class_store, user_id(class_store, "ann@class.test"), "ex00", "x = 1\n", "ex00_paths.py")
    claims = []
    for run in range(queue.SANDBOX_TRIES - 1):
        claims.append(claim_at(class_store, f"w{run}"))
        assert queue.sandbox_failed(class_store, claims[-1], "ServerFailed: test") == "queued"
    for attempt in range(queue.MAX_ATTEMPTS - 1):  # then its workers die: the lease runs out at once
        assert claim_at(class_store, f"dying{attempt}", lease_s=-1.0) is not None
    claim = claim_at(class_store, "last")
    assert claim is not None  # two sandbox failures and two deaths: not given up
    assert queue.sandbox_failed(class_store, claim, "ServerFailed: test") == "last"
    assert claim_at(class_store, "other") is None  # still held by the last claim, which stores the error verdict
    assert queue.sandbox_failed(class_store, claims[0], "ServerFailed: test") is None  # a claim long lost
    job, results = _job_and_results(class_store, sid)
    assert (job.sandbox_failures, results) == (queue.SANDBOX_TRIES, [])
