"""The text catalogs: both languages have the same keys, files and placeholders."""

import re

import pytest

from course.common import i18n

FIELD = re.compile(r"(?<!\{)\{([A-Za-z_]\w*)\}(?!\})")


def test_no_key_exists_in_one_language_only():
    missing = i18n.missing_keys()
    assert missing == {lang: [] for lang in i18n.LANGS}, f"keys missing per language: {missing}"


def test_missing_keys_detects_a_key_in_one_language(monkeypatch):
    fake = {"en": {"a.x": "1", "a.y": "2"}, "zh": {"a.x": "一"}}
    monkeypatch.setattr(i18n, "catalog", lambda lang: fake[lang])
    assert i18n.missing_keys() == {"en": [], "zh": ["a.y"]}


def test_every_catalog_file_exists_in_both_languages():
    names = {lang: sorted(p.name for p in (i18n.TEXT_DIR / lang).glob("*.toml")) for lang in i18n.LANGS}
    assert names["en"] == names["zh"]


@pytest.mark.parametrize("key", sorted(i18n.catalog("en")))
def test_placeholders_match_between_languages(key):
    en, zh = i18n.catalog("en")[key], i18n.catalog("zh").get(key)
    if not isinstance(en, str) or not isinstance(zh, str):
        pytest.skip("not a string (or missing: reported by the missing-keys test)")
    assert set(FIELD.findall(en)) == set(FIELD.findall(zh)), f"{key}: the {{fields}} differ"


def test_t_fills_fields_and_reports_unknown_keys():
    assert "3 / 8" in i18n.t("app.progress", "en", passed=3, total=8)
    assert "3 / 8" in i18n.t("app.progress", "zh", passed=3, total=8)
    with pytest.raises(KeyError, match="no text"):
        i18n.t("app.no_such_key", "en")
    with pytest.raises(ValueError, match="unknown language"):
        i18n.catalog("fr")


@pytest.mark.parametrize(
    ("locale", "lang"),
    [("zh-CN", "zh"), ("zh_TW", "zh"), ("ZH", "zh"), ("en-US", "en"), ("de-DE", "en"), (None, "en"), ("", "en")],
)
def test_lang_from_locale(locale, lang):
    assert i18n.lang_from_locale(locale) == lang


def test_chinese_catalog_is_really_chinese():
    """A guard against copying the English text into the zh files."""
    zh, en = i18n.catalog("zh"), i18n.catalog("en")
    for key in ("ch01.intro", "ch01.bottleneck.body", "practice.intro", "notes.intro", "nav.section_course"):
        assert zh[key] != en[key]
        assert re.search(r"[\u4e00-\u9fff]", zh[key]), key
