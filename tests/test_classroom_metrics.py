"""`python -m classroom metrics`: the real exporter process scraped over HTTP, each number checked against the
class database read here with SQL of the test's own (not the exporter's code), on SQLite and Postgres."""

import signal
import socket
import subprocess
import sys
import time
from datetime import datetime, timedelta

import nbformat
import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import text

from classroom.line import queue
from classroom.data.submissions import submit
from classroom.lti import outbox
from classroom.data.models import utcnow
from classroom.line.worker import run_worker
from tests.classroom_support import ROOT, claim_at, passed_verdict, run_cli, solution, stub, user_id
from tests.test_lti_outbox import join

WINDOW_S = 3600.0  # the exporter's window for the histograms and verdicts (its help text says so)
WAIT_BUCKETS = (1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600)
GRADING_BUCKETS = (0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120)
TIMES_SLACK_S = 0.001  # SQLite's julianday differences are exact to about 50 µs: a time this near a bucket's bound
# may be counted on either side of it


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_exporter(url, port):
    """The real `python -m classroom metrics` process, once it answers on its port -> Popen."""
    proc = subprocess.Popen([sys.executable, "-m", "classroom", "metrics", "--db", url, "--port", str(port)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the exporter exited with {proc.returncode}: {proc.stderr.read()}")
        try:
            requests.get(f"http://127.0.0.1:{port}/metrics", timeout=5)
            return proc
        except requests.ConnectionError:
            time.sleep(0.2)
    proc.kill()
    pytest.fail("the exporter did not answer within 120 s")


def stop_exporter(proc):
    """SIGTERM -> its exit code and stderr (it stops cleanly)."""
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        pytest.fail(f"the exporter did not stop on SIGTERM: {err}")
    return proc.returncode, err


def scrape(port):
    """(the samples {(name, frozenset of labels): value}, a bucket's `le` a float, the time before the request,
    the time after)."""
    before = utcnow()
    response = requests.get(f"http://127.0.0.1:{port}/metrics", timeout=60)
    after = utcnow()
    assert response.status_code == 200, response.text
    samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            labels = {name: float(v) if name == "le" else v for name, v in sample.labels.items()}  # "1", "1.0"
            key = (sample.name, frozenset(labels.items()))
            assert key not in samples, f"{key} twice"
            samples[key] = sample.value
    return samples, before, after


def value(samples, name, **labels):
    return samples[(name, frozenset(labels.items()))]


def when(raw):
    """A DateTime column read with raw SQL: SQLite gives text, Postgres a datetime."""
    return raw if raw is None or isinstance(raw, datetime) else datetime.fromisoformat(raw)


def rows(store, sql, **params):
    with store.session() as session:
        return session.execute(text(sql), params).all()


def check_against_database(store, samples, before, after):
    """Every metric equals what the database holds, read here with the test's own SQL."""
    assert value(samples, "attention_lab_database_up") == 1
    # unfinished jobs by claim batch: a regrade; else a submission set aside (full_time); else a submission
    unfinished = {}
    for state, reason, full_time, count in rows(store, "SELECT state, reason, full_time, count(*) FROM jobs "
                                                "WHERE state IN ('queued', 'running') GROUP BY state, reason, full_time"):
        batch = "regrade" if reason == "regrade" else "set_aside" if full_time else "submit"
        unfinished[(state, batch)] = unfinished.get((state, batch), 0) + count
    for state in ("queued", "running"):
        for batch in ("submit", "set_aside", "regrade"):
            assert value(samples, "attention_lab_jobs", state=state, batch=batch) == unfinished.get((state, batch), 0), \
                (state, batch)
    finished = {(state, reason): count for state, reason, count in rows(
        store, "SELECT state, reason, count(*) FROM jobs WHERE state IN ('done', 'error') GROUP BY state, reason")}
    for state in ("done", "error"):
        for reason in ("submit", "regrade"):
            assert value(samples, "attention_lab_jobs_finished_total", state=state, reason=reason) == \
                finished.get((state, reason), 0), (state, reason)
    for reason in ("submit", "regrade"):
        (oldest,), = rows(store, "SELECT min(created_at) FROM jobs WHERE state = 'queued' AND reason = :r", r=reason)
        shown = value(samples, "attention_lab_oldest_queued_seconds", reason=reason)
        if oldest is None:
            assert shown == 0
        else:
            assert (before - when(oldest)).total_seconds() - 0.01 <= shown <= (after - when(oldest)).total_seconds() + 0.01
    (expired,), = rows(store, "SELECT count(*) FROM jobs WHERE state = 'running' AND lease_until < :now", now=before)
    assert value(samples, "attention_lab_jobs_lease_expired") == expired
    # the histograms: the jobs finished in the window, timed here in Python
    graded = [(reason, when(created), when(started), when(ended)) for reason, created, started, ended in rows(
        store, "SELECT reason, created_at, started_at, finished_at FROM jobs "
               "WHERE finished_at IS NOT NULL AND started_at IS NOT NULL")]
    assert all(ended >= before - timedelta(seconds=WINDOW_S) for *_, ended in graded)  # all inside the window
    for name, bounds, seconds_of in (("attention_lab_job_wait_seconds", WAIT_BUCKETS, lambda c, s, e: s - c),
                                     ("attention_lab_job_grading_seconds", GRADING_BUCKETS, lambda c, s, e: e - s)):
        for reason in ("submit", "regrade"):
            times = [seconds_of(c, s, e).total_seconds() for r, c, s, e in graded if r == reason]
            for bound in bounds:
                shown = value(samples, f"{name}_bucket", reason=reason, le=float(bound))
                assert (sum(t <= bound - TIMES_SLACK_S for t in times) <= shown
                        <= sum(t <= bound + TIMES_SLACK_S for t in times)), (name, reason, bound, times)
            assert value(samples, f"{name}_bucket", reason=reason, le=float("inf")) == len(times)
            assert value(samples, f"{name}_gcount", reason=reason) == len(times)
            assert value(samples, f"{name}_gsum", reason=reason) == pytest.approx(sum(times), abs=0.01)
    verdicts = dict(rows(store, "SELECT status, count(*) FROM results GROUP BY status"))  # all in the window
    for status in ("passed", "failed", "not_written", "error", "blocked"):
        assert value(samples, "attention_lab_verdicts", status=status) == verdicts.get(status, 0), status
    assert value(samples, "attention_lab_verdicts", status="other") == 0
    (aside,), = rows(store, "SELECT count(*) FROM jobs WHERE set_aside_at IS NOT NULL")
    (aside_graded, aside_quick), = rows(
        store, "SELECT count(*), coalesce(sum(CASE WHEN r.run_s < 19.999 THEN 1 ELSE 0 END), 0) FROM jobs j "
               "JOIN results r ON r.job_id = j.id WHERE j.set_aside_at IS NOT NULL")
    assert value(samples, "attention_lab_runs_set_aside_total") == aside
    assert value(samples, "attention_lab_runs_set_aside_graded_total") == aside_graded
    assert value(samples, "attention_lab_runs_set_aside_not_endless_total") == aside_quick
    (due, failing, tries), = rows(store, "SELECT count(*), coalesce(sum(CASE WHEN tries > 0 THEN 1 ELSE 0 END), 0), "
                                         "coalesce(sum(tries), 0) FROM lti_scores WHERE due = :yes", yes=True)
    assert value(samples, "attention_lab_lms_outbox_due") == due
    assert value(samples, "attention_lab_lms_outbox_failing") == failing
    assert value(samples, "attention_lab_lms_outbox_failed_pushes") == tries
    workers = rows(store, "SELECT id, sandbox, last_seen, lease_s FROM workers")
    alive = 0
    for worker_id, sandbox, seen, lease_s in workers:
        age = value(samples, "attention_lab_worker_heartbeat_age_seconds", worker=worker_id, sandbox=sandbox)
        assert (before - when(seen)).total_seconds() - 0.1 <= age <= (after - when(seen)).total_seconds() + 0.1
        assert value(samples, "attention_lab_worker_lease_seconds", worker=worker_id, sandbox=sandbox) == lease_s
        alive += (after - when(seen)).total_seconds() <= lease_s
    assert value(samples, "attention_lab_workers_alive") == alive
    assert sum(name == "attention_lab_worker_heartbeat_age_seconds" for name, _ in samples) == len(workers)


def _no_answer_cell():
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("x = 1")]
    return nbformat.writes(notebook)


@pytest.mark.slow  # the exporter and a worker in child processes, SQLite and Postgres
def test_each_metric_equals_the_class_database_while_a_burst_is_graded(any_store):
    store = any_store
    url = store.engine.url.render_as_string(hide_password=False)
    ann, bob, cy = (user_id(store, f"{name}@class.test") for name in ("ann", "bob", "cy"))
    join(store, "ann@class.test")  # ann's verdicts go to an LMS course's outbox
    first = [submit(store, ann, "ex00", solution("ex00"), "ex00.py"),
             submit(store, ann, "ex01", solution("ex01"), "ex01.py"),
             submit(store, bob, "ex00", stub("ex00"), "ex00.py"),  # not written
             submit(store, bob, "ex01", solution("ex01"), "ex01.py"),
             submit(store, cy, "ex00", _no_answer_cell(), "ex00.ipynb")]  # the grader's error
    assert run_worker(url, sandbox="process", once=True, log=lambda _: None) == len(first)
    for learner, ex_id in ((ann, "ex00"), (bob, "ex00"), (cy, "ex01")):  # a second burst, queued
        submit(store, learner, ex_id, solution(ex_id), f"{ex_id}.py")
    assert queue.enqueue_regrade(store, first[:2]) == 2
    queue.register_worker(store, "aside-worker", "h", 1, "process")
    queue.register_worker(store, "busy-worker", "h", 2, "process")
    queue.register_worker(store, "dead-worker", "h", 3, "process", clock=lambda: utcnow() - timedelta(seconds=600))
    assert queue.set_aside(store, claim_at(store, "aside-worker"))  # its first run past the set-aside time
    running = claim_at(store, "busy-worker")
    with store.session() as session:  # one LMS push failed
        (row_id,), = session.execute(text("SELECT id FROM lti_scores ORDER BY id LIMIT 1")).all()
        outbox.record_failed(session, row_id, "the LMS answered 503", utcnow(), 0)

    port = free_port()
    proc = start_exporter(url, port)
    try:
        samples, before, after = scrape(port)
        check_against_database(store, samples, before, after)
        # what the burst made, so that the comparison above compared something
        assert value(samples, "attention_lab_jobs", state="queued", batch="regrade") == 2
        assert value(samples, "attention_lab_jobs", state="queued", batch="set_aside") == 1
        assert value(samples, "attention_lab_jobs", state="running", batch="submit") == 1
        assert value(samples, "attention_lab_jobs", state="queued", batch="submit") == 1
        assert value(samples, "attention_lab_jobs_finished_total", state="done", reason="submit") == 5
        assert value(samples, "attention_lab_job_grading_seconds_gcount", reason="submit") == 5
        assert [value(samples, "attention_lab_verdicts", status=s) for s in ("not_written", "error")] == [1, 1]
        assert value(samples, "attention_lab_runs_set_aside_total") == 1
        assert value(samples, "attention_lab_lms_outbox_due") == 2  # ann's ex00 and ex01
        assert value(samples, "attention_lab_lms_outbox_failing") == 1
        assert value(samples, "attention_lab_workers_alive") == 2  # the dead one was last heard 600 s ago
        assert value(samples, "attention_lab_worker_heartbeat_age_seconds", worker="dead-worker",
                     sandbox="process") >= 600

        # the rest graded: the next scrape reads the database again
        assert queue.finish(store, running, passed_verdict())
        assert run_worker(url, sandbox="process", once=True, log=lambda _: None) == 4
        samples, before, after = scrape(port)
        check_against_database(store, samples, before, after)
        assert sum(value(samples, "attention_lab_jobs", state=state, batch=batch)
                   for state in ("queued", "running") for batch in ("submit", "set_aside", "regrade")) == 0
        assert value(samples, "attention_lab_jobs_finished_total", state="done", reason="regrade") == 2
        assert value(samples, "attention_lab_runs_set_aside_graded_total") == 1
        assert value(samples, "attention_lab_runs_set_aside_not_endless_total") == 1  # a correct file, quick
        assert value(samples, "attention_lab_oldest_queued_seconds", reason="submit") == 0
    finally:
        code, err = stop_exporter(proc)
    assert code == 0, err


@pytest.mark.slow  # a Postgres server of its own, the exporter in a child process
def test_a_database_that_goes_down_is_reported_and_read_again_when_it_is_back(own_postgres, tmp_path):
    from tests.classroom_support import make_class

    store = make_class(f"{own_postgres.url}/postgres", tmp_path)
    submit(store, user_id(store, "ann@class.test"), "ex00", solution("ex00"), "ex00.py")
    store.close()
    port = free_port()
    proc = start_exporter(f"{own_postgres.url}/postgres", port)
    try:
        samples, *_ = scrape(port)
        assert value(samples, "attention_lab_jobs", state="queued", batch="submit") == 1
        own_postgres.stop()
        samples, *_ = scrape(port)  # still answers: the database is down, not the exporter
        assert value(samples, "attention_lab_database_up") == 0
        assert not any(name == "attention_lab_jobs" for name, _ in samples)  # no stale numbers
        own_postgres.start()
        samples, *_ = scrape(port)
        assert value(samples, "attention_lab_database_up") == 1
        assert value(samples, "attention_lab_jobs", state="queued", batch="submit") == 1
    finally:
        code, err = stop_exporter(proc)
    assert code == 0 and "the class database cannot be read" in err


@pytest.mark.slow  # four command lines in child processes
def test_a_port_in_use_or_a_wrong_database_is_a_clear_error(class_store, sqlite_url, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run_cli("metrics", "--db", sqlite_url, "--port", port, timeout=120)
    assert done.returncode == 1
    assert f"cannot listen on 127.0.0.1 port {port}" in done.stderr and "another --port" in done.stderr
    assert "Traceback" not in done.stderr
    done = run_cli("metrics", "--db", f"postgresql://lab@127.0.0.1:{free_port()}/class", "--port", free_port(),
                   timeout=120)  # nothing listens there
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "cannot read the class database at postgresql+psycopg://lab@127.0.0.1" in done.stderr
    done = run_cli("metrics", "--db", f"sqlite:///{tmp_path / 'empty.db'}", "--port", free_port(), timeout=120)
    assert done.returncode == 1 and "has no class schema" in done.stderr and "Traceback" not in done.stderr
    done = run_cli("metrics", "--db", sqlite_url, "--port", "70000", timeout=120)
    assert done.returncode == 2 and "a port is at most 65535" in done.stderr


SCRAPE_CPU_S = 0.4  # one scrape of a 20,000-job regrade queued behind 20,000 graded jobs, in this thread's CPU
# seconds (SQLite runs in it): 0.11 s at a load of 6 on 2 cores, 0.2 s with the times computed in every bucket's sum
SCRAPE_WALL_S = 2.0  # ... and in wall seconds, with margin for a loaded machine (0.22 s at that load); on SQLite a
# scrape holds the write lock this long, so the workers' commits wait for it


@pytest.mark.slow  # 60,000 rows written
@pytest.mark.timing
def test_a_scrape_stays_cheap_with_a_20000_job_regrade_queued_behind_20000_graded_jobs(class_store):
    from sqlalchemy import insert, select

    from classroom.line import metrics
    from classroom.data.models import Job, Result, Submission
    from tests.classroom_support import many_submissions

    many_submissions(class_store, 200, 100)  # 20,000 submissions
    now = utcnow()
    with class_store.session() as session:  # each graded in the last hour (all inside the histograms' window)
        session.execute(insert(Job), [
            dict(submission_id=sid, reason="submit", state="done", attempts=1, turn=1, error="",
                 created_at=now - timedelta(seconds=60 + i % 3000), started_at=now - timedelta(seconds=50 + i % 3000),
                 finished_at=now - timedelta(seconds=49 + i % 3000))
            for i, sid in enumerate(session.scalars(select(Submission.id).order_by(Submission.id)))])
    with class_store.session() as session:  # with a report of a few kB each, as the grader's are
        report = {"version": 1, "exercises": [{"id": "ex00", "output": "x" * 3000}]}
        session.execute(insert(Result), [
            dict(submission_id=sid, job_id=jid, status="passed", passed=True, raw_score=1.0, score=1.0, summary="",
                 checks=[], mistake_ids=[], report=report, created_at=now)
            for jid, sid in session.execute(select(Job.id, Job.submission_id))])
    assert queue.enqueue_regrade(class_store) == 20_000
    collector = metrics.ClassCollector(class_store)
    cpu, wall = [], []
    for _ in range(3):
        cpu_start, wall_start = time.thread_time(), time.perf_counter()
        families = {family.name: family for family in collector.collect()}
        cpu.append(time.thread_time() - cpu_start)
        wall.append(time.perf_counter() - wall_start)
    queued = {tuple(s.labels.values()): s.value for s in families["attention_lab_jobs"].samples}
    assert queued[("queued", "regrade")] == 20_000  # it read them all
    assert {s.labels["reason"]: s.value for s in families["attention_lab_job_wait_seconds"].samples
            if s.name.endswith("_gcount")} == {"submit": 20_000, "regrade": 0}
    assert min(cpu) < SCRAPE_CPU_S, cpu
    assert min(wall) < SCRAPE_WALL_S, wall


def test_the_metrics_service_runs_as_the_apps_user_on_loopback_with_the_class_database_line():
    from tests.classroom_support import deploy_unit

    metrics_unit = deploy_unit("attention-lab-metrics.service")["Service"]
    app = deploy_unit("attention-lab-app.service")["Service"]
    command = metrics_unit["ExecStart"].split()
    assert command[1:4] == ["-m", "classroom", "metrics"] and "--db" not in command and "--host" not in command
    assert metrics_unit["User"] == app["User"] != "root" and metrics_unit["Restart"] == "always"
    assert metrics_unit["EnvironmentFile"] == app["EnvironmentFile"]
