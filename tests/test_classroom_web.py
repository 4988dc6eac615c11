"""Class pages under AppTest: what the address bar may carry, names as plain text, faults worded for learners."""

import time
from datetime import timedelta

import pytest
from sqlalchemy import select, update

from classroom.line import queue
from classroom.data.sessions import create_sign_in_link
from classroom.data.models import Submission, User, Worker, utcnow
from course.common.i18n import t
from tests.app_helpers import APP, AppTest, errors_of, everything_shown
from tests.classroom_support import INSTRUCTOR, ROOT, add_graded, session_token, user_id
from tests.test_classroom_app import GRADEBOOK, PRACTICE, submit_ex00

HOSTILE_NAME = "**markdown** [link](https://evil.test)"


@pytest.fixture
def hosted(class_store, sqlite_url, monkeypatch, tmp_path):
    """The class database the app is pointed at, with one graded submission of bob's."""
    monkeypatch.setenv("ATTENTION_LAB_CLASS_DB", sqlite_url)
    monkeypatch.setenv("ATTENTION_LAB_HOME", str(tmp_path))
    add_graded(class_store, "bob@class.test", "ex03", 0.4, "failed", ["dot_no_scale"])
    return class_store


def _practice(token, lang="en"):
    at = AppTest.from_file(str(ROOT / PRACTICE), default_timeout=60)
    at.session_state["app_lang"] = lang
    at.session_state["class_session"] = token
    return at.run()


def test_a_session_token_in_the_address_bar_signs_nobody_in(hosted):
    token = session_token(hosted, user_id(hosted, "ann@class.test"))
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state["app_lang"] = "en"
    at.query_params["session"] = token  # a copied address of the old kind
    at.run()
    at.switch_page(PRACTICE).run()
    assert at.title[0].value == t("classroom.signin_title", "en")
    assert not at.text_area


def test_a_used_link_leaves_the_address_bar_on_a_chapter_page(hosted):
    link, _ = create_sign_in_link(hosted, "ann@class.test")
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state["app_lang"] = "en"
    at.query_params["token"] = link.split("token=")[1]
    at.run()
    assert errors_of(at) == []
    assert "token" not in at.query_params and "session" not in at.query_params
    assert at.session_state["class_session"]  # signed in for this tab


def test_a_roster_name_is_plain_text_in_the_sidebar(hosted):
    with hosted.session() as session:
        session.execute(update(User).where(User.email == "ann@class.test").values(name=HOSTILE_NAME))
    at = _practice(session_token(hosted, user_id(hosted, "ann@class.test")))
    assert errors_of(at) == []
    assert HOSTILE_NAME in [x.value for x in at.sidebar.text]
    assert "evil.test" not in "\n".join(m.value for m in [*at.sidebar.markdown, *at.sidebar.caption])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_read_only_database_refuses_a_submit_in_the_learners_words(hosted, lang, tmp_path, monkeypatch):
    token = session_token(hosted, user_id(hosted, "ann@class.test"))
    monkeypatch.setenv("ATTENTION_LAB_CLASS_DB", f"sqlite:///file:{tmp_path / 'class.db'}?mode=ro&uri=true")
    at = _practice(token, lang)
    submit_ex00(at, "def receptive_field(kernel_size, num_layers, dilations=None):\n    return 1\n")
    assert [e.value for e in at.error] == [t("classroom.db_unavailable", lang)]
    shown = everything_shown(at)
    assert "OperationalError" not in shown and "sqlite" not in shown.lower() and str(tmp_path) not in shown
    assert not at.success and not at.exception
    with hosted.session() as session:
        assert session.scalar(select(Submission.id).where(Submission.exercise_id == "ex00")) is None


def _worker_seen(store, seconds_ago):
    with store.session() as session:
        session.merge(Worker(id="w1", host="h", pid=1, sandbox="process", started_at=utcnow(), jobs_done=0,
                             last_seen=utcnow() - timedelta(seconds=seconds_ago), lease_s=queue.LEASE_S))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_learner_sees_that_grading_is_delayed_with_no_live_worker(hosted, lang):
    _worker_seen(hosted, 0)
    at = _practice(session_token(hosted, user_id(hosted, "ann@class.test")), lang)
    submit_ex00(at, "x = 1\n")
    delayed = t("classroom.grading_delayed", lang)
    assert delayed not in [w.value for w in at.warning]  # a live worker: the job merely waits its turn
    _worker_seen(hosted, 2 * queue.LEASE_S)  # the only worker went silent
    deadline = time.monotonic() + 10  # the page reads a live snapshot shared by all pages (live.MAX_AGE_S old at most)
    at.run()
    while delayed not in [w.value for w in at.warning] and time.monotonic() < deadline:
        at.run()
    assert delayed in [w.value for w in at.warning]


def test_each_exercise_has_its_own_uploader_and_the_limit_is_said(hosted):
    at = _practice(session_token(hosted, user_id(hosted, "ann@class.test")))
    uploaders = lambda: [e.proto.id for e in at.get("file_uploader")]  # noqa: E731
    first = uploaders()
    assert len(first) == 1 and t("classroom.upload_limit", "en") in [c.value for c in at.caption]
    at.selectbox(key="practice_class_ex").set_value("ex06")
    at.run()
    assert len(uploaders()) == 1 and uploaders() != first  # another widget: no file carried over


def test_the_gradebook_shows_a_dash_where_nothing_was_submitted(hosted):
    at = AppTest.from_file(str(ROOT / GRADEBOOK), default_timeout=60)
    at.session_state["app_lang"] = "en"
    at.session_state["class_session"] = session_token(hosted, user_id(hosted, INSTRUCTOR))
    at.run()
    assert errors_of(at) == []
    import pyarrow as pa

    shown = pa.ipc.open_stream(at.dataframe[0].proto.arrow_data.styler.display_values).read_all().to_pandas()
    book = at.dataframe[0].value
    assert book["ex00"].isna().all()  # the values stay numbers (the column sorts as numbers)
    assert shown["ex00"].tolist() == ["—"] * 3 and "None" not in shown.to_string()
    assert shown.loc[book["email"] == "bob@class.test", "ex03"].item() == "40%"  # in percent
