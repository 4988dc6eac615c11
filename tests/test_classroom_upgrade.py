"""`python -m classroom upgrade` after pulling a new version: an old database brought to the newest schema, the
mutant caches rebuilt for this grader version, and the grader version the class expects recorded, which a worker
of another version obeys by claiming nothing (and one of the class's version grades).

The worker "of another version" is played two ways, both real: the class expects a version this checkout does not
have (recorded as an older checkout's `upgrade` would), or run_worker's `grader_version` test hook makes the worker
claim as another checkout's (classroom/line/worker.py run_worker)."""

import os
import signal
import sqlite3
import subprocess
import sys
import threading

import pytest
from sqlalchemy import inspect, select, text

from classroom import cli
from classroom.line import line, queue, worker
from classroom.data import verdicts
from classroom.data.settings import set_setting
from classroom.data.submissions import submit
from classroom.data.db import ENV_VAR, SchemaError, Store, alembic_config, make_engine, schema_versions
from classroom.data.models import Job, Result, Submission, Worker
from tests.classroom_support import BACKENDS, ROOT, make_class, run_cli, solution, user_id
from tests.waiting import wait_until

OLD_VERSION = "src-0123456789ab"  # a grader version this checkout does not have (another checkout's)
OLD_SCHEMA = "0010"


def _url(store):
    return store.engine.url.render_as_string(hide_password=False)


def _old_database(url):
    """A database at schema OLD_SCHEMA, as an earlier version of the project left it, with a learner's queued job."""
    from alembic import command

    engine = make_engine(url)
    config = alembic_config(engine)
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, OLD_SCHEMA)
    with engine.begin() as connection:
        connection.execute(text("INSERT INTO users (email, name, role, created_at) "
                                "VALUES ('ann@x.test', 'Ann', 'learner', '2026-01-01')"))
        connection.execute(text("INSERT INTO submissions (id, user_id, exercise_id, source, kind, filename, "
                                "created_at, status, attempts, late, penalty) VALUES (1, 1, 'ex00', 'x', '.py', "
                                "'x.py', '2026-01-01', 'queued', 0, false, 0)"))
        connection.execute(text("INSERT INTO jobs (id, submission_id, reason, state, attempts, full_time, "
                                "created_at, error) VALUES (1, 1, 'submit', 'queued', 0, false, '2026-01-01', '')"))
    engine.dispose()


@pytest.fixture(params=BACKENDS)
def any_url(request, tmp_path):
    """An empty database URL on SQLite, then on Postgres (slow)."""
    return f"sqlite:///{tmp_path / 'old.db'}" if request.param == "sqlite" else request.getfixturevalue("pg_url")


@pytest.fixture
def any_store(any_url, tmp_path):
    """A class store on SQLite, then on Postgres (slow)."""
    store = make_class(any_url, tmp_path)
    yield store
    store.close()


@pytest.mark.slow  # two runs of the command line
def test_upgrade_brings_an_old_database_to_the_newest_schema_and_records_the_grader_version(any_url, tmp_path):
    _old_database(any_url)
    with pytest.raises(SchemaError, match=f"schema version {OLD_SCHEMA}.*python -m classroom upgrade"):
        Store(any_url)  # the code refuses the old schema, and says which command fixes it
    caches = tmp_path / "mutants"
    caches.mkdir()
    env = dict(os.environ, ATTENTION_LAB_MUTANT_CACHE=str(caches))
    result = run_cli("upgrade", "--db", any_url, "--skip-mutants", env=env)
    assert result.returncode == 0, result.stderr
    engine = make_engine(any_url)
    head = schema_versions(engine)[1]
    with engine.connect() as connection:  # read without the code under test
        assert connection.scalar(text("SELECT version_num FROM alembic_version")) == head != OLD_SCHEMA
        assert connection.scalar(text("SELECT value FROM settings WHERE key = 'grader_version'")) \
            == verdicts.grader_version()
        assert connection.execute(text("SELECT id, state, attempts FROM jobs")).all() == [(1, "queued", 0)]
    assert "grader_version" in {c["name"] for c in inspect(engine).get_columns("workers")}
    engine.dispose()
    assert f"database schema: {OLD_SCHEMA} -> {head}" in result.stdout
    assert f"grader version: none recorded -> {verdicts.grader_version()}" in result.stdout
    assert list(caches.iterdir()) == []  # --skip-mutants built nothing
    Store(any_url).close()  # the code now takes the database
    again = run_cli("upgrade", "--db", any_url, "--skip-mutants", env=env)
    assert again.returncode == 0, again.stderr
    assert f"database schema: {head}, already this version's" in again.stdout
    assert f"grader version: {verdicts.grader_version()}, already the class's" in again.stdout


def test_upgrade_refuses_a_database_without_a_class_or_from_a_newer_version_and_changes_nothing(tmp_path, capsys):
    empty = f"sqlite:///{tmp_path / 'empty.db'}"
    assert cli.main(["upgrade", "--db", empty, "--skip-mutants"]) == 1
    assert "has no class schema: create the class with `python -m classroom init" in capsys.readouterr().err
    assert cli.main(["upgrade", "--db", empty, "--skip-mutants", "--exercise", "ex00"]) == 1
    assert "give one of them" in capsys.readouterr().err
    newer = f"sqlite:///{tmp_path / 'class.db'}"
    make_class(newer, tmp_path).close()
    with sqlite3.connect(tmp_path / "class.db") as db:
        db.execute("UPDATE alembic_version SET version_num = '0999'")
    assert cli.main(["upgrade", "--db", newer, "--skip-mutants"]) == 1
    err = capsys.readouterr().err
    assert "schema version 0999, which this code" in err and "update this checkout" in err
    with sqlite3.connect(tmp_path / "class.db") as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [("0999",)]
        assert db.execute("SELECT value FROM settings WHERE key = 'grader_version'").fetchall() == []


def test_a_class_that_recorded_no_version_lets_any_worker_claim(any_store):
    sid = submit(any_store, user_id(any_store, "ann@class.test"), "ex00", solution("ex00"), "ex00.py")
    claim = queue.claim(any_store, "w", grader_version=OLD_VERSION)
    assert claim is not None and claim.submission_id == sid


def test_a_worker_of_another_version_claims_nothing_and_one_of_the_class_version_claims(any_store):
    assert cli.main(["upgrade", "--db", _url(any_store), "--skip-mutants"]) == 0
    sid = submit(any_store, user_id(any_store, "ann@class.test"), "ex00", solution("ex00"), "ex00.py")
    with pytest.raises(queue.VersionMismatch) as refused:
        queue.claim(any_store, "old", grader_version=OLD_VERSION)
    assert (refused.value.worker_version, refused.value.expected) == (OLD_VERSION, verdicts.grader_version())
    message = str(refused.value)
    assert OLD_VERSION in message and verdicts.grader_version() in message and "restart this worker" in message
    with any_store.session() as session:
        job = session.scalars(select(Job).where(Job.submission_id == sid)).one()
        assert (job.state, job.attempts, job.worker_id) == ("queued", 0, None)
    claim = queue.claim(any_store, "new", grader_version=verdicts.grader_version())
    assert claim is not None and (claim.submission_id, claim.worker_id) == (sid, "new")


def test_with_once_a_worker_of_another_version_stops_and_leaves_the_job_queued(class_store):
    url = _url(class_store)
    assert cli.main(["upgrade", "--db", url, "--skip-mutants"]) == 0
    sid = submit(class_store, user_id(class_store, "ann@class.test"), "ex00", solution("ex00"), "ex00.py")
    lines = []
    with pytest.raises(queue.VersionMismatch):
        worker.run_worker(url, "process", once=True, poll_s=0.01, worker_id="old", log=lines.append,
                          grader_version=OLD_VERSION)
    assert f"old ready, grader version {OLD_VERSION} (until the queue is empty)" in lines
    assert line.position(class_store, sid)[0] == "queued"
    assert queue.queue_status(class_store)["workers"] == []  # it left `status`
    with pytest.raises(queue.VersionMismatch, match=OLD_VERSION):  # a pool with --once refuses before its children
        worker.check_version(url, grader_version=OLD_VERSION)
    worker.check_version(url)  # this checkout's version: no refusal


def _last_seen(store):
    with store.session() as session:
        return session.scalar(select(Worker.last_seen))


def _graded(store, sid):
    with store.session() as session:
        return session.scalars(select(Result).where(Result.submission_id == sid)).all()


@pytest.mark.slow
def test_a_waiting_worker_of_another_version_grades_once_upgrade_records_its_version(any_store):
    url = _url(any_store)
    set_setting(any_store, "grader_version", OLD_VERSION)  # as an older checkout's `upgrade` left it
    sid = submit(any_store, user_id(any_store, "ann@class.test"), "ex00", solution("ex00"), "ex00.py")
    log = []
    process = subprocess.Popen([sys.executable, "-m", "classroom", "worker", "--sandbox", "process", "--lease", "2"],
                               cwd=ROOT,
                               env=dict(os.environ, **{ENV_VAR: url}), stderr=subprocess.PIPE, text=True)
    threading.Thread(target=lambda: log.extend(process.stderr), daemon=True).start()
    try:
        refusal = wait_until(lambda: [x for x in log if "refusing jobs" in x], 120, lambda: "".join(log))
        assert OLD_VERSION in refusal[0] and verdicts.grader_version() in refusal[0]
        assert "restart this worker" in refusal[0] and "python -m classroom upgrade" in refusal[0]
        [registered] = queue.queue_status(any_store)["workers"]
        assert (registered["pid"], registered["grader_version"], registered["alive"]) == \
            (process.pid, verdicts.grader_version(), True)
        status = run_cli("status", "--db", url)
        assert f"worker {registered['id']}" in status.stdout and "REFUSING JOBS" in status.stdout
        assert "no live worker runs the class's grader version" in status.stdout
        polls, seen = len(log), _last_seen(any_store)  # it goes on checking, without claiming, says so once
        wait_until(lambda: _last_seen(any_store) > seen, 60, "a heartbeat while it waits")
        with any_store.session() as session:
            assert session.execute(select(Job.state, Job.attempts).where(Job.submission_id == sid)).one() == \
                ("queued", 0)
            assert session.get(Submission, sid).status == "queued"
        assert len([x for x in log[polls:] if "refusing jobs" in x]) == 0
        upgrade = run_cli("upgrade", "--db", url, "--skip-mutants")
        assert upgrade.returncode == 0, upgrade.stderr
        assert f"grader version: {OLD_VERSION} -> {verdicts.grader_version()}" in upgrade.stdout
        wait_until(lambda: line.position(any_store, sid)[0] == "done", 180, lambda: "".join(log[-20:]))
        [result] = _graded(any_store, sid)
        assert result.passed and result.grader_version == verdicts.grader_version()
        assert any(f"now admits this worker's ({verdicts.grader_version()}): claiming jobs again" in x for x in log)
        assert process.poll() is None  # the same process: it waited, it did not exit
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=120)
    assert process.returncode == 0, "".join(log)


@pytest.mark.slow
def test_upgrade_rebuilds_one_exercises_mutant_cache_for_this_grader_version(class_store, tmp_path):
    import torch

    caches = tmp_path / "mutants"
    caches.mkdir()
    stale = caches / "ex00-0123456789abcdef.pt"  # another grader version's
    stale.write_bytes(b"old")
    env = dict(os.environ, ATTENTION_LAB_MUTANT_CACHE=str(caches))
    result = run_cli("upgrade", "--db", _url(class_store), "--exercise", "ex00", env=env)
    assert result.returncode == 0, result.stderr
    built = [p for p in caches.glob("ex*.pt")]
    assert len(built) == 1 and built[0] != stale and built[0].name.startswith("ex00-")  # ex00's only; the old gone
    mutants = torch.load(built[0], weights_only=True)["mutants"]
    assert len(mutants) > 0 and f"mutant cache ex00: {len(mutants)} mutants" in result.stdout
    again = run_cli("upgrade", "--db", _url(class_store), "--exercise", "ex00", env=env)
    assert again.returncode == 0, again.stderr
    assert "mutant caches already built for this grader version: ex00" in again.stdout
    assert [p for p in caches.glob("ex*.pt")] == built


def test_the_grader_version_covers_the_course_code_and_text_the_grader_uses(tmp_path):
    def tree(name, changed=None):
        root = tmp_path / name
        files = {"grader/core.py": "G = 1\n", "solutions/ex01.py": "X = 1\n", "course/common/paths.py": "P = 1\n",
                 "course/translation/vocab.py": "V = 1\n", "course/text/en/grader.toml": "a = 'x'\n",
                 "course/lessons/ch01/page.py": "page", "course/text/en/notes.md": "notes"}
        files.update(changed or {})
        for rel, content in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(content, encoding="utf-8")
        return verdicts.source_digest(root)

    base = tree("base")
    for n, rel in enumerate(("course/common/paths.py", "course/translation/vocab.py", "course/text/en/grader.toml")):
        assert tree(f"changed{n}", {rel: "changed = 2\n"}) != base, rel
    for n, rel in enumerate(("course/lessons/ch01/page.py", "course/text/en/notes.md")):  # not the grader's
        assert tree(f"same{n}", {rel: "other"}) == base, rel
