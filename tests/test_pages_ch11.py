"""Chapter 11's page in AppTest: it runs in both languages, its sliders change the trace and the difference
table (n not a multiple of the block included), the timing button states what it measured, and chapter 10's
footer leads to it."""

import math

import pytest
from app_helpers import errors_of, markdown_text, metric, open_page

from course.common import pages_index
from course.common.i18n import t
from course.lessons import ch11

pytestmark = pytest.mark.usefixtures("lab_home")  # progress and notes in a fresh folder per test

PAGE = pages_index.get("ch11").path


def table_with(at, column):
    """The page's dataframe that has this column."""
    frames = [df.value for df in at.dataframe if column in df.value.columns]
    assert frames, f"no table with {column!r}: {[list(df.value.columns) for df in at.dataframe]}"
    return frames[0]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_sliders_change_the_trace_and_the_difference_table(lang):
    at = open_page(PAGE, lang=lang)
    assert errors_of(at) == [] and at.title[0].value == t("ch11.title", lang)
    text = markdown_text(at)
    for key in ("ch11.intro", "ch11.online.body", "ch11.tiled.body", "ch11.speed.body"):
        assert t(key, lang)[:30] in text, key
    diff_column, blocks_column = t("ch11.tiled.col_diff", lang), t("ch11.tiled.col_blocks", lang)
    before = table_with(at, diff_column)
    assert before[blocks_column].tolist() == [math.ceil(100 / 16)] * 3  # the defaults: n = 100, blocks of 16

    at.slider(key="ch11_n").set_value(37).run()
    at.slider(key="ch11_block").set_value(5).run()  # 37 = 7 x 5 + 2: the last block is shorter
    assert errors_of(at) == []
    after = table_with(at, diff_column)
    assert not after.equals(before)
    assert after[blocks_column].tolist() == [8] * 3 and after[t("ch11.tiled.col_last", lang)].tolist() == [2] * 3
    assert after[t("ch11.tiled.col_case", lang)].tolist() == [t(f"ch11.tiled.case_{c}", lang) for c in ch11.CASES]
    diffs = [float(x) for x in after[diff_column]]
    assert all(0 <= d <= ch11.TOLERANCE for d in diffs)
    assert float(metric(at, t("ch11.tiled.largest", lang))) == max(diffs)

    trace = table_with(at, t("ch11.trace.col_m", lang))
    assert len(trace) == 8 and trace[t("ch11.trace.col_keys", lang)].tolist()[-1] == "35–36"
    running_max = [float(x) for x in trace[t("ch11.trace.col_m", lang)]]
    assert running_max == sorted(running_max)  # the running max never falls
    factors = trace[t("ch11.trace.col_rescale", lang)].tolist()
    grown = sum(1 for x in factors[1:] if float(x) < 1)
    assert grown == sum(1 for a, b in zip(running_max, running_max[1:]) if b > a) and grown > 0
    query, _ = ch11.trace_scores(37, 5)
    assert any(t("ch11.trace.query", lang, query=query, grown=grown) == c.value for c in at.caption)
    assert metric(at, t("ch11.trace.m_final", lang)) == metric(at, t("ch11.trace.max_row", lang))
    assert metric(at, t("ch11.trace.l_final", lang)) == metric(at, t("ch11.trace.sum_row", lang))
    assert t("ch11.memory.after", lang, **ch11.memory_claims())[:60] in markdown_text(at)


def test_the_timing_button_states_only_what_it_measured(monkeypatch):
    monkeypatch.setattr(ch11, "TIME_N", 96)  # a quick measurement for the test
    monkeypatch.setattr(ch11, "TIME_BLOCKS", (2, 96))
    at = open_page(PAGE, lang="en")
    assert any(t("ch11.speed.not_yet", "en") in c.value for c in at.caption)
    assert t("ch11.speed.all_slower", "en")[:40] not in markdown_text(at)
    at.button(key="ch11_measure").click().run()
    assert errors_of(at) == []
    table = table_with(at, t("ch11.speed.col_ms", "en"))
    assert table[t("ch11.speed.col_version", "en")].tolist() == [
        t("ch11.speed.reference", "en"), t("ch11.speed.tiled_block", "en", block=2),
        t("ch11.speed.tiled_block", "en", block=96)]
    ms = table[t("ch11.speed.col_ms", "en")].tolist()
    assert all(value >= 0 for value in ms)
    assert any(t("ch11.speed.measured", "en", n=96) in c.value for c in at.caption)
    verdicts = [v for v in ("all_slower", "all_faster", "mixed") if t(f"ch11.speed.{v}", "en")[:12] in markdown_text(at)]
    assert len(verdicts) == 1
    if ms[1] > ms[0] and ms[2] > ms[0]:  # the figures shown (rounded to 0.1 ms) decide where they differ
        assert verdicts == ["all_slower"]
    elif ms[1] < ms[0] and ms[2] < ms[0]:
        assert verdicts == ["all_faster"]
    elif ms[1] != ms[0] and ms[2] != ms[0]:
        assert verdicts == ["mixed"]
    at.slider(key="ch11_n").set_value(12).run()  # another rerun keeps the learner's measurement
    assert table_with(at, t("ch11.speed.col_ms", "en"))[t("ch11.speed.col_ms", "en")].tolist() == ms


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_chapter_10_ends_with_a_link_to_chapter_11(lang):
    at = open_page(pages_index.get("ch10").path, lang=lang)
    links = {link.proto.label: link.proto.page for link in at.get("page_link")}
    assert links.get(t("ch10.next", lang)) == pages_index.get("ch11").url_path


def test_the_footer_leads_to_exercise_10_first_then_1_and_3():
    at = open_page(PAGE, lang="en")
    footers = [m.value for m in at.markdown if "exercises/ex" in m.value]
    assert [next(e for e in ("ex10", "ex01", "ex03") if e in f) for f in footers] == ["ex10", "ex01", "ex03"]
    labels = [link.proto.label for link in at.get("page_link")]
    assert t("app.footer_link", "en", ex_id="ex10") in labels
