"""Notes: saved atomically per chapter, surviving restarts, exported as Markdown."""

import json
import re
from datetime import datetime, timedelta, timezone

import pytest
from app_helpers import errors_of, open_page

from course.app import notes
from course.common import pages_index
from course.common.i18n import t

pytestmark = pytest.mark.usefixtures("lab_home")  # progress and notes in a fresh folder per test


def test_save_and_load_round_trip(lab_home):
    assert notes.load_notes() == {}
    notes.save_note("ch01", "c = h_n is a bottleneck")
    notes.save_note("ch02", "注意力汇聚 = 加权平均")
    assert notes.load_notes() == {"ch01": "c = h_n is a bottleneck", "ch02": "注意力汇聚 = 加权平均"}
    data = json.loads((lab_home / "notes.json").read_text(encoding="utf-8"))
    assert data["version"] == 1 and data["notes"]["ch02"]["text"] == "注意力汇聚 = 加权平均"
    assert notes.saved_at("ch01") is not None and notes.saved_at("ch09") is None
    assert [p.name for p in lab_home.iterdir()] == ["notes.json"]  # no temporary files left


def test_saving_updates_one_note_and_empty_text_removes_it():
    notes.save_note("ch01", "first")
    notes.save_note("ch02", "second")
    notes.save_note("ch01", "first, edited")
    assert notes.load_notes() == {"ch01": "first, edited", "ch02": "second"}
    notes.save_note("ch02", "   ")
    assert notes.load_notes() == {"ch01": "first, edited"}


def test_bad_arguments_get_clear_errors():
    with pytest.raises(ValueError, match="chapter key"):
        notes.save_note("", "x")
    with pytest.raises(TypeError, match="a note is text"):
        notes.save_note("ch01", 3)


def test_an_unreadable_file_is_kept_aside_not_overwritten(lab_home):
    (lab_home / "notes.json").write_text("{not json", encoding="utf-8")
    assert notes.load_notes() == {}
    notes.save_note("ch01", "new")
    assert (lab_home / "notes.json.unreadable").read_text(encoding="utf-8") == "{not json"
    assert notes.load_notes() == {"ch01": "new"}


def test_to_markdown_orders_by_chapter_and_skips_empty_notes():
    text = notes.to_markdown(
        {"ch02": "two", "ch01": "one\n", "ch03": "  ", "extra": "loose"},
        {"ch01": "Chapter 1", "ch02": "Chapter 2", "ch03": "Chapter 3"},
        heading="My notes",
    )
    assert text == "# My notes\n\n## Chapter 1\n\none\n\n## Chapter 2\n\ntwo\n\n## extra\n\nloose\n"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_notes_page_saves_on_change_and_survives_a_restart(lang, lab_home):
    at = open_page("app_pages/notes.py", lang=lang)
    assert errors_of(at) == []
    chapters = pages_index.chapters()
    assert [a.key for a in at.text_area] == [f"notes_{c.key}" for c in chapters]
    # each note under its chapter's own title, as the chapter page shows it (the sidebar's may be shorter)
    assert [a.label for a in at.text_area] == [t(f"{c.key}.title", lang) for c in chapters]
    at.text_area(key="notes_ch01").input("Teacher forcing feeds the true prefix.").run()
    assert notes.load_notes() == {"ch01": "Teacher forcing feeds the true prefix."}
    assert any(t("notes.saved_at", lang, time="")[:3] in c.value for c in at.caption)
    captions = " ".join(c.value for c in at.caption)
    assert not re.search(r"\d{4}-\d\d-\d\dT", captions), captions  # no raw ISO stamp
    assert t("ui.time.today", lang, time="")[:2] in captions

    restarted = open_page("app_pages/notes.py", lang=lang)  # a new session reads the file
    assert restarted.text_area(key="notes_ch01").value == "Teacher forcing feeds the true prefix."
    assert restarted.text_area(key="notes_ch02").value == ""
    assert len(restarted.get("download_button")) == 1


def test_saved_times_read_as_words(utc_plus_8):
    now = datetime(2026, 12, 1, 16, 0).astimezone()
    today = now.replace(hour=9, minute=5)
    earlier = (now - timedelta(days=2)).replace(hour=21, minute=30)
    assert notes.readable_time(today, "en", now) == "today at 09:05"
    assert notes.readable_time(today, "zh", now) == "今天 09:05"
    assert notes.readable_time(earlier, "en", now) == "on 29 Nov 2026 at 21:30"
    assert notes.readable_time(earlier, "zh", now) == "2026年11月29日 21:30"
    in_utc = today.astimezone(timezone.utc)  # 01:05 UTC, the same moment: the local clock is shown
    assert notes.readable_time(in_utc, "en", now) == "today at 09:05"
    assert notes.readable_time(datetime(2026, 11, 30, 20, 0, tzinfo=timezone.utc), "en", now) == "today at 04:00"


def test_saved_at_is_a_timezone_aware_moment(lab_home):
    before = datetime.now(timezone.utc).replace(microsecond=0)
    notes.save_note("ch01", "x")
    stamp = notes.saved_at("ch01")
    assert stamp.tzinfo is not None and before <= stamp <= datetime.now(timezone.utc)
    odd = {"version": 1, "notes": {"ch01": {"text": "x", "saved_at": "soon"}}}
    (lab_home / "notes.json").write_text(json.dumps(odd), encoding="utf-8")
    assert notes.saved_at("ch01") is None  # an unreadable stamp shows no time
