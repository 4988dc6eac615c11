"""The text catalogs: both languages have the same keys, files and placeholders."""

import re

import pytest

from course.common import i18n

FIELD = re.compile(r"(?<!\{)\{([A-Za-z_]\w*)\}(?!\})")


def missing_keys(catalogs):
    """Keys present in one language but not another: {lang: sorted keys it lacks}."""
    all_keys = set().union(*(texts.keys() for texts in catalogs.values()))
    return {lang: sorted(all_keys - texts.keys()) for lang, texts in catalogs.items()}


def test_no_key_exists_in_one_language_only():
    missing = missing_keys({lang: i18n.catalog(lang) for lang in i18n.LANGS})
    assert missing == {lang: [] for lang in i18n.LANGS}, f"keys missing per language: {missing}"


def test_missing_keys_detects_a_key_in_one_language():
    assert missing_keys({"en": {"a.x": "1", "a.y": "2"}, "zh": {"a.x": "一"}}) == {"en": [], "zh": ["a.y"]}


def test_every_catalog_file_exists_in_both_languages():
    names = {lang: sorted(p.name for p in (i18n.TEXT_DIR / lang).glob("*.toml")) for lang in i18n.LANGS}
    assert names["en"] == names["zh"]


def placeholder_mismatches(en, zh):
    """[(key, en fields, zh fields)] of the texts whose {fields} differ between the two catalogs."""
    found = []
    for key, text in sorted(en.items()):
        other = zh.get(key)
        if isinstance(text, str) and isinstance(other, str):  # a missing key: the missing-keys test's
            fields = set(FIELD.findall(text)), set(FIELD.findall(other))
            if fields[0] != fields[1]:
                found.append((key, sorted(fields[0]), sorted(fields[1])))
    return found


def test_placeholder_check_can_fail():
    en = {"a.x": "{n} of {total}", "a.y": "{{literal}} {n}", "a.z": "same {n}", "a.only": "{n}"}
    zh = {"a.x": "{n} 共 {totl}", "a.y": "{n}", "a.z": "同 {n}"}
    assert placeholder_mismatches(en, zh) == [("a.x", ["n", "total"], ["n", "totl"])]


def test_placeholders_match_between_languages():
    mismatches = placeholder_mismatches(i18n.catalog("en"), i18n.catalog("zh"))
    assert mismatches == [], "keys whose {fields} differ (key, en, zh): " + "; ".join(map(str, mismatches))


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
