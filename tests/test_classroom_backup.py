"""Backup and restore (`python -m classroom backup OUT`, `restore IN`): consistent while learners submit and a
worker grades, every sign-in revoked by a restore, no target overwritten by accident, atomic writes."""

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import pytest
from sqlalchemy import select, text

from classroom.data import backup, oidc_session
from classroom.data.sessions import (create_sign_in_link, redeem_sign_in_token, revoke_links, revoke_sessions,
                                     user_for_session)
from classroom.data.submissions import submit
from classroom.data.db import ENV_VAR, Store
from classroom.data.models import Job, Result, Submission
from tests.classroom_support import ROOT, run_cli, session_token, solution, user_id
from tests.waiting import wait_until

pytestmark = pytest.mark.slow  # each runs the command line in child processes (seconds each); some Postgres, a worker

LEARNERS = ("ann@class.test", "bob@class.test", "cy@class.test")


def _url(store):
    return store.engine.url.render_as_string(hide_password=False)


def _fresh_url(store, tmp_path, name):
    """An empty database beside the store's: a new SQLite file, or a new database on the same Postgres server."""
    if not store.is_postgres:
        return f"sqlite:///{tmp_path / f'{name}.db'}"
    import psycopg

    url = store.engine.url
    server = url.set(drivername="postgresql", database="postgres").render_as_string(hide_password=False)
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{url.database}_{name}"')
    return url.set(database=f"{url.database}_{name}").render_as_string(hide_password=False)


def _integrity_problems(store, url, tmp_path):
    """What the database's own checks find wrong: SQLite's integrity and foreign key checks, Postgres's
    pg_amcheck (tables and indexes), and for both a submission without its job (a torn write)."""
    if store.is_postgres:
        uri, env = backup.postgres_connection(url)
        done = subprocess.run([backup.pg_tool("pg_amcheck"), "--install-missing", "--heapallindexed", uri],
                              env=env, capture_output=True, text=True)
        problems = [] if done.returncode == 0 else [done.stdout + done.stderr]
    else:
        problems = backup.sqlite_problems(backup.sqlite_file(url))
    restored = Store(url)
    with restored.session() as session:
        orphans = session.scalar(text("SELECT count(*) FROM submissions s WHERE NOT EXISTS "
                                      "(SELECT 1 FROM jobs j WHERE j.submission_id = s.id)"))
    restored.close()
    return problems + ([f"{orphans} submission(s) without a job"] if orphans else [])


def test_a_backup_taken_while_learners_submit_and_a_worker_grades_holds_every_acknowledged_submission(
        any_store, tmp_path):
    store, url = any_store, _url(any_store)
    ids = [user_id(store, email) for email in LEARNERS]
    acknowledged, sources, stop, errors = [], {}, threading.Event(), []

    def submit_all():
        """Submit until stopped, a little apart (each id is appended once its commit returned)."""
        n = 0
        try:
            while not stop.wait(0.2) and n < 5000:
                source = f"# submission {n}\n" + solution("ex01")
                sid = submit(store, ids[n % 3], "ex01", source, "ex01_softmax.py")
                sources[sid] = source
                acknowledged.append(sid)
                n += 1
        except Exception as err:  # reported by the test, not lost in the thread
            errors.append(err)

    worker = subprocess.Popen([sys.executable, "-m", "classroom", "worker", "--sandbox", "process"], cwd=ROOT,
                              env=dict(os.environ, **{ENV_VAR: url}), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    submitter = threading.Thread(target=submit_all)
    reader = None
    if not store.is_postgres:  # a page reading the class all along (a read transaction held open, as a slow page
        # holds one): SQLite cannot checkpoint past it, so what is written meanwhile lives in class.db-wal alone
        reader = sqlite3.connect(backup.sqlite_file(url), isolation_level=None)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM submissions").fetchone()
    submitter.start()
    out = tmp_path / "backup.file"
    try:
        with _Opened(url) as watch:
            wait_until(lambda: errors or (_count(watch, Result) >= 1 and len(acknowledged) >= 20), 300,
                       "the worker grading and learners submitting")
        before = list(acknowledged)  # every one of these was acknowledged before the backup began
        done = run_cli("backup", out, "--db", url)
        after_backup = len(acknowledged)
        assert done.returncode == 0, done.stderr
        wait_until(lambda: errors or len(acknowledged) >= after_backup + 5, 300, "submissions after the backup")
    finally:
        if reader is not None:
            reader.close()
        stop.set()
        submitter.join(timeout=300)
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=180)
    assert not errors, errors
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # the temporary name was renamed away

    target = _fresh_url(store, tmp_path, "restored")
    done = run_cli("restore", out, "--db", target)
    assert done.returncode == 0, done.stderr
    restored = Store(target)
    with restored.session() as session:
        kept = {s.id: s.source for s in session.scalars(select(Submission))}
        graded = _count_in(session, Result)
    restored.close()
    missing = sorted(set(before) - set(kept))
    assert not missing, f"{len(missing)} acknowledged submission(s) lost: {missing[:10]}"
    assert all(kept[sid] == sources[sid] for sid in before)
    assert len(kept) < len(acknowledged)  # taken mid-stream: what came after the backup is not in it
    assert 1 <= graded < _count(store, Result)  # the worker's verdicts up to the backup, more since
    assert _integrity_problems(store, target, tmp_path) == []
    assert f"restored {len(kept)} submission(s)" in done.stdout


class _Opened:
    """A Store of its own for the test's own reads (closed on leaving the block)."""

    def __init__(self, url):
        self.store = Store(url)

    def __enter__(self):
        return self.store

    def __exit__(self, *exc):
        self.store.close()


def _count_in(session, model):
    return len(session.scalars(select(model.id)).all())


def _count(store, model):
    with store.session() as session:
        return _count_in(session, model)


def _claims(age_s=0):
    return {"iss": "https://id.school.test", "sub": "ann", "iat": int(time.time() - age_s), "email": "ann@class.test"}


def test_a_restore_revokes_every_sign_in_and_replaces_a_database_only_with_force(any_store, tmp_path):
    store, url = any_store, _url(any_store)
    ann, bob = user_id(store, "ann@class.test"), user_id(store, "bob@class.test")
    kept_session = session_token(store, ann)  # signed in before the backup, revoked after it
    link, _ = create_sign_in_link(store, "bob@class.test")  # unused at the backup, revoked after it
    submit(store, ann, "ex01", solution("ex01"), "ex01_softmax.py")
    old_claims = _claims(age_s=5)  # an identity-provider sign-in before the restore, its row made after the backup
    out = tmp_path / "class.backup"
    assert run_cli("backup", out, "--db", url).returncode == 0
    later_session = session_token(store, bob)  # after the backup: not in it
    oidc_key = oidc_session.session_key("secret", old_claims)
    assert oidc_session.is_live(store, ann, oidc_key, old_claims)
    revoke_sessions(store, "ann@class.test")
    revoke_links(store, "bob@class.test")
    submit(store, bob, "ex01", solution("ex01"), "ex01_softmax.py")

    refused = run_cli("restore", out, "--db", url)
    assert refused.returncode == 1 and "--force" in refused.stderr
    assert _count(store, Submission) == 2  # nothing changed
    store.close()

    done = run_cli("restore", out, "--db", url, "--force")
    assert done.returncode == 0, done.stderr
    assert "restored 1 submission(s)" in done.stdout and "signs in again" in done.stdout
    restored = Store(url)
    assert _count(restored, Submission) == 1  # the backup's state
    assert user_for_session(restored, kept_session) is None  # revoked after the backup: still revoked
    assert user_for_session(restored, later_session) is None
    assert redeem_sign_in_token(restored, link.split("token=", 1)[1]) is None
    assert not oidc_session.is_live(restored, ann, oidc_key, old_claims)  # its row was not in the backup
    fresh = _claims(age_s=-2)  # a new sign-in with the provider after the restore
    assert oidc_session.is_live(restored, ann, oidc_session.session_key("secret", fresh), fresh)
    assert user_for_session(restored, session_token(restored, ann)).email == "ann@class.test"  # new link
    with restored.session() as session:
        assert session.scalars(select(Job.state)).all() == ["queued"]
    restored.close()


def test_backup_refuses_to_overwrite_a_file_or_the_database_and_keeps_the_newest(class_store, sqlite_url, tmp_path):
    folder = tmp_path / "backups"
    folder.mkdir()
    existing = folder / "mine.txt"
    existing.write_text("keep me")
    refused = run_cli("backup", existing, "--db", sqlite_url)
    assert refused.returncode == 1 and "--force" in refused.stderr and existing.read_text() == "keep me"
    database = sqlite_url.removeprefix("sqlite:///")
    refused = run_cli("backup", database, "--db", sqlite_url, "--force")
    assert refused.returncode == 1 and "the class database itself" in refused.stderr
    for n in range(3):
        done = run_cli("backup", folder, "--db", sqlite_url, "--keep", 2)
        assert done.returncode == 0, done.stderr
        time.sleep(1.1)  # names are by the second
    names = sorted(p.name for p in folder.iterdir())
    assert len(names) == 3 and names[-1] == "mine.txt" and all(n.endswith("Z.sqlite") for n in names[:2])
    assert backup.sqlite_problems(folder / names[0]) == []
    assert not _left_over(folder, ("-wal", "-shm", ".tmp"))  # one file each, nothing left over


def _left_over(folder, endings):
    """The files in folder whose names end with one of endings."""
    return [p for p in folder.iterdir() if p.name.endswith(endings)]


def test_restore_says_what_a_file_is_and_where_it_goes(class_store, sqlite_url, tmp_path):
    junk = tmp_path / "notes.txt"
    junk.write_text("not a backup")
    done = run_cli("restore", junk, "--db", f"sqlite:///{tmp_path / 'new.db'}")
    assert done.returncode == 1 and "not a class backup" in done.stderr
    out = tmp_path / "b.sqlite"
    assert run_cli("backup", out, "--db", sqlite_url).returncode == 0
    done = run_cli("restore", out, "--db", "postgresql://nobody@127.0.0.1:1/none")
    assert done.returncode == 1 and "SQLite backup" in done.stderr and "sqlite:///" in done.stderr
    other = sqlite3.connect(tmp_path / "other.sqlite")
    other.execute("CREATE TABLE notes (body TEXT)")
    other.commit()
    other.close()
    done = run_cli("restore", tmp_path / "other.sqlite", "--db", f"sqlite:///{tmp_path / 'new.db'}")
    assert done.returncode == 1 and "not a class backup" in done.stderr
    done = run_cli("restore", tmp_path / "missing.sqlite", "--db", f"sqlite:///{tmp_path / 'new.db'}")
    assert done.returncode == 1 and "no such backup file" in done.stderr
    assert not (tmp_path / "new.db").exists()


def test_a_copy_that_fails_the_checks_is_never_installed(class_store, sqlite_url, tmp_path):
    out = tmp_path / "b.sqlite"
    assert run_cli("backup", out, "--db", sqlite_url).returncode == 0
    damaged = bytearray(out.read_bytes())
    damaged[4096 * 3:4096 * 3 + 512] = b"\xff" * 512  # a page of a table overwritten
    out.write_bytes(bytes(damaged))
    target = tmp_path / "new.db"
    done = run_cli("restore", out, "--db", f"sqlite:///{target}")
    assert done.returncode == 1 and "fails SQLite's checks" in done.stderr, done.stderr
    assert not target.exists() and not _left_over(tmp_path, (".tmp",))
