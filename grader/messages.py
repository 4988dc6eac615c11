"""Learner-facing sentences for what went wrong: exceptions, imports, crashes, time-outs.

The sandbox reports facts (an exception's type and place, a signal, a time-out);
these functions turn them into one sentence each, in the learner's language
(grader/text.py). Pure functions of plain data. `clean_text` strips control
characters from anything the learner's code produced before it is shown.
"""

import re
from pathlib import PurePosixPath

from .sandbox import SandboxLimits
from .text import render, tr

# Terminal escape sequences (CSI, OSC, other ESC x), then single control characters other than
# newline and tab, and the bidirectional overrides that can reorder what a reader sees.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?|\x9b[0-?]*[ -/]*[@-~]")
# Also the invisible ones: zero-width characters, the byte-order mark, word joiners and tag characters.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2069"
                       "\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]")
_SEPARATORS = re.compile("[\u2028\u2029\x85]")  # line/paragraph separators: a space, never a new line
# A frame of a traceback as traceback.format_list writes it: '  File "<path>", line <n>, in <name>'.
_FRAME = re.compile(r'^  File "([^"\n]{1,500})", line (\d{1,7}), in ', re.M)
TRACEBACK_CHARS = 4000  # of a sandbox's traceback text read (untrusted_records caps it there too)
MAX_FRAMES = 200  # frames of one traceback looked at
CODE_CHARS = 120  # characters of a learner's line quoted
PACKAGE = "learner"  # the staged package the learner's file is in (harness/child.py LEARNER_PACKAGE)


def clean_text(text):
    """Text with escape sequences and control characters removed (a carriage return ends a line)."""
    if not text:
        return text
    text = _ESCAPES.sub("", text).replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROLS.sub("", _SEPARATORS.sub(" ", text))


def bounded(text, limit=2000, lang="en"):
    """Cleaned text of at most `limit` characters, saying how many more there were."""
    text = clean_text(text or "")
    if len(text) <= limit:
        return text
    return text[:limit] + tr("more_characters", lang, count=len(text) - limit)


def summary_line(status, results, failing, lang="en"):
    """One line for the table: how many passed, and the first problem."""
    passed = len(results) - len(failing)
    if status == "passed":
        return tr(_one("summary.passed", len(results)), lang, passed=passed, total=len(results))
    if status == "not_written":
        return failing[0].message
    return tr(_one("summary.failed", len(results)), lang, passed=passed, total=len(results),
              problem=failing[0].message)


def _one(key, count):
    """The key's singular form ("1 check passed") when the count is 1."""
    return f"{key}_one" if count == 1 else key


def error_kind(error):
    """"not_implemented" for a stub still raising NotImplementedError, else "error"."""
    return "not_implemented" if error["kind"] == "not_implemented" else "error"


def own_line(error, source, filename):
    """(line number, its code or '') of the last traceback frame in the learner's own file, or None.

    The traceback comes from the learner's process, so it is read as hostile text: only its last
    TRACEBACK_CHARS characters and MAX_FRAMES frames; a frame counts only when its path ends in
    `learner/<filename>` (the staged file graded) and its line exists in `source`; the code quoted is that
    line of `source`, the learner's own text (cleaned, at most CODE_CHARS), never the sandbox's. A forged
    traceback can so only point at a line of the learner's own file."""
    text = error.get("traceback") if isinstance(error, dict) else None
    if not isinstance(text, str) or not isinstance(source, str) or not filename:
        return None
    lines = source.splitlines()
    found = None
    for count, match in enumerate(_FRAME.finditer(text[-TRACEBACK_CHARS:])):
        if count >= MAX_FRAMES:
            break
        path, line = PurePosixPath(match.group(1)), int(match.group(2))
        if path.name == filename and path.parent.name == PACKAGE and 1 <= line <= len(lines):
            found = line
    if found is None:
        return None
    code = clean_text(lines[found - 1]).strip()
    return found, code if len(code) <= CODE_CHARS else code[:CODE_CHARS] + "..."


def _own_place(own, lang):
    """'your line 42', or 'your line 42 of ex04_bahdanau.ipynb, cell 5' when own names where the file came from."""
    place = own[2] if len(own) > 2 else ""
    if place:
        return tr("where.own_in", lang, line=own[0], file=clean_text(place))
    return tr("where.own", lang, line=own[0])


def _where(error, lang, own=None):
    """' (ex03_scoring.py, line 42, in forward: `code`)', ' (your line 42: `code`)' for the learner's own line
    (own_line), or ''."""
    if own is not None:
        text = _own_place(own, lang) + (tr("where.code", lang, code=own[1]) if own[1] else "")
        return tr("where.wrapped", lang, text=text)
    where = error.get("where")
    if not where:
        return ""
    text = tr("where.line", lang, file=where["file"], line=where["line"])
    if where.get("function"):
        text += tr("where.function", lang, function=where["function"])
    if where.get("code"):
        text += tr("where.code", lang, code=clean_text(where["code"]))
    return tr("where.wrapped", lang, text=text)


def error_message(error, memory_mb=SandboxLimits.memory_mb, lang="en", own=None):
    """A learner-facing sentence for an exception raised by their code; own: (line, code) of the learner's own
    line that raised (own_line), named instead of the sandbox's place, and optionally the name their file goes
    by (a notebook's cell) third."""
    kind = error["kind"]
    if kind == "rejected":  # the result itself was unsafe or malformed (grader/untrusted_records.py)
        return tr("error.rejected", lang, reason=render(error["reason"], lang))
    message = clean_text(error.get("message") or "")
    if kind == "not_implemented":
        what = message or (error.get("where") or {}).get("function") or "?"
        return tr("error.not_implemented", lang, what=what)
    if kind == "exit":
        return tr("error.exit", lang, code=message, where=_where(error, lang, own))
    if kind == "memory":
        return tr("error.memory", lang, where=_where(error, lang, own), memory_mb=memory_mb)
    if "leaf Variable" in message and "in-place" in message:
        return tr("error.in_place", lang, where=_where(error, lang, own))
    if own is not None and own[1]:
        return tr("error.raised_own", lang, place=_own_place(own, lang), code=own[1], type=error["type"],
                  message=message)
    if own is not None:
        return tr("error.raised_own_line", lang, place=_own_place(own, lang), type=error["type"], message=message)
    return tr("error.raised", lang, type=error["type"], message=message, where=_where(error, lang))


def import_message(error, learner_name, lang="en", own=None):
    """Why the learner's module could not be imported: one file-level sentence (own: as error_message)."""
    if error["type"] in ("SyntaxError", "IndentationError", "TabError"):
        return tr("import.syntax", lang, name=learner_name, message=clean_text(error["message"]),
                  where=_where(error, lang))
    return tr("import.failed", lang, name=learner_name, error=error_message(error, lang=lang, own=own))


def missing_message(job, limits, lang="en"):
    """Why no result came back for a check."""
    status = job.status
    if status.get("timed_out"):
        return tr("missing.timeout", lang, seconds=f"{limits.timeout_s:g}")
    signal_name = status.get("signal")
    if signal_name == "SIGXFSZ":
        return tr("missing.output", lang, kb=limits.output_kb)
    if signal_name == "SIGXCPU":
        return tr("missing.cpu", lang, seconds=f"{limits.timeout_s:g}")
    if signal_name == "SIGSEGV":
        return tr("missing.segfault", lang)
    if signal_name == "SIGKILL":
        return tr("missing.killed", lang)
    if signal_name:
        return tr("missing.signal", lang, signal=signal_name)
    if "exit_code" in status:
        return tr("missing.exited", lang, code=status["exit_code"])
    return tr("missing.none", lang)
