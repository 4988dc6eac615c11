"""Chapter 12's page in AppTest: it runs in both languages, its select-slider of key/value heads changes the
cache and BLEU it shows (to the shipped figures), the timing button shows a chart and states only what it
measured, and chapter 11's footer leads to it."""

import json
import re

import pytest
from app_helpers import charts, errors_of, markdown_text, metric, open_page

from course.common import pages_index
from course.common.i18n import t
from course.lessons import ch12
from course.translation import kv_study

pytestmark = pytest.mark.usefixtures("lab_home")  # progress and notes in a fresh folder per test

PAGE = pages_index.get("ch12").path
SHIPPED = kv_study.read_results()


def fixed_piece(key, lang):
    """The longest stretch of a text template without a {field}: it shows exactly when the text is shown."""
    return max(re.split(r"\{[^}]*\}", t(key, lang)), key=len)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_key_value_heads_slider_changes_the_cache_and_the_bleu_shown(lang):
    at = open_page(PAGE, lang=lang)
    assert errors_of(at) == [] and at.title[0].value == t("ch12.title", lang)
    text = markdown_text(at)
    for key in ("ch12.intro", "ch12.memory.sizes", "ch12.gqa.body", "ch12.memory.after"):
        assert t(key, lang)[:30] in text, key
    assert "6 KiB" in text and "4.5 MiB" in text  # the shipped model's and GPT-3's cache per position
    assert t("ch12.memory.title", lang) in charts(at)
    assert any(t("ch12.decode.not_yet", lang) in c.value for c in at.caption)

    cache, bleu_self, bleu_both = (t(f"ch12.gqa.{k}", lang) for k in ("cache", "bleu_self", "bleu_both"))
    heads = SHIPPED["num_heads"]
    assert at.select_slider(key="ch12_kv_heads").value == heads
    assert metric(at, cache) == "6 KiB" and metric(at, bleu_self) == f"{SHIPPED['bleu']['self'][str(heads)]:.1f}"
    for kv_heads, expected_cache in ((2, "3 KiB"), (1, "1.5 KiB")):  # 2 x 3 layers x kv_heads x 64 x 4 bytes
        at.select_slider(key="ch12_kv_heads").set_value(kv_heads).run()
        assert errors_of(at) == []
        assert metric(at, cache) == expected_cache
        assert metric(at, bleu_self) == f"{SHIPPED['bleu']['self'][str(kv_heads)]:.1f}"
        assert metric(at, bleu_both) == f"{SHIPPED['bleu']['both'][str(kv_heads)]:.1f}"
        assert f"**{SHIPPED['bleu']['both'][str(kv_heads)]:.1f}**" in markdown_text(at)
    assert metric(at, bleu_both) != f"{SHIPPED['bleu']['both'][str(heads)]:.1f}"  # the figures did change


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_timing_button_draws_the_three_and_states_only_what_it_measured(lang, monkeypatch):
    monkeypatch.setattr(ch12, "TIME_STEPS", 24)  # a quick measurement for the test
    monkeypatch.setattr(ch12, "TIME_REPEATS", 1)
    at = open_page(PAGE, lang=lang)
    assert t("ch12.decode.chart.title", lang) not in charts(at)
    at.button(key="ch12_measure").click().run()
    assert errors_of(at) == []
    spec, frames = charts(at)[t("ch12.decode.chart.title", lang)]
    rows = [frame for frame in frames if len(frame) == 3 * 24]
    assert rows, [len(frame) for frame in frames]
    assert set(rows[0]["strategy"]) == {t(f"ch12.decode.{s}", lang) for s in ch12.STRATEGIES}
    assert any(t("ch12.decode.measured", lang, threads=1, cores="", machine="")[:12] in c.value for c in at.caption)
    text = markdown_text(at)
    verdicts = [v for v in ("ordered", "mixed") if fixed_piece(f"ch12.decode.{v}", lang) in text]
    assert len(verdicts) == 1 and "T = 24" in text
    assert fixed_piece("ch12.decode.same", lang) in text and fixed_piece("ch12.decode.different", lang) not in text
    at.select_slider(key="ch12_kv_heads").set_value(1).run()  # another rerun keeps the learner's measurement
    assert t("ch12.decode.chart.title", lang) in charts(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("this, following", [("ch11", "ch12"), ("ch12", "ch13"), ("ch13", "ch14"), ("ch14", "ch15")])
def test_each_chapter_after_the_transformer_ends_with_a_link_to_the_next(lang, this, following):
    at = open_page(pages_index.get(this).path, lang=lang)
    links = {link.proto.label: link.proto.page for link in at.get("page_link")}
    assert links.get(t(f"{this}.next", lang)) == pages_index.get(following).url_path


def test_a_damaged_or_stale_results_file_gets_a_warning_not_a_crash(tmp_path, monkeypatch):
    bad = tmp_path / "transformer.gqa.json"
    bad.write_text("{not json", encoding="utf-8")
    monkeypatch.setattr(kv_study, "shipped_path", lambda name="transformer": bad)
    at = open_page(PAGE, lang="en")
    assert not at.exception and any("cannot be read" in w.value for w in at.warning)
    stale = {**SHIPPED, "num_heads": 2, "bleu": {s: {"1": 1.0, "2": 2.0} for s in kv_study.SCOPES}}
    bad.write_text(json.dumps(stale), encoding="utf-8")
    at = open_page(PAGE, lang="en")
    assert not at.exception
    assert any(t("ch12.gqa.stale", "en", heads=2, checkpoint=SHIPPED["num_heads"]) == w.value for w in at.warning)
