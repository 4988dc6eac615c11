"""Class pages with the class database unreachable: a message in the learner's words, no server detail, nothing lost.

Real databases made unavailable: a SQLite file whose folder is gone when the
server starts (as root, a file's permissions stop nothing: see the Chromium
test in test_classroom_browser_faults.py for an unreadable file under an
unprivileged server) and a Postgres server stopped while the page is in use.
"""

import shutil

import pytest

from course.common.i18n import t
from tests.app_helpers import APP, AppTest, everything_shown
from tests.classroom_support import INSTRUCTOR, ROOT, add_graded, make_class, session_token, user_id
from tests.test_classroom_app import ANALYTICS, GRADEBOOK, PRACTICE

LEAKS = ("OperationalError", "sqlalchemy", "sqlite", "psycopg", "Traceback", "class.db", "/tmp/", "127.0.0.1")


def _open(path, token, lang):
    at = AppTest.from_file(str(ROOT / path), default_timeout=60)
    at.session_state["app_lang"] = lang
    if token:
        at.session_state["class_session"] = token
    return at.run()


def _says_unavailable(at, lang, where):
    """Exactly the learner-facing message: no exception, no server detail, in `lang`."""
    shown = everything_shown(at)
    assert not at.exception, f"{where}: {[e.value for e in at.exception]}"
    assert [e.value for e in at.error] == [t("classroom.db_unavailable_read", lang)], where
    assert not [leak for leak in LEAKS if leak.lower() in shown.lower()], (where, shown)


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_class_page_says_a_missing_sqlite_database_in_the_learners_words(tmp_path, monkeypatch, lang):
    disk = tmp_path / "disk"
    disk.mkdir()
    url = f"sqlite:///{disk / 'class.db'}"
    store = make_class(url, tmp_path)
    add_graded(store, "ann@class.test", "ex03", 0.4, "failed", ["dot_no_scale"])
    learner = session_token(store, user_id(store, "ann@class.test"))
    instructor = session_token(store, user_id(store, INSTRUCTOR))
    store.close()
    monkeypatch.setenv("ATTENTION_LAB_CLASS_DB", url)
    monkeypatch.setenv("ATTENTION_LAB_HOME", str(tmp_path / "home"))
    shutil.move(disk, tmp_path / "elsewhere")  # the disk holding the database is gone
    for path, token in [(APP, None), (APP, learner), (PRACTICE, learner), (GRADEBOOK, instructor),
                        (ANALYTICS, instructor)]:
        _says_unavailable(_open(path, token, lang), lang, f"{path} signed in={bool(token)}")
    shutil.move(tmp_path / "elsewhere", disk)  # back: the same sessions work again, nothing was lost
    at = _open(PRACTICE, learner, lang)
    assert not at.error and not at.exception
    assert at.dataframe[0].value.iloc[:, 1].tolist() == ["ex03"]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.slow
def test_a_stopped_postgres_is_said_on_every_class_page_and_nothing_is_lost(own_postgres, tmp_path, monkeypatch,
                                                                            lang):
    url = f"{own_postgres.url}/postgres"
    store = make_class(url, tmp_path)
    add_graded(store, "ann@class.test", "ex03", 0.4, "failed", ["dot_no_scale"])
    learner = session_token(store, user_id(store, "ann@class.test"))
    instructor = session_token(store, user_id(store, INSTRUCTOR))
    store.close()
    monkeypatch.setenv("ATTENTION_LAB_CLASS_DB", url)
    monkeypatch.setenv("ATTENTION_LAB_HOME", str(tmp_path / "home"))
    pages = {path: _open(path, token, lang) for path, token in
             [(APP, learner), (PRACTICE, learner), (GRADEBOOK, instructor), (ANALYTICS, instructor)]}
    assert not [(path, at.error, at.exception) for path, at in pages.items() if at.error or at.exception]
    own_postgres.stop()  # while the pages are open: the next run of each finds no server
    for path, at in pages.items():
        _says_unavailable(at.run(), lang, path)
    own_postgres.start()
    at = pages[PRACTICE].run()  # the same tab, still signed in, with its history
    assert not at.error and not at.exception
    assert at.dataframe[0].value.iloc[:, 1].tolist() == ["ex03"]
