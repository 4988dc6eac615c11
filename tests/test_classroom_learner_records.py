"""Self-study state in class mode: notes and progress per learner, in the database only (AppTest)."""

import json
import re
import threading
from datetime import datetime, timedelta

import pytest

from classroom.web import learner_records
from classroom.data.models import Note
from course.app import progress
from course.common import exercise_index
from course.common.i18n import t
from tests.app_helpers import APP, AppTest, errors_of, open_page
from tests.classroom_support import ROOT, add_graded, session_token, user_id

TOTAL = len(exercise_index.EXERCISES)


@pytest.fixture
def hosted(class_store, sqlite_url, monkeypatch, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("ATTENTION_LAB_CLASS_DB", sqlite_url)
    monkeypatch.setenv("ATTENTION_LAB_HOME", str(home))
    return class_store


def _signed_in(store, email, path, lang="en"):
    """The app as `email`, on `path` (through app.py, which makes the class the page's Learner)."""
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.session_state["app_lang"] = lang
    at.session_state["class_session"] = session_token(store, user_id(store, email))
    at.run()
    return at.switch_page(path).run()


def _note_box(at, uid, chapter="ch01"):
    return at.text_area(key=f"notes_u{uid}_{chapter}")


@pytest.fixture
def downloads(monkeypatch):
    """The bytes each st.download_button hands to Streamlit's media storage, in order."""
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

    stored, original = [], MemoryMediaFileStorage.load_and_get_id

    def spy(self, path_or_data, mimetype, kind, filename=None):
        stored.append((filename, path_or_data))
        return original(self, path_or_data, mimetype, kind, filename)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", spy)
    return stored


def test_two_learners_notes_never_mix_and_live_only_in_the_database(hosted, tmp_path):
    ann, bob = user_id(hosted, "ann@class.test"), user_id(hosted, "bob@class.test")
    at_ann = _signed_in(hosted, "ann@class.test", "app_pages/notes.py")
    assert errors_of(at_ann) == []
    _note_box(at_ann, ann).set_value("ann: c = h_n is a bottleneck").run()
    at_bob = _signed_in(hosted, "bob@class.test", "app_pages/notes.py")
    assert _note_box(at_bob, bob).value == ""  # bob does not see ann's note
    assert not any(w.key and w.key.startswith(f"notes_u{ann}_") for w in at_bob.text_area)
    _note_box(at_bob, bob).set_value("bob: 注意力汇聚").run()
    _note_box(at_bob, bob, "ch02").set_value("bob ch02").run()
    _note_box(at_ann, ann).set_value("ann: edited").run()  # the last write wins
    assert learner_records.load_notes(hosted, ann) == {"ch01": "ann: edited"}
    assert learner_records.load_notes(hosted, bob) == {"ch01": "bob: 注意力汇聚", "ch02": "bob ch02"}
    again = _signed_in(hosted, "ann@class.test", "app_pages/notes.py")  # a new browser session: from the database
    assert _note_box(again, ann).value == "ann: edited" and _note_box(again, ann, "ch02").value == ""
    assert t("notes.saved_at", "en", time=t("ui.time.today", "en", time="")) in " ".join(c.value for c in again.caption)
    assert list((tmp_path / "home").iterdir()) == []  # no notes file, no progress file


def _saved_captions(at, lang):
    """The Notes page's "Saved ..." captions, in page order."""
    return [c.value for c in at.caption if c.value.startswith(t("notes.saved_at", lang, time=""))]


def _both_back_ends(class_store, sqlite_url, monkeypatch, tmp_path, lang, write):
    """The Notes page's saved-time captions in self-study, then in class mode, after `write(at, prefix)`."""
    monkeypatch.delenv("ATTENTION_LAB_CLASS_DB", raising=False)
    monkeypatch.setenv("ATTENTION_LAB_HOME", str(tmp_path / "home"))
    local = open_page("app_pages/notes.py", lang=lang)
    write(local, "notes_")
    local.run()
    monkeypatch.setenv("ATTENTION_LAB_CLASS_DB", sqlite_url)
    ann = user_id(class_store, "ann@class.test")
    in_class = _signed_in(class_store, "ann@class.test", "app_pages/notes.py", lang)
    write(in_class, f"notes_u{ann}_")
    in_class.run()
    assert errors_of(local) == [] and errors_of(in_class) == []
    return _saved_captions(local, lang), _saved_captions(in_class, lang)


@pytest.mark.parametrize(("lang", "expected"), [("en", "Saved on 2 Jan 2026 at 11:04"),
                                                ("zh", "保存于 2026年1月2日 11:04")])
def test_both_note_back_ends_word_a_saved_time_alike(class_store, sqlite_url, monkeypatch, tmp_path, utc_plus_8,
                                                     lang, expected):
    """The same moment, 03:04:05 UTC, kept by each back end its own way, reads the same: local time, in words."""
    (tmp_path / "home").mkdir()

    def write(at, prefix):
        if prefix == "notes_":  # the local file keeps local time with its offset
            (tmp_path / "home" / "notes.json").write_text(json.dumps(
                {"version": 1, "notes": {"ch02": {"text": "kept", "saved_at": "2026-01-02T11:04:05+0800"}}}))
        else:  # the class database keeps naive UTC
            with class_store.session() as session:
                session.add(Note(user_id=user_id(class_store, "ann@class.test"), page_key="ch02", text="kept",
                                 updated_at=datetime(2026, 1, 2, 3, 4, 5)))

    local, hosted = _both_back_ends(class_store, sqlite_url, monkeypatch, tmp_path, lang, write)
    assert local == hosted == [expected]


def test_a_note_just_written_reads_today_in_both_back_ends(class_store, sqlite_url, monkeypatch, tmp_path, utc_plus_8):
    def write(at, prefix):
        at.text_area(key=f"{prefix}ch01").input("Teacher forcing feeds the true prefix.")

    local, hosted = _both_back_ends(class_store, sqlite_url, monkeypatch, tmp_path, "en", write)
    today = re.escape(t("notes.saved_at", "en", time=t("ui.time.today", "en", time="@"))).replace("@", r"(\d\d:\d\d)")
    clocks = [re.fullmatch(today, caption) for caption in local + hosted]
    assert len(clocks) == 2 and all(clocks), (local, hosted)  # "Saved today at 11:04", never a raw stamp
    now = datetime.now().astimezone()
    assert {m.group(1) for m in clocks} <= {f"{now - timedelta(minutes=m):%H:%M}" for m in range(3)}, clocks


def test_notes_export_holds_only_the_learners_own_notes(hosted, downloads):
    ann, bob = user_id(hosted, "ann@class.test"), user_id(hosted, "bob@class.test")
    learner_records.save_note(hosted, ann, "ch01", "ANN-SECRET")
    learner_records.save_note(hosted, bob, "ch01", "BOB-SECRET")
    at = _signed_in(hosted, "bob@class.test", "app_pages/notes.py", "zh")
    assert errors_of(at) == [] and _note_box(at, bob).value == "BOB-SECRET"
    assert not any("ANN-SECRET" in (w.value or "") for w in at.text_area)
    [(name, data)] = [(n, d) for n, d in downloads if n and n.startswith("attention-lab-notes")]
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    assert name == "attention-lab-notes-zh.md" and "BOB-SECRET" in text and "ANN-SECRET" not in text


def test_notes_need_a_sign_in(hosted):
    learner_records.save_note(hosted, user_id(hosted, "ann@class.test"), "ch01", "ANN-SECRET")
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state["app_lang"] = "en"
    at.session_state["class_session"] = "forged-token"
    at.run()
    at.switch_page("app_pages/notes.py").run()
    assert at.title[0].value == t("classroom.signin_title", "en")
    assert not any("ANN-SECRET" in (w.value or "") for w in at.text_area)


def test_concurrent_saves_of_one_note_leave_one_whole_text(hosted):
    ann = user_id(hosted, "ann@class.test")
    texts = [f"version {i} " * 50 for i in range(8)]
    threads = [threading.Thread(target=learner_records.save_note, args=(hosted, ann, "ch03", text)) for text in texts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert learner_records.load_notes(hosted, ann)["ch03"] in texts
    learner_records.save_note(hosted, ann, "ch03", "  ")
    assert learner_records.load_notes(hosted, ann) == {}


def test_best_results_have_the_progress_files_shape(hosted):
    ann = user_id(hosted, "ann@class.test")
    add_graded(hosted, "ann@class.test", "ex03", 0.4, "failed", ["dot_no_scale"], minutes=0)
    add_graded(hosted, "ann@class.test", "ex03", 1.0, "passed", minutes=1)
    add_graded(hosted, "ann@class.test", "ex03", 0.2, "failed", minutes=2)  # a later worse try
    add_graded(hosted, "ann@class.test", "ex00", 0.0, "not_written")
    add_graded(hosted, "bob@class.test", "ex01", 1.0, "passed")
    results = learner_records.best_results(hosted, ann)
    assert results == {"ex03": {"passed": True, "score": 1.0, "status": "passed", "summary": ""},
                       "ex00": {"passed": False, "score": 0.0, "status": "not_written", "summary": ""}}
    assert exercise_index.status_of("ex03", results) == "passed"
    assert exercise_index.status_of("ex00", results) == "not_written"


def _sidebar_progress(at):
    return [p.proto.text for p in at.sidebar.get("progress")]


def test_sidebar_and_chapter_footers_show_the_signed_in_learners_results(hosted, tmp_path):
    add_graded(hosted, "ann@class.test", "ex00", 1.0, "passed")
    add_graded(hosted, "ann@class.test", "ex02", 1.0, "passed")
    add_graded(hosted, "bob@class.test", "ex00", 0.4, "failed")
    # A local progress file (someone's self-study on the server) must never show in class mode.
    progress.save_results(ROOT / "exercises", {ex.id: {"passed": True, "score": 1.0, "status": "passed"}
                                               for ex in exercise_index.EXERCISES})
    before = (tmp_path / "home" / "progress.json").read_bytes()
    seen = {}
    for email in ("ann@class.test", "bob@class.test"):
        at = AppTest.from_file(str(APP), default_timeout=120)
        at.session_state["app_lang"] = "en"
        at.session_state["class_session"] = session_token(hosted, user_id(hosted, email))
        at.run()
        sidebar = _sidebar_progress(at)
        at.switch_page("app_pages/ch01_seq2seq.py").run()
        assert errors_of(at) == []
        footer = [m.value for m in at.markdown if "ex00" in m.value and "exercises/" in m.value]
        captions = [c.value for c in at.caption]
        seen[email] = (sidebar, footer, captions)
    assert seen["ann@class.test"][0] == [t("app.progress", "en", passed=2, total=TOTAL)]
    assert seen["bob@class.test"][0] == [t("app.progress", "en", passed=0, total=TOTAL)]
    passed, failed = t("app.status.passed", "en"), t("app.status.failed", "en")
    assert any(passed in line for line in seen["ann@class.test"][1]), seen["ann@class.test"][1]
    assert any(failed in line for line in seen["bob@class.test"][1]), seen["bob@class.test"][1]
    assert t("app.footer_score", "en", score="40") in seen["bob@class.test"][2]
    assert t("app.footer_score", "en", score="100") in seen["ann@class.test"][2]
    assert (tmp_path / "home" / "progress.json").read_bytes() == before


def test_not_signed_in_no_progress_shows(hosted):
    progress.save_results(ROOT / "exercises", {"ex00": {"passed": True, "score": 1.0, "status": "passed"}})
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.session_state["app_lang"] = "en"
    at.run()
    assert _sidebar_progress(at) == []
