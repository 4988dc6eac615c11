"""Translate: Chinese or emoji typed into the English box get an "English only" notice; live runs say their time."""

import pytest
from app_helpers import errors_of, open_page

from course.common import pages_index
from course.app.experiment_ui import progress_text
from course.common import i18n
from course.translation import demos

TRANSLATE = pages_index.get("demo_translate").path


def test_non_english_characters_are_other_scripts_and_symbols():
    assert demos.non_english_characters("tom is a teacher.") == []
    assert demos.non_english_characters("the café is naïve, isn't it? 3 + 4 = 7") == []  # accents are Latin
    assert demos.non_english_characters("我爱你 I love you 😀 😀") == ["我", "爱", "你", "😀"]
    assert demos.non_english_characters("привет ★") == ["п", "р", "и", "в", "е", "т", "★"]
    assert demos.has_english_word("I 爱 you") and not demos.has_english_word("我爱你 😀 123")


def test_live_run_progress_says_the_time_so_far_and_an_estimate():
    assert progress_text("Training…", 0.0, 0.4, "en") == "Training… 0 s so far"
    assert progress_text("Training…", 0.25, 10.0, "en") == "Training… 10 s so far, about 30 s left"
    assert progress_text("训练中……", 0.5, 20.0, "zh") == "训练中……已用 20 秒，预计还需约 20 秒"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_buttons_say_what_was_measured(lang):
    for key in ("ch03.learn.run_button", "demos.bottleneck.synthetic.run_button"):
        text = i18n.t(key, lang)
        assert ("measured on 2 CPU cores" if lang == "en" else "在 2 个 CPU 核上实测") in text
        assert "about" not in text and "约" not in text


@pytest.mark.usefixtures("tiny_env")
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.slow
def test_a_chinese_sentence_gets_the_english_only_notice_and_no_translation(lang):
    at = open_page(TRANSLATE, lang=lang)
    at.text_input(key="demo_translate_sentence").set_value("我爱你 😀").run()
    assert errors_of(at) == []
    assert [w.value for w in at.warning] == [i18n.t("demos.common.english_only", lang, chars="我 爱 你 😀")]
    assert at.dataframe == [] or "demo_translate_results" not in [d.key for d in at.dataframe]


@pytest.mark.usefixtures("tiny_env")
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.slow
def test_a_mixed_sentence_is_translated_with_the_notice(lang):
    at = open_page(TRANSLATE, lang=lang)
    at.text_input(key="demo_translate_sentence").set_value("tom is a 老师.").run()
    assert errors_of(at) == []
    notice = i18n.t("demos.common.english_only_mixed", lang, chars="老 师")
    assert notice in [w.value for w in at.warning]
    assert len(at.dataframe) >= 1  # the translations are still shown
