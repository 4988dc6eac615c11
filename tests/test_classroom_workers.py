"""Workers that stay up: heartbeats, live and dead in `status`, a pool that restarts its children,
a worker that outlives a Postgres restart, and the 'grading is delayed' test the app asks."""

import os
import signal
import subprocess
import sys
import threading
from datetime import timedelta

import pytest
from sqlalchemy import select, update

from classroom.line import line, live, queue
from classroom.data.submissions import submit
from classroom.data.db import ENV_VAR, Store
from classroom.data.models import Job, Result, Worker, utcnow
from tests.classroom_support import ROOT, PostgresCluster, make_class, run_cli, solution, submit_set_aside, user_id
from tests.waiting import wait_until


def _children(pid):
    """Pids of a process's children (from /proc)."""
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += f.read().split()
        except OSError:  # a thread that ended meanwhile
            pass
    return found


def _alive_pids(store):
    return {w["pid"] for w in queue.queue_status(store)["workers"] if w["alive"]}


def _delayed(store, sid):
    """Does ann's Practice page (classroom/line/live.py) say that this submission's grading is delayed?"""
    return live.Snapshot(store).of(user_id(store, "ann@class.test"), sid).delayed


def test_a_queued_job_without_a_live_worker_is_delayed(class_store):
    sid = submit(class_store, user_id(class_store, "ann@class.test"), "ex00", "x = 1", "ex00_paths.py")
    assert _delayed(class_store, sid)  # no worker at all
    queue.register_worker(class_store, "w1", "host", 1, "process", lease_s=60)
    assert not _delayed(class_store, sid)
    with class_store.session() as session:  # its heartbeat stopped longer ago than its lease
        session.execute(update(Worker).values(last_seen=utcnow() - timedelta(seconds=61)))
    assert _delayed(class_store, sid)
    status = queue.queue_status(class_store)
    assert [w["alive"] for w in status["workers"]] == [False]
    result = run_cli("status", "--db", class_store.engine.url.render_as_string(hide_password=False))
    assert "DEAD" in result.stdout and "no live worker" in result.stdout


def test_a_running_job_whose_lease_lapsed_is_delayed_and_a_dead_worker_is_forgotten(class_store):
    sid = submit(class_store, user_id(class_store, "ann@class.test"), "ex00", "x = 1", "ex00_paths.py")
    queue.register_worker(class_store, "w1", "host", 1, "process", lease_s=60)
    claim = queue.claim(class_store, "w1", lease_s=60)
    assert not _delayed(class_store, sid)
    with class_store.session() as session:
        session.execute(update(Job).where(Job.id == claim.job_id).values(lease_until=utcnow() - timedelta(seconds=1)))
    assert _delayed(class_store, sid)
    with class_store.session() as session:
        session.execute(update(Worker).values(last_seen=utcnow() - timedelta(seconds=queue.FORGET_S + 1)))
    assert queue.queue_status(class_store)["workers"] == []  # not listed forever


@pytest.mark.slow
def test_the_pool_restarts_a_killed_child_and_keeps_the_url_off_the_command_line(class_store, sqlite_url):
    env = dict(os.environ, **{ENV_VAR: sqlite_url})
    pool = subprocess.Popen([sys.executable, "-m", "classroom", "worker", "--concurrency", "2", "--sandbox",
                             "process", "--lease", "2"], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    try:
        first = wait_until(lambda: len(_alive_pids(class_store)) == 2 and _alive_pids(class_store), 120,
                           "two live workers")
        for pid in first:  # `ps` shows the command line: the database URL is not on it
            assert sqlite_url.split("///")[1] not in open(f"/proc/{pid}/cmdline").read()
        victim = min(first)
        os.kill(victim, signal.SIGKILL)
        wait_until(lambda: len(_alive_pids(class_store) - first) == 1, 120, "a restarted worker")
        dead = wait_until(lambda: [w for w in queue.queue_status(class_store)["workers"] if not w["alive"]], 120,
                          "the killed worker shown dead")
        assert [w["pid"] for w in dead] == [victim]
        sid = submit(class_store, user_id(class_store, "ann@class.test"), "ex00", solution("ex00"),
                               "ex00_paths.py")
        wait_until(lambda: line.position(class_store, sid)[0] == "done", 120, "the job graded")
    finally:
        pool.send_signal(signal.SIGTERM)
        _, log = pool.communicate(timeout=120)
    assert pool.returncode == 0, log
    assert f"worker process {victim} ended (exit code -9); restarting it in 1 s" in log
    assert [w["pid"] for w in queue.queue_status(class_store)["workers"]] == [victim]  # the others left cleanly


@pytest.mark.slow
def test_a_worker_outlives_a_postgres_restart_and_stores_its_verdict(tmp_path):
    cluster = PostgresCluster()
    cluster.start()
    worker, log = None, []
    try:
        import psycopg

        with psycopg.connect(f"{cluster.url}/postgres", autocommit=True) as conn:
            conn.execute('CREATE DATABASE "restart"')
        url = f"{cluster.url}/restart"
        store = make_class(url, tmp_path)
        ann = user_id(store, "ann@class.test")
        # a second of its own at import: the outage begins while it is graded, after the worker's reads
        slow = "import time\ntime.sleep(1.0)\n" + solution("ex00")
        first = submit_set_aside(store, ann, "ex00", slow, "ex00_paths.py")  # its first run would be set aside
        worker = subprocess.Popen([sys.executable, "-m", "classroom", "worker", "--sandbox", "process"], cwd=ROOT,
                                  env=dict(os.environ, **{ENV_VAR: url}), stderr=subprocess.PIPE, text=True)
        threading.Thread(target=lambda: log.extend(worker.stderr), daemon=True).start()
        wait_until(lambda: line.position(store, first)[0] == "running", 120, "the job claimed")
        # its reads (measured times, the learner's passed work) come before the sandbox starts: a child process
        wait_until(lambda: _children(worker.pid), 120, "the worker's sandbox started")
        store.close()
        cluster.stop()  # down while it grades, so that storing the verdict fails
        failed = "database unavailable while storing the verdict"  # the outage being tested outlasts three tries
        wait_until(lambda: sum(failed in line for line in log) >= 3, 300,
                   lambda: "three failed tries to store the verdict; the worker said:\n" + "".join(log[-20:]))
        cluster.start()
        store = Store(url)
        wait_until(lambda: line.position(store, first)[0] == "done", 120,
                   "the verdict stored after the restart")
        second = submit(store, ann, "ex00", solution("ex00"), "ex00_paths.py")
        wait_until(lambda: line.position(store, second)[0] == "done", 120, "the next job graded")
        assert worker.poll() is None, "".join(log)  # the same worker, still running
        with store.session() as session:
            assert list(session.scalars(select(Result.passed).order_by(Result.id))) == [True, True]
        store.close()
    finally:
        if worker is not None:
            worker.send_signal(signal.SIGTERM)
            worker.wait(timeout=120)
        cluster.remove()
