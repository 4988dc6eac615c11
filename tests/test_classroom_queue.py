"""Queue semantics on real SQLite files: leases, fencing, dependency order, kills and bursts."""

import os
import signal
import subprocess
import sys
import threading

import pytest
from sqlalchemy import func, select

from classroom.line import queue, worker as worker_ops
from classroom.data.submissions import submit
from classroom.data.models import Job, Result, Submission
from tests.classroom_support import passed_verdict, LEARNERS, ROOT, run_cli, solution, stub, user_id
from tests.waiting import FakeClock, wait_until


def _submit(store, email, ex_id, source):
    return submit(store, user_id(store, email), ex_id, source, f"{ex_id}.py")


def test_a_worker_that_lost_its_lease_cannot_store_a_second_verdict(class_store):
    _submit(class_store, "ann@class.test", "ex01", "x = 1\n")
    clock = FakeClock()
    first = queue.claim(class_store, "w1", lease_s=60, clock=clock)
    clock.advance(59)
    assert queue.claim(class_store, "w2", clock=clock) is None  # still leased
    clock.advance(2)  # the lease has run out
    second = queue.claim(class_store, "w2", clock=clock)
    assert (second.job_id, second.attempt) == (first.job_id, 2)
    assert not queue.renew(class_store, first, clock=clock)
    assert queue.finish(class_store, first, passed_verdict(0.5), clock) is False
    assert queue.finish(class_store, second, passed_verdict(1.0), clock) is True
    assert queue.finish(class_store, second, passed_verdict(1.0), clock) is False  # and only once
    with class_store.session() as session:
        assert [r.score for r in session.scalars(select(Result))] == [1.0]
        assert session.get(Submission, first.submission_id).status == "done"


def test_concurrent_claims_take_each_job_once(class_store):
    ids = [_submit(class_store, LEARNERS[i % 3], "ex00", f"x = {i}\n") for i in range(30)]
    claimed, lock = [], threading.Lock()

    def take(name):
        while (claim := queue.claim(class_store, name)) is not None:
            with lock:
                claimed.append(claim.submission_id)

    threads = [threading.Thread(target=take, args=(f"w{i}",)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(claimed) == ids


def test_jobs_of_a_learner_run_in_dependency_order(class_store):
    ex01 = _submit(class_store, "ann@class.test", "ex01", "x = 1\n")
    ex03 = _submit(class_store, "ann@class.test", "ex03", "x = 1\n")
    bob = _submit(class_store, "bob@class.test", "ex00", "x = 1\n")
    first = queue.claim(class_store, "w1")
    assert first.submission_id == ex01
    second = queue.claim(class_store, "w2")
    assert second.submission_id == bob  # ann's ex03 waits for her ex01
    assert queue.claim(class_store, "w3") is None
    queue.finish(class_store, first, passed_verdict())
    assert queue.claim(class_store, "w3").submission_id == ex03


def test_a_job_whose_workers_keep_dying_gets_an_error_verdict(class_store):
    sid = _submit(class_store, "ann@class.test", "ex01", "x = 1\n")
    clock = FakeClock()
    for attempt in range(queue.MAX_ATTEMPTS):
        claim = queue.claim(class_store, f"w{attempt}", lease_s=60, clock=clock)
        assert claim.attempt == attempt + 1
        clock.advance(61)  # its worker died: the lease runs out
    assert queue.claim(class_store, "last", clock=clock) is None
    with class_store.session() as session:
        job = session.scalar(select(Job))
        result = session.scalar(select(Result))
        assert (job.state, session.get(Submission, sid).status) == ("error", "error")
        assert result.job_id == job.id and "grading stopped 3 times" in result.summary


@pytest.mark.slow
def test_a_worker_killed_mid_job_has_its_job_regraded_exactly_once(class_store, sqlite_url):
    sid = _submit(class_store, "ann@class.test", "ex01", solution("ex01"))
    worker = subprocess.Popen([sys.executable, "-m", "classroom", "worker", "--db", sqlite_url, "--once",
                               "--sandbox", "process"], cwd=ROOT, start_new_session=True,
                              stderr=subprocess.PIPE, text=True)

    def running():
        with class_store.session() as session:
            return session.scalar(select(Job.state)) == "running"

    try:
        wait_until(running, 120, "the worker to claim the job")
    finally:
        os.killpg(worker.pid, signal.SIGKILL)  # the worker and its sandbox, mid-job
        worker.wait()
    with class_store.session() as session:
        assert session.scalar(select(func.count(Result.id))) == 0  # killed before any verdict
        assert session.scalar(select(Job.state)) == "running"
    later = FakeClock()
    later.advance(queue.LEASE_S + 1)
    assert queue.queue_status(class_store, clock=later)["expired_leases"] == 1  # the killed worker's lease ran out
    log, graded = [], []
    second = threading.Thread(target=lambda: graded.append(worker_ops.run_worker(
        sqlite_url, sandbox="process", once=True, poll_s=0.05, log=log.append, clock=later)), daemon=True)
    second.start()
    second.join(300)
    assert graded == [1], f"a second worker (--once) did not grade the job alone within 300 s: {log}"
    with class_store.session() as session:
        job = session.scalar(select(Job))
        results = list(session.scalars(select(Result)))
        assert (job.state, job.attempts) == ("done", 2)
        assert [(r.submission_id, r.status, r.job_id) for r in results] == [(sid, "passed", job.id)]


@pytest.mark.slow
def test_a_burst_from_threads_and_processes_is_graded_exactly_once(class_store, sqlite_url, tmp_path):
    sources = {"good": solution("ex00"), "stub": stub("ex00")}
    for name, text in sources.items():
        (tmp_path / f"{name}.py").write_text(text)
    acked, lock = [], threading.Lock()

    def from_thread(i):
        sid = _submit(class_store, LEARNERS[i % 3], "ex00", sources["good" if i % 2 else "stub"])
        with lock:
            acked.append(sid)

    processes = [subprocess.Popen([sys.executable, "-m", "classroom", "submit", "--db", sqlite_url, "--as",
                                   LEARNERS[i % 3], "ex00", str(tmp_path / ("good.py" if i % 2 else "stub.py"))],
                                  cwd=ROOT, stdout=subprocess.PIPE, text=True) for i in range(4)]
    threads = [threading.Thread(target=from_thread, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for p in processes:
        out, _ = p.communicate(timeout=120)
        assert p.returncode == 0
        acked.append(int(out))
    result = run_cli("worker", "--db", sqlite_url, "--once", "--sandbox", "process", "--concurrency", "2")
    assert result.returncode == 0, result.stderr
    with class_store.session() as session:
        subs = dict(session.execute(select(Submission.id, Submission.status)).all())
        results = session.execute(select(Result.submission_id, Result.status, Result.summary)).all()
        jobs = session.execute(select(Job.state, Job.attempts)).all()
    assert sorted(acked) == sorted(subs) and len(acked) == 16
    assert sorted(r[0] for r in results) == sorted(acked)  # each graded exactly once
    assert set(subs.values()) == {"done"} and set(jobs) == {("done", 1)}
    statuses = [status for _, status, _ in results]
    said = [(status, summary) for _, status, summary in results if status not in ("passed", "not_written")]
    assert statuses.count("passed") == 8 and statuses.count("not_written") == 8, (said, result.stderr[-4000:])
