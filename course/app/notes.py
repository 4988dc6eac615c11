"""The learner's notes: one Markdown note per chapter, kept in notes.json.

Stored next to the progress file in `$ATTENTION_LAB_HOME/notes.json`, written
atomically so a crash never loses earlier notes, and exportable as a single
Markdown document.
"""

import json
import time
from datetime import datetime

from course.common.i18n import t
from course.common.paths import atomic_write_text, data_home

FORMAT_VERSION = 1
STAMP_FORMAT = "%Y-%m-%dT%H:%M:%S%z"  # saved_at in the file: local time with its UTC offset


def notes_path():
    """The JSON file that holds the notes."""
    return data_home() / "notes.json"


def load_notes():
    """All notes as {chapter key: text}; empty when none were saved or the file is unreadable."""
    try:
        data = json.loads(notes_path().read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
        return {}
    notes = data.get("notes") if isinstance(data, dict) else None
    if not isinstance(notes, dict):
        return {}
    return {key: value["text"] for key, value in notes.items() if isinstance(value, dict) and isinstance(value.get("text"), str)}


def saved_at(key):
    """When the note for `key` was last saved (a timezone-aware datetime), or None."""
    try:
        data = json.loads(notes_path().read_text(encoding="utf-8"))
        return datetime.strptime(data["notes"][key]["saved_at"], STAMP_FORMAT)
    except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, ValueError):
        return None


def readable_time(moment, lang, now=None):
    """A timezone-aware moment in local time, for people: "today at 15:42" / "今天 15:42", else with its date."""
    moment = moment.astimezone()
    now = now or datetime.now().astimezone()
    clock = f"{moment:%H:%M}"
    if moment.date() == now.date():
        return t("ui.time.today", lang, time=clock)
    month = t("ui.time.months", lang).split()[moment.month - 1]
    date = t("ui.time.date_format", lang).format(year=moment.year, month=month, day=moment.day)
    return t("ui.time.other_day", lang, date=date, time=clock)


def save_note(key, text):
    """Save one chapter's note, keeping the others; an empty text removes it.

    An unreadable notes file is not overwritten but renamed to notes.json.unreadable.
    """
    if not isinstance(key, str) or not key:
        raise ValueError("a note needs a chapter key such as 'ch01'")
    if not isinstance(text, str):
        raise TypeError(f"a note is text, got {type(text).__name__}")
    path = notes_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        notes = data["notes"] if isinstance(data.get("notes"), dict) else {}
    except FileNotFoundError:
        notes = {}
    except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
        path.replace(path.with_name(path.name + ".unreadable"))  # keep it for the learner to rescue
        notes = {}
    if text.strip():
        notes[key] = {"text": text, "saved_at": time.strftime(STAMP_FORMAT)}
    else:
        notes.pop(key, None)
    payload = {"version": FORMAT_VERSION, "notes": notes}
    atomic_write_text(notes_path(), json.dumps(payload, indent=2, ensure_ascii=False))


def to_markdown(notes, titles, heading="Attention Lab notes"):
    """One Markdown document: a heading, then a section per chapter in `titles` order.

    `titles` is {chapter key: title}; chapters without a note are left out,
    and notes whose chapter is not in `titles` come last under their key.
    """
    parts = [f"# {heading}\n"]
    keys = [key for key in titles if notes.get(key, "").strip()]
    keys += sorted(key for key in notes if key not in titles and notes[key].strip())
    for key in keys:
        parts.append(f"## {titles.get(key, key)}\n\n{notes[key].strip()}\n")
    return "\n".join(parts)
