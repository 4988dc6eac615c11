"""Learner-facing sentences for what went wrong: exceptions, imports, crashes, time-outs.

The sandbox reports facts (an exception's type and place, a signal, a time-out);
these functions turn them into one sentence each, in the learner's language
(grader/text.py). Pure functions of plain data. `clean_text` strips control
characters from anything the learner's code produced before it is shown.
"""

import re

from .sandbox import SandboxLimits
from .text import render, tr

# Terminal escape sequences (CSI, OSC, other ESC x), then single control characters other than
# newline and tab, and the bidirectional overrides that can reorder what a reader sees.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?|\x9b[0-?]*[ -/]*[@-~]")
# Also the invisible ones: zero-width characters, the byte-order mark, word joiners and tag characters.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2069"
                       "\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]")
_SEPARATORS = re.compile("[\u2028\u2029\x85]")  # line/paragraph separators: a space, never a new line


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


def _where(error, lang):
    """' (ex03_scoring.py, line 42, in forward: `code`)' or ''."""
    where = error.get("where")
    if not where:
        return ""
    text = tr("where.line", lang, file=where["file"], line=where["line"])
    if where.get("function"):
        text += tr("where.function", lang, function=where["function"])
    if where.get("code"):
        text += tr("where.code", lang, code=clean_text(where["code"]))
    return tr("where.wrapped", lang, text=text)


def error_message(error, memory_mb=SandboxLimits.memory_mb, lang="en"):
    """A learner-facing sentence for an exception raised by their code."""
    kind = error["kind"]
    if kind == "rejected":  # the result itself was unsafe or malformed (grader/untrusted_records.py)
        return tr("error.rejected", lang, reason=render(error["reason"], lang))
    message = clean_text(error.get("message") or "")
    if kind == "not_implemented":
        what = message or (error.get("where") or {}).get("function") or "?"
        return tr("error.not_implemented", lang, what=what)
    if kind == "exit":
        return tr("error.exit", lang, code=message, where=_where(error, lang))
    if kind == "memory":
        return tr("error.memory", lang, where=_where(error, lang), memory_mb=memory_mb)
    if "leaf Variable" in message and "in-place" in message:
        return tr("error.in_place", lang, where=_where(error, lang))
    return tr("error.raised", lang, type=error["type"], message=message, where=_where(error, lang))


def import_message(error, learner_name, lang="en"):
    """Why the learner's module could not be imported: one file-level sentence."""
    if error["type"] in ("SyntaxError", "IndentationError", "TabError"):
        return tr("import.syntax", lang, name=learner_name, message=clean_text(error["message"]),
                  where=_where(error, lang))
    return tr("import.failed", lang, name=learner_name, error=error_message(error, lang=lang))


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
