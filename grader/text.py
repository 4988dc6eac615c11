"""The grader's words in the learner's language: keys under `grader.` in course/text/<lang>/grader.toml.

`tr(key, lang, **fields)` looks a message up; `render(value, lang)` turns what a
check or property carries (plain text, or a `(key, fields)` pair) into text;
`hint_text` is a known mistake's hint (`grader.hints.<exNN>.<mistake id>`).
"""

import os

from course.common.i18n import LANGS, catalog, lang_from_locale, t
from course.common.result_names import result_name


def tr(key, lang="en", **fields):
    """The grader's message `key` in `lang`."""
    return t(f"grader.{key}", lang, **fields)


def warm_catalog(lang="en"):
    """Parse the catalogs a report in `lang` reads (its own and English) in this process, so that the forks
    it judges in inherit them (each fork parsing them again costs ~0.05 s)."""
    for code in {lang, "en"}:
        if code in LANGS:
            catalog(code)


def msg(key, **fields):
    """A message to render later, in whatever language the report is written in."""
    return (key, fields)


def render(value, lang="en"):
    """Text from plain text or a (key, fields) pair; fields are rendered too (a `result` field names a result)."""
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], dict):
        key, fields = value
        return tr(key, lang, **{k: describe_name(v, lang) if k == "result" and isinstance(v, str) else render(v, lang)
                                for k, v in fields.items()})
    return value


def describe_name(name, lang="en"):
    """A readable name for a result key: 'grad.queries' -> 'the gradient w.r.t. queries' (result_names)."""
    return result_name(name, lang)


def hint_text(ex_id, mistake, lang="en"):
    """A known mistake's hint."""
    return tr(f"hints.{ex_id}.{mistake.id}", lang)


def default_lang(environ=None):
    """The language from the locale variables (LC_ALL, LC_MESSAGES, LANG): 'zh' or 'en'."""
    environ = os.environ if environ is None else environ
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        if environ.get(name):
            return lang_from_locale(environ[name].split(".")[0])
    return "en"


assert "en" in LANGS and "zh" in LANGS
