"""Class store: schema versions, roster import, sign-in links, sessions, submission rules."""

import hashlib
import sqlite3
from datetime import timedelta

import pytest
from sqlalchemy import func, select, update

from classroom import cli
from classroom.data.roster import (INSTRUCTOR_NAME, RosterError, import_roster, instructor_name, list_users,
                                   user_by_email)
from classroom.data.sessions import create_sign_in_link, redeem_sign_in_token, sign_out, user_for_session
from classroom.data.settings import set_rule, set_setting
from classroom.data.submissions import SubmitRefused, submit
from classroom.data.db import SchemaError, Store, make_engine
from classroom.data.models import Base, LoginSession, Setting, SignInToken, Submission, User, utcnow
from tests.classroom_support import INSTRUCTOR, run_cli, session_token, user_id


def test_store_refuses_a_database_without_schema(tmp_path):
    with pytest.raises(SchemaError, match="classroom init"):
        Store(f"sqlite:///{tmp_path / 'empty.db'}")


def test_migrations_build_exactly_the_models(class_store):
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    with class_store.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == []


@pytest.mark.slow
def test_init_is_idempotent_and_uses_wal(sqlite_url, tmp_path):
    for _ in range(2):
        result = run_cli("init", "--db", sqlite_url, "--instructor", "Prof@Class.TEST")
        assert result.returncode == 0, result.stderr
    store = Store(sqlite_url)
    assert [(u.email, u.role) for u in list_users(store)] == [("prof@class.test", "instructor")]
    with sqlite3.connect(tmp_path / "class.db") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


@pytest.mark.slow
def test_init_keeps_the_instructors_name_in_the_class_settings(any_store, capsys):
    """`init --name` names the instructor as the class shows them (not the email's first part, "you" for
    you@school.edu); an init without --name keeps it."""
    url = any_store.engine.url.render_as_string(hide_password=False)
    assert instructor_name(any_store) == ""  # the class fixture's init gave no name
    assert user_by_email(any_store, INSTRUCTOR).name == ""  # the app shows the email then
    assert cli.main(["init", "--db", url, "--instructor", INSTRUCTOR, "--name", " Dr. Ada\n Lovelace "]) == 0
    assert "instructor prof@class.test (shown as Dr. Ada Lovelace)" in capsys.readouterr().out
    assert cli.main(["init", "--db", url, "--instructor", INSTRUCTOR]) == 0  # e.g. an upgrade: the name stays
    assert instructor_name(any_store) == "Dr. Ada Lovelace"
    assert user_by_email(any_store, INSTRUCTOR).name == "Dr. Ada Lovelace"
    with any_store.session() as session:
        assert session.get(Setting, INSTRUCTOR_NAME).value == "Dr. Ada Lovelace"
    assert cli.main(["init", "--db", url, "--instructor", INSTRUCTOR, "--name", "x" * 201]) == 1
    assert "--name is 201 characters long" in capsys.readouterr().err
    assert instructor_name(any_store) == "Dr. Ada Lovelace"


def test_roster_reimport_updates_and_never_duplicates(class_store, tmp_path):
    roster = tmp_path / "again.csv"
    roster.write_text("Role,Email,Name\nta,ANN@class.test,Ann Lee\nlearner,new@class.test,New\n")
    assert import_roster(class_store, roster) == (1, 1, 0, [])
    assert import_roster(class_store, roster) == (0, 0, 2, [])
    users = {u.email: (u.name, u.role) for u in list_users(class_store)}
    assert users["ann@class.test"] == ("Ann Lee", "ta")
    assert len(users) == 6  # instructor, 3 learners, ta, new


@pytest.mark.slow
def test_roster_errors_name_their_lines_and_import_nothing(sqlite_url, tmp_path):
    run_cli("init", "--db", sqlite_url, "--instructor", INSTRUCTOR)
    roster = tmp_path / "bad.csv"
    roster.write_text("email,name,role\nok@class.test,Ok,learner\nnot-an-email,X,learner\n\n"
                      "z@class.test,Z,professor\nok@class.test,Again,ta\nw@class.test,W\n", encoding="utf-8")
    result = run_cli("roster", "import", "--db", sqlite_url, roster)
    assert result.returncode == 1
    assert "line 3: 'not-an-email' is not an email address" in result.stderr
    assert "line 5: role 'professor'" in result.stderr
    assert "line 6: ok@class.test is already on line 2" in result.stderr
    assert "line 7: 2 values" in result.stderr
    assert "nothing imported" in result.stderr
    assert [u.email for u in list_users(Store(sqlite_url))] == [INSTRUCTOR]


def test_roster_needs_the_three_columns(class_store, tmp_path):
    roster = tmp_path / "cols.csv"
    roster.write_text("mail,name\na@b.c,A\n")
    with pytest.raises(RosterError, match="line 1: the header must name the columns email, name, role"):
        import_roster(class_store, roster)


def test_sign_in_link_is_single_use_and_stored_hashed(class_store, tmp_path):
    link, _ = create_sign_in_link(class_store, "ann@class.test", "http://lab.test/")
    token = link.split("token=")[1]
    on_disk = b"".join(p.read_bytes() for p in tmp_path.glob("class.db*"))  # the database and its WAL
    assert token.encode() not in on_disk and hashlib.sha256(token.encode()).hexdigest().encode() in on_disk
    with class_store.session() as session:
        stored = session.scalar(select(SignInToken.token_hash))
    assert stored == hashlib.sha256(token.encode()).hexdigest()
    session_token = redeem_sign_in_token(class_store, token)
    assert user_for_session(class_store, session_token).email == "ann@class.test"
    assert redeem_sign_in_token(class_store, token) is None  # used
    assert redeem_sign_in_token(class_store, token + "x") is None
    sign_out(class_store, session_token)
    assert user_for_session(class_store, session_token) is None


def test_expired_links_and_sessions_are_refused(class_store):
    link, _ = create_sign_in_link(class_store, "bob@class.test")
    with class_store.session() as session:
        session.execute(update(SignInToken).values(expires_at=utcnow() - timedelta(seconds=1)))
    assert redeem_sign_in_token(class_store, link.split("token=")[1]) is None
    token = session_token(class_store, user_id(class_store, "bob@class.test"))
    assert user_for_session(class_store, token) is not None
    with class_store.session() as session:
        session.execute(update(LoginSession).values(expires_at=utcnow() - timedelta(seconds=1)))
    assert user_for_session(class_store, token) is None


@pytest.mark.slow
def test_links_command_refuses_unknown_emails(class_store, sqlite_url):
    result = run_cli("links", "--db", sqlite_url, "--email", "ghost@class.test")
    assert result.returncode == 1 and "ghost@class.test" in result.stderr
    result = run_cli("links", "--db", sqlite_url, "--role", "learner")
    lines = result.stdout.strip().splitlines()
    assert lines[0] == "email,name,link,expires_utc" and len(lines) == 4
    assert all("?token=" in line for line in lines[1:])


def test_one_submission_in_flight_per_learner(class_store):
    set_setting(class_store, "max_in_flight", 1)
    ann = user_id(class_store, "ann@class.test")
    submit(class_store, ann, "ex01", "x = 1\n", "ex01_softmax.py")
    with pytest.raises(SubmitRefused, match="as soon as its feedback arrives"):
        submit(class_store, ann, "ex03", "x = 1\n", "ex03_scoring.py")
    submit(class_store, user_id(class_store, "bob@class.test"), "ex01", "x = 1\n", "a.py")


def test_a_regrade_in_progress_does_not_block_learners(class_store):
    from classroom.line import queue

    set_setting(class_store, "max_in_flight", 1)
    ann = user_id(class_store, "ann@class.test")
    submit(class_store, ann, "ex01", "x = 1\n", "a.py")
    claim = queue.claim(class_store, "w")
    queue.finish(class_store, claim, dict(status="failed", passed=False, raw_score=0.0, score=0.0))
    assert queue.enqueue_regrade(class_store) == 1
    submit(class_store, ann, "ex03", "x = 1\n", "a.py")  # her regrade job is not hers to wait for


def test_hourly_limit_says_when_the_next_attempt_is_possible(class_store):
    set_setting(class_store, "per_hour", 2)
    ann = user_id(class_store, "ann@class.test")
    start = utcnow() - timedelta(minutes=50)
    submit(class_store, ann, "ex01", "x = 1\n", "a.py", now=start)
    submit(class_store, ann, "ex01", "x = 1\n", "a.py", now=start + timedelta(minutes=5))
    with pytest.raises(SubmitRefused, match=r"possible at .* \(in 9 min"):
        submit(class_store, ann, "ex01", "x = 1\n", "a.py", now=start + timedelta(minutes=51))
    submit(class_store, ann, "ex01", "x = 1\n", "a.py", now=start + timedelta(minutes=61))


def test_deadline_late_window_and_closing(class_store):
    ann = user_id(class_store, "ann@class.test")
    deadline = utcnow() - timedelta(hours=2)
    set_rule(class_store, "ex01", deadline, "accept", late_window_h=3, late_penalty=0.25)
    sid = submit(class_store, ann, "ex01", "x = 1\n", "a.py")
    with class_store.session() as session:
        sub = session.get(Submission, sid)
        assert (sub.late, sub.penalty) == (True, 0.25)
    set_rule(class_store, "ex01", deadline, "accept", late_window_h=1, late_penalty=0.25)
    with pytest.raises(SubmitRefused, match="ex01 closed at"):
        submit(class_store, ann, "ex01", "x = 1\n", "a.py")
    set_rule(class_store, "ex03", utcnow() + timedelta(hours=1), "close")
    sid = submit(class_store, ann, "ex03", "x = 1\n", "a.py")
    with class_store.session() as session:
        assert session.get(Submission, sid).late is False


def test_submit_rejects_other_files_and_non_utf8(class_store):
    ann = user_id(class_store, "ann@class.test")
    with pytest.raises(SubmitRefused, match="a .py file or a .ipynb"):
        submit(class_store, ann, "ex01", "x", "answer.txt")
    with pytest.raises(SubmitRefused, match="not UTF-8"):
        submit(class_store, ann, "ex01", b"\xff\xfe", "a.py")


@pytest.mark.slow
def test_submission_is_acknowledged_only_after_its_commit(class_store, sqlite_url, tmp_path):
    # A trigger makes the job insert fail after the submission row was written: the
    # command must print no id, and the submission must not exist.
    with sqlite3.connect(tmp_path / "class.db") as conn:
        conn.execute("CREATE TRIGGER no_jobs BEFORE INSERT ON jobs BEGIN SELECT RAISE(ABORT, 'disk full'); END")
    answer = tmp_path / "ex01_softmax.py"
    answer.write_text("x = 1\n")
    result = run_cli("submit", "--db", sqlite_url, "--as", "ann@class.test", "ex01", answer)
    assert result.returncode == 1 and result.stdout == ""
    assert "nothing was saved" in result.stderr
    with class_store.session() as session:
        assert session.scalar(select(func.count(Submission.id))) == 0
    with sqlite3.connect(tmp_path / "class.db") as conn:
        conn.execute("DROP TRIGGER no_jobs")
    result = run_cli("submit", "--db", sqlite_url, "--as", "ann@class.test", "ex01", answer)
    sid = int(result.stdout)
    fresh = make_engine(sqlite_url)  # another connection sees it as soon as the id is printed
    with fresh.connect() as conn:
        assert conn.execute(select(Submission.source).where(Submission.id == sid)).scalar() == "x = 1\n"
    fresh.dispose()


def test_users_table_has_no_password_column():
    assert not [c for c in User.__table__.columns if "pass" in c.name]
