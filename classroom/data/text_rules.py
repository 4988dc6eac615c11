"""What text from outside (a submitted file, a roster or LMS name, an LMS claim) may hold, and how code is shown
to staff.

Control characters are not text: a NUL makes Postgres refuse the row (SQLite
would keep it), and the others are invisible or move the cursor. They are
refused where the text comes in, on every backend, with where they are; a
file's code keeps its tabs and line breaks. Characters that are allowed but
change how a line reads (bidi controls: a "Trojan Source" line shows other
code than it runs; zero-width characters: two names that look the same) are
kept as sent and marked wherever code is shown to staff (visible_code).
"""

import re

from course.common.i18n import t

CONTROL_IN_CODE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")  # tab, LF, CR are code's layout
CONTROL_IN_NAME = re.compile("[\x00-\x1f\x7f-\x9f]")  # a name or id is one line
INVISIBLE = re.compile("[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def codepoint(char):
    """'U+0000' for a character."""
    return f"U+{ord(char):04X}"


def first_control(text, code=False):
    """The first control character of `text` as (line, column, 'U+....') (both from 1), or None; in `code` tab,
    line feed and carriage return are allowed."""
    found = (CONTROL_IN_CODE if code else CONTROL_IN_NAME).search(text or "")
    if found is None:
        return None
    before = text[:found.start()]
    return before.count("\n") + 1, found.start() - (before.rfind("\n") + 1) + 1, codepoint(found.group())


def code_problem(text, filename, lang="en"):
    """Why a submitted file's text is refused (a control character: what, where, how to fix), or None."""
    found = first_control(text, code=True)
    if found is None:
        return None
    line, column, char = found
    return t("classroom.bad_char_file", lang, filename=filename, char=char, line=line, column=column)


def filename_problem(filename, lang="en"):
    """Why a submitted file's name is refused (a control character), or None."""
    found = first_control(str(filename))
    return None if found is None else t("classroom.bad_char_filename", lang, char=found[2], column=found[1])


def name_problem(text):
    """The first control character of a one-line name or id as 'U+....', or None."""
    found = first_control(text)
    return None if found is None else found[2]


def visible_code(source):
    """Code as staff see it -> (text, count): each bidi control or zero-width character replaced by a visible
    «U+....» mark, and how many there were."""
    text, count = INVISIBLE.subn(lambda m: f"«{codepoint(m.group())}»", source or "")
    return text, count


EMAIL_RE = re.compile(r"^[^@\s,;]+@[^@\s,;]+\.[^@\s,;]+$")


def clean_email(email):
    """An email as the roster keys it: trimmed, lower case."""
    return (email or "").strip().lower()
