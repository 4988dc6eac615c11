"""Taking people off the roster, revoking links and sessions, sign-in lifetimes, refused settings."""

from datetime import timedelta

import pytest

from classroom.web import access, signin
from classroom import cli
from classroom.data.roster import list_users, remove_user, removed_emails
from classroom.data.sessions import create_sign_in_link, redeem_sign_in_token, user_for_session
from classroom.data.settings import get_settings, set_setting
from classroom.data.submissions import SubmitRefused, submit
from classroom.data.models import utcnow
from tests.classroom_support import INSTRUCTOR, add_graded, user_id


def _token(link):
    return link.split("token=")[1]


def _signed_in(store, email):
    """A live session token of `email`, from a fresh one-time link."""
    link, _ = create_sign_in_link(store, email)
    return redeem_sign_in_token(store, _token(link))


def test_an_unverified_oidc_email_signs_nobody_in(class_store):
    assert signin.resolve(class_store, oidc_email=INSTRUCTOR).problem == "email_unverified"  # refused by default
    assert signin.resolve(class_store, oidc_email=INSTRUCTOR, email_verified=False).problem == "email_unverified"
    assert signin.resolve(class_store, oidc_email=INSTRUCTOR, email_verified="true").problem == "email_unverified"
    assert signin.resolve(class_store, oidc_email=INSTRUCTOR, email_verified=True).user.email == INSTRUCTOR


def test_a_removed_learner_cannot_sign_in_and_stays_in_the_gradebook_marked(class_store, sqlite_url, capsys):
    add_graded(class_store, "ann@class.test", "ex00", 1.0, "passed")
    session_token = _signed_in(class_store, "ann@class.test")
    unused_link, _ = create_sign_in_link(class_store, "ann@class.test")
    ann = user_id(class_store, "ann@class.test")
    assert cli.main(["roster", "remove", "Ann@class.test", "--db", sqlite_url]) == 0
    assert "1 session(s) and 1 unused link(s) revoked" in capsys.readouterr().out
    assert user_for_session(class_store, session_token) is None
    assert redeem_sign_in_token(class_store, _token(unused_link)) is None
    assert signin.resolve(class_store, oidc_email="ann@class.test", email_verified=True).problem == "not_on_roster"
    with pytest.raises(LookupError):
        create_sign_in_link(class_store, "ann@class.test")
    with pytest.raises(SubmitRefused):
        submit(class_store, ann, "ex00", "x = 1", "ex00_paths.py")
    with pytest.raises(access.AccessDenied):
        access.history(class_store, ann)
    book = access.gradebook(class_store, user_id(class_store, INSTRUCTOR)).set_index("email")
    assert book.loc["ann@class.test", "ex00"] == 1.0 and book.loc["ann@class.test", "removed"] == 1
    assert book.loc["bob@class.test", "removed"] == 0
    assert "ann@class.test" not in [u.email for u in list_users(class_store)]


@pytest.mark.slow
def test_a_removed_person_stays_removed_when_the_roster_is_imported_again(any_store, tmp_path, capsys):
    """Removal sticks: the same roster.csv imported again says who stays off, and only --readmit lets them in."""
    url = any_store.engine.url.render_as_string(hide_password=False)
    remove_user(any_store, "bob@class.test")
    roster = tmp_path / "again.csv"
    roster.write_text("email,name,role\nann@class.test,Ann,learner\nbob@class.test,Bob,learner\n"
                      "dee@class.test,Dee,learner\n")
    assert cli.main(["roster", "import", str(roster), "--db", url]) == 0
    out = capsys.readouterr().out
    assert "1 added, 0 updated, 1 unchanged" in out
    assert "kept off the roster (1, removed earlier; they still cannot sign in): bob@class.test" in out
    assert f"python -m classroom roster import {roster} --readmit" in out  # how to let them back in
    assert "bob@class.test" in removed_emails(any_store)
    with pytest.raises(LookupError):
        create_sign_in_link(any_store, "bob@class.test")
    assert cli.main(["roster", "import", str(roster), "--readmit", "--db", url]) == 0
    out = capsys.readouterr().out
    assert "0 added, 1 updated, 2 unchanged" in out and "kept off" not in out
    assert removed_emails(any_store) == set()
    assert user_for_session(any_store, _signed_in(any_store, "bob@class.test")).email == "bob@class.test"


def test_readmit_belongs_to_the_import(class_store, sqlite_url, capsys):
    assert cli.main(["roster", "remove", "bob@class.test", "--readmit", "--db", sqlite_url]) == 1
    assert "--readmit goes with `roster import FILE`" in capsys.readouterr().err
    assert removed_emails(class_store) == set()  # nothing was done


def test_the_only_instructor_cannot_be_removed(class_store):
    with pytest.raises(ValueError, match="only instructor"):
        remove_user(class_store, INSTRUCTOR)


def test_a_new_link_replaces_the_older_unused_ones(class_store):
    first, _ = create_sign_in_link(class_store, "cy@class.test")
    second, _ = create_sign_in_link(class_store, "cy@class.test")
    assert redeem_sign_in_token(class_store, _token(first)) is None
    assert redeem_sign_in_token(class_store, _token(second)) is not None


def test_links_revoke_one_person_or_everyone(class_store, sqlite_url, capsys):
    links = {email: create_sign_in_link(class_store, email)[0]
             for email in ("ann@class.test", "bob@class.test", "cy@class.test")}
    assert cli.main(["links", "revoke", "ann@class.test", "--db", sqlite_url]) == 0
    assert "revoked 1 unused sign-in link(s) of ann@class.test" in capsys.readouterr().out
    assert redeem_sign_in_token(class_store, _token(links["ann@class.test"])) is None
    assert cli.main(["links", "revoke", "--all", "--db", sqlite_url]) == 0
    assert "revoked 2 unused" in capsys.readouterr().out
    assert all(redeem_sign_in_token(class_store, _token(link)) is None for link in links.values())
    assert cli.main(["links", "revoke", "--db", sqlite_url]) == 1  # neither an email nor --all
    assert "name one EMAIL or pass --all" in capsys.readouterr().err


def test_sessions_revoke_one_person_or_everyone(class_store, sqlite_url, capsys):
    ann, bob = _signed_in(class_store, "ann@class.test"), _signed_in(class_store, "bob@class.test")
    assert cli.main(["sessions", "revoke", "ann@class.test", "--db", sqlite_url]) == 0
    assert user_for_session(class_store, ann) is None
    assert user_for_session(class_store, bob).email == "bob@class.test"
    assert cli.main(["sessions", "revoke", "--all", "--db", sqlite_url]) == 0
    assert "revoked 1 session(s) of everyone" in capsys.readouterr().out
    assert user_for_session(class_store, bob) is None
    assert cli.main(["sessions", "revoke", "ghost@class.test", "--db", sqlite_url]) == 1


def test_link_and_session_lifetimes_are_set_with_limits(class_store, sqlite_url):
    assert cli.main(["limits", "--session-hours", "2", "--link-hours", "1", "--db", sqlite_url]) == 0
    link, expires = create_sign_in_link(class_store, "ann@class.test")
    assert abs((expires - utcnow()) - timedelta(hours=1)) < timedelta(minutes=1)
    redeem_sign_in_token(class_store, _token(link))
    with class_store.session() as session:
        from sqlalchemy import select

        from classroom.data.models import LoginSession

        session_expires = session.scalar(select(LoginSession.expires_at))
    assert abs((session_expires - utcnow()) - timedelta(hours=2)) < timedelta(minutes=1)


@pytest.mark.parametrize("args", [["--per-hour", "-5"], ["--in-flight", "x"], ["--in-flight", "1.5"],
                                  ["--session-hours", "0"], ["--link-hours", "-1"]])
def test_limits_refuses_bad_values_and_changes_nothing(class_store, sqlite_url, capsys, args):
    before = get_settings(class_store)
    assert cli.main(["limits", *args, "--db", sqlite_url]) == 2
    assert f"argument {args[0]}" in capsys.readouterr().err
    assert get_settings(class_store) == before


@pytest.mark.parametrize("args", [["--penalty", "1.5"], ["--penalty", "-0.1"], ["--window-h", "-2"],
                                  ["--window-h", "nan"]])
def test_deadline_refuses_bad_values(class_store, sqlite_url, capsys, args):
    assert cli.main(["deadline", "ex01", "none", *args, "--db", sqlite_url]) == 2
    assert f"argument {args[0]}" in capsys.readouterr().err


def test_a_negative_setting_is_refused_in_the_store_too(class_store):
    with pytest.raises(ValueError):
        set_setting(class_store, "per_hour", -5)
