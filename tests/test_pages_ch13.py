"""Chapter 13's page in AppTest: it runs in both languages, its slider and toggle change the mask, the figures and
the <bos> table, and the figures shown are the shipped sweep's rows for the chosen window (read straight from
the JSON here)."""

import json

import pytest
from app_helpers import charts, errors_of, markdown_text, metric, open_page

from course.common import pages_index
from course.common.i18n import t
from course.translation import demos

pytestmark = pytest.mark.usefixtures("lab_home")  # progress and notes in a fresh folder per test

PAGE = pages_index.get("ch13").path
SWEEP = demos.checkpoint_dir() / "transformer.sinks.json"


@pytest.fixture(scope="module")
def rows():
    """{key: measured row} of the shipped sweep, or a skip."""
    if not SWEEP.is_file() or not demos.checkpoint_path("transformer").is_file():
        pytest.skip("the shipped Transformer or its sink sweep is not here")
    return {row["key"]: row for row in json.loads(SWEEP.read_text(encoding="utf-8"))["settings"]}


def shown(at, lang):
    """(loss, perplexity, BLEU, mean weight on <bos>) as the page's metrics show them."""
    return tuple(metric(at, t(f"ch13.try.{name}", lang)) for name in ("loss", "perplexity", "bleu", "sink"))


def expected(row):
    """The same four figures formatted from a row of the JSON."""
    return (f"{row['loss']:.3f}", f"{row['perplexity']:.2f}", f"{row['bleu']:.1f}",
            f"{sum(row['sink']) / len(row['sink']):.3f}")


def visible(at, lang, size):
    """How many cells of the drawn mask (titled for this window size) are 1."""
    spec, frames = charts(at)[t("ch13.mask.title", lang, size=size)]
    assert len(frames[0]) == 10 * 10  # ten positions: <bos> and nine characters
    return int(frames[0]["value"].sum())


def sink_table(at, lang):
    """The page's per-layer <bos> table."""
    column = t("ch13.table.col_chosen", lang)
    frames = [df.value for df in at.dataframe if column in df.value.columns]
    assert len(frames) == 1, [list(df.value.columns) for df in at.dataframe]
    return frames[0]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_slider_and_the_toggle_change_the_mask_and_the_figures(lang, rows):
    at = open_page(PAGE, lang=lang)
    assert errors_of(at) == [] and at.title[0].value == t("ch13.title", lang)
    text = markdown_text(at)
    for key in ("ch13.intro", "ch13.try.body"):
        assert t(key, lang)[:30] in text, key
    assert at.slider(key="ch13_size").value == 4 and at.toggle(key="ch13_keep_sink").value is True
    assert shown(at, lang) == expected(rows["w4_sink1"])
    first = sink_table(at, lang)
    assert first[t("ch13.table.col_chosen", lang)].tolist() == [round(x, 3) for x in rows["w4_sink1"]["sink"]]
    assert first[t("ch13.table.col_full", lang)].tolist() == [round(x, 3) for x in rows["full"]["sink"]]
    assert visible(at, lang, 4) == 1 + 2 + 3 + 4 + 6 * 5  # rows 0-9 of W = 4 with <bos>: min(t + 1, 4), +1 from 4 on

    at.slider(key="ch13_size").set_value(2).run()
    assert errors_of(at) == []
    assert shown(at, lang) == expected(rows["w2_sink1"]) != expected(rows["w4_sink1"])
    assert visible(at, lang, 2) == 1 + 2 + 8 * 3

    at.toggle(key="ch13_keep_sink").set_value(False).run()
    assert errors_of(at) == []
    assert shown(at, lang) == expected(rows["w2"]) != expected(rows["w2_sink1"])
    assert visible(at, lang, 2) == 1 + 9 * 2
    assert sink_table(at, lang)[t("ch13.table.col_chosen", lang)].tolist() == [round(x, 3) for x in rows["w2"]["sink"]]


def test_without_the_sweep_the_page_says_how_to_make_it(tmp_path, monkeypatch):
    """A checkpoint folder without transformer.sinks.json: the page explains, with the command, and draws nothing."""
    for name in ("transformer.pt", "transformer.bleu.json"):
        (tmp_path / name).symlink_to(demos.checkpoint_dir() / name)
    monkeypatch.setenv("ATTENTION_LAB_CHECKPOINTS", str(tmp_path))
    at = open_page(PAGE, lang="en")
    assert errors_of(at) == []
    assert any(t("ch13.missing", "en") == box.value for box in at.info)
    assert not at.get("slider") and "python -m course.translation.sinks" in t("ch13.missing", "en")
