"""Bilingual text catalogs: every course string exists in English and Chinese.

Catalogs are TOML files, one per page or topic, in `course/text/<lang>/`.
Tables nest, and keys are addressed with dots: `t("ch01.title", "zh")` reads
`title` from the `[ch01]` table... or from the file `ch01.toml` (the file
name is the first part of the key). Values are Markdown (LaTeX between $...$
renders in Streamlit) and may hold `{name}` fields filled by `t(..., name=)`.
"""

import functools
import tomllib
from pathlib import Path

LANGS = ("en", "zh")
LANG_NAMES = {"en": "English", "zh": "中文"}
TEXT_DIR = Path(__file__).resolve().parents[1] / "text"  # course/text/


def _flatten(table, prefix):
    """Flatten nested TOML tables into {"a.b.c": value}."""
    flat = {}
    for key, value in table.items():
        full = f"{prefix}.{key}" if prefix else key
        if isinstance(value, dict):
            flat.update(_flatten(value, full))
        else:
            flat[full] = value
    return flat


@functools.lru_cache(maxsize=None)
def catalog(lang):
    """All strings of one language as {dotted key: value}."""
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}; use one of {LANGS}")
    flat = {}
    for path in sorted((TEXT_DIR / lang).glob("*.toml")):
        try:
            with path.open("rb") as f:
                data = tomllib.load(f)
        except tomllib.TOMLDecodeError as err:
            raise ValueError(f"{path}: {err}") from err
        flat.update(_flatten(data, path.stem))
    return flat


def t(key, lang, **fields):
    """The text for `key` in `lang`, with `{fields}` filled in."""
    texts = catalog(lang)
    if key not in texts:
        raise KeyError(f"no text {key!r} in the {lang} catalog (course/text/{lang}/)")
    value = texts[key]
    return value.format(**fields) if fields else value


def t_pair(pair, lang, default):
    """The text of a stored [key, fields] pair (data from a report, e.g. a weights diff's `name`), else
    `default` when there is none or it is not such a pair."""
    if isinstance(pair, (list, tuple)) and len(pair) == 2 and isinstance(pair[0], str) \
            and isinstance(pair[1], dict) and pair[0] in catalog(lang):
        return t(pair[0], lang, **{k: v for k, v in pair[1].items() if isinstance(k, str)})
    return default


def t_count(key, lang, count, **fields):
    """t() for a sentence about `count` things: `<key>_one` when count is 1 and the catalog has it ("1 check
    passed"), else `key` ("3 checks passed"); `count` is passed on as a field."""
    one = f"{key}_one"
    return t(one if count == 1 and one in catalog(lang) else key, lang, count=count, **fields)


def lang_from_locale(locale):
    """'zh' for a Chinese browser locale (zh, zh-CN, zh_TW...), else 'en'."""
    if locale and str(locale).lower().replace("_", "-").split("-")[0] == "zh":
        return "zh"
    return "en"
