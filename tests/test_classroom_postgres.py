"""The class store on a real Postgres server (Debian's postgresql, started by the fixture)."""

import threading

import pytest
from sqlalchemy import select, text

from classroom.line import queue
from classroom.data.submissions import submit
from classroom.data.db import Store
from classroom.data.models import Job, Result, Submission
from tests.classroom_support import LEARNERS, make_class, run_cli, solution, stub, user_id

pytestmark = pytest.mark.slow  # a Postgres server


@pytest.fixture
def pg_store(pg_url, tmp_path):
    store = make_class(pg_url, tmp_path)
    yield store
    store.close()


def test_init_on_postgres_and_schema_check(pg_url, tmp_path):
    result = run_cli("init", "--db", pg_url, "--instructor", "prof@class.test")
    assert result.returncode == 0, result.stderr
    assert Store(pg_url).is_postgres


def test_two_workers_take_disjoint_jobs_without_waiting(pg_store):
    ids = [submit(pg_store, user_id(pg_store, LEARNERS[i % 3]), "ex00", "x = 1\n", "a.py")
           for i in range(3)]
    with pg_store.session() as first:  # worker A claims and keeps its transaction open (rows locked)
        a = queue.claim_in(first, "A")
        with pg_store.session() as second:
            second.execute(text("SET LOCAL lock_timeout = '2s'"))  # blocking on A's row would fail here
            b = queue.claim_in(second, "B")
        assert (a.submission_id, b.submission_id) == (ids[0], ids[1])
    with pg_store.session() as session:
        assert dict(session.execute(select(Job.submission_id, Job.worker_id)).all()) == \
            {ids[0]: "A", ids[1]: "B", ids[2]: None}


def test_many_concurrent_claimers_on_postgres_each_job_once(pg_store):
    ids = [submit(pg_store, user_id(pg_store, LEARNERS[i % 3]), "ex00", f"x = {i}\n", "a.py")
           for i in range(40)]
    claimed, lock = [], threading.Lock()

    def take(name):
        while (claim := queue.claim(pg_store, name)) is not None:
            with lock:
                claimed.append((claim.submission_id, name))

    threads = [threading.Thread(target=take, args=(f"w{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(s for s, _ in claimed) == ids
    assert len({name for _, name in claimed}) > 1


def test_two_worker_processes_grade_on_postgres_exactly_once(pg_store, pg_url):
    ids = [submit(pg_store, user_id(pg_store, LEARNERS[i % 3]), "ex00",
                            solution("ex00") if i % 2 else stub("ex00"), "ex00_paths.py") for i in range(6)]
    result = run_cli("worker", "--db", pg_url, "--once", "--sandbox", "process", "--concurrency", "2")
    assert result.returncode == 0, result.stderr
    with pg_store.session() as session:
        results = session.execute(select(Result.submission_id, Result.status)).all()
        workers = set(session.scalars(select(Job.worker_id)))
        states = set(session.scalars(select(Submission.status)))
    assert sorted(s for s, _ in results) == ids
    assert sorted(status for _, status in results) == ["not_written"] * 3 + ["passed"] * 3
    assert states == {"done"} and len(workers) == 2


def test_notes_on_postgres_concurrent_saves_last_write_wins_per_learner(pg_store):
    from classroom.web import learner_records

    ann, bob = (user_id(pg_store, e) for e in LEARNERS[:2])
    texts = [f"ann v{i} " * 20 for i in range(8)]
    threads = [threading.Thread(target=learner_records.save_note, args=(pg_store, ann, "ch01", t)) for t in texts]
    threads.append(threading.Thread(target=learner_records.save_note, args=(pg_store, bob, "ch01", "bob's own")))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert learner_records.load_notes(pg_store, ann)["ch01"] in texts  # one whole text, no duplicate row
    assert learner_records.load_notes(pg_store, bob) == {"ch01": "bob's own"}
    learner_records.save_note(pg_store, ann, "ch01", "final")
    assert learner_records.load_notes(pg_store, ann) == {"ch01": "final"}
