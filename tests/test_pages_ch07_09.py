"""AppTest of chapters 7-9 through app.py: both languages render, every control changes the shown numbers.

Expected numbers are computed here independently (layer-shape formulas, numpy normalisations,
explicit mask loops), then compared with what the page shows.
"""

import re

import numpy as np
import pytest
import torch
from app_helpers import errors_of, markdown_text, metric, open_page, page_tables
from streamlit import dataframe_util

from course.app import progress
from course.common import exercise_index, i18n
from course.common.paths import PROJECT_ROOT

pytestmark = pytest.mark.usefixtures("lab_home")  # progress and notes in a fresh folder per test

CH07, CH08, CH09 = "app_pages/ch07_transformer.py", "app_pages/ch08_history.py", "app_pages/ch09_review.py"


def opened(page, lang="en"):
    """The page opened through app.py, with no exception or error box."""
    at = open_page(page, lang)
    assert errors_of(at) == []
    return at


def frame_with(at, column):
    """The first shown dataframe with this column."""
    for df in at.dataframe:
        if column in df.value.columns:
            return df.value
    raise AssertionError(f"no dataframe with {column!r}")


def chart_values(at, index, shape):
    """The 'value' column of the index-th Vega-Lite chart, reshaped."""
    proto = at.get("vega_lite_chart")[index].proto
    data = dataframe_util.convert_arrow_bytes_to_pandas_df(proto.datasets[0].data.data)
    return data["value"].to_numpy().reshape(shape)


def progress_texts(at):
    return [p.proto.text for p in at.get("progress")]


def count(value):
    return int(value.replace(",", ""))


def ffn(d, f):
    return 2 * d * f + f + d


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(("page", "number"), [(CH07, "7"), (CH08, "8"), (CH09, "9")])
def test_pages_render_in_both_languages(page, number, lang):
    at = opened(page, lang)
    assert at.title[0].value.startswith(f"{number} · ")
    shown = i18n.t("trained.heads.output", lang, text="|").split("|")[0]  # the trained model's Chinese output line
    text = "\n".join(m.value for m in at.markdown if not m.value.startswith(shown))
    han = bool(re.search(r"[\u4e00-\u9fff]", at.title[0].value + text))
    assert han == (lang == "zh")


def test_ch07_architecture_counts_follow_the_sliders():
    at = opened(CH07)
    figure = at.get("graphviz_chart")[0].proto.spec
    d, f = 512, 2048
    assert count(metric(at, "parameters of one encoder block")) == 4 * d * d + ffn(d, f) + 4 * d
    assert count(metric(at, "parameters of one decoder block")) == 8 * d * d + ffn(d, f) + 6 * d
    at.slider(key="ch07_layers").set_value(2).run()
    at.select_slider(key="ch07_d").set_value(64).run()
    at.select_slider(key="ch07_ffn").set_value(256).run()
    at.select_slider(key="ch07_heads").set_value(2).run()
    d, f = 64, 256
    enc, dec = 4 * d * d + ffn(d, f) + 4 * d, 8 * d * d + ffn(d, f) + 6 * d
    assert count(metric(at, "of which one FFN")) == ffn(d, f)
    assert count(metric(at, "both stacks, N = 2 (without embeddings and output layer)")) == 2 * (enc + dec)
    # the figure names N and stays as it was (no new layout in the browser); the counts take N's value
    assert at.get("graphviz_chart")[0].proto.spec == figure and "(N blocks)" in figure
    assert float(metric(at, "largest |FFN(X)[:, t] − FFN(X[:, t])| (all positions at once vs one at a time)")) < 1e-6


def test_ch07_layer_norm_and_batch_norm_tables():
    at = opened(CH07)
    at.slider(key="ch07_batch").set_value(5).run()
    at.slider(key="ch07_scale").set_value(20.0).run()
    X = torch.randn(5, 4, generator=torch.Generator().manual_seed(0)).numpy().astype(np.float64)
    X[:, -1] *= 20.0
    shown = [df.value for df in at.dataframe if "σ (row)" in df.value.columns]
    assert len(shown) == 3
    layer = (X - X.mean(1, keepdims=True)) / np.sqrt(X.var(1, keepdims=True) + 1e-5)
    batch = (X - X.mean(0, keepdims=True)) / np.sqrt(X.var(0, keepdims=True) + 1e-5)
    for table, expected in zip(shown, (X, layer, batch)):
        np.testing.assert_allclose(table.iloc[:5, :4].to_numpy(dtype=float), expected, atol=1.5e-3)
    assert np.allclose(shown[1]["σ (row)"].iloc[:5].astype(float), 1.0, atol=1e-3)
    assert np.allclose(shown[2].loc["σ (column)"].iloc[:4].astype(float), 1.0, atol=1e-3)
    assert metric(at, "LayerNorm: change of x0's output when the other examples are redrawn") == "0"
    assert float(metric(at, "BatchNorm: change of x0's output when the other examples are redrawn")) > 0.01

    at.slider(key="ch07_batch").set_value(1).run()
    assert not at.exception and "Expected more than 1 value" in at.warning[0].value
    assert metric(at, "BatchNorm: change of x0's output when the other examples are redrawn") == "—"


def test_ch07_tables_speak_chinese_and_leave_margin_corners_blank():
    at = opened(CH07, "zh")
    at.slider(key="ch07_batch").set_value(3).run()
    shown = [df for df in at.dataframe if i18n.t("ui.margins.row_std", "zh") in df.value.columns]
    assert len(shown) == 3 and "σ（行）" in shown[0].value.columns and "μ（列）" in shown[0].value.index
    for table in shown:  # the corner cells (row statistics of column statistics) are shown empty, not "None"
        cells = table.value
        assert (cells.iloc[-2:, -2:] == "").all().all() and (cells.iloc[:-2, :] != "").all().all()
        assert re.fullmatch(r"-?\d+\.\d{3}", cells.iloc[0, 0]) and "None" not in cells.to_numpy()
    kv = frame_with(at, "缓存的位置数")
    assert not {"input", "cache"} & set(kv.columns) and "输入形状" in kv.columns


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ch07_mask_heatmaps_follow_the_length_sliders(lang):
    at = opened(CH07, lang)
    at.slider(key="ch07_src_len").set_value(7).run()
    at.slider(key="ch07_src_valid").set_value(3).run()
    at.slider(key="ch07_tgt_len").set_value(4).run()
    padding = [[1 / 3 if j < 3 else 0.0 for j in range(7)]]
    causal = [[1 / (i + 1) if j <= i else 0.0 for j in range(4)] for i in range(4)]
    np.testing.assert_allclose(chart_values(at, 0, (7, 7)), np.array(padding * 7), atol=1e-6)
    np.testing.assert_allclose(chart_values(at, 1, (4, 4)), np.array(causal), atol=1e-6)
    np.testing.assert_allclose(chart_values(at, 2, (4, 7)), np.array(padding * 4), atol=1e-6)
    at.slider(key="ch07_src_len").set_value(2).run()  # fewer positions than the valid length: clamped
    assert not at.exception
    np.testing.assert_allclose(chart_values(at, 0, (2, 2)), np.full((2, 2), 0.5), atol=1e-6)


def test_ch07_incremental_decoding_and_pitfall_checklist():
    at = opened(CH07)
    at.slider(key="ch07_steps").set_value(4).run()
    at.number_input(key="ch07_seed").set_value(5).run()
    cache = i18n.t("ui.decode.cache", "en")
    table = frame_with(at, cache)
    assert table[cache].tolist() == [1, 2, 3, 4] and table["t"].tolist() == [0, 1, 2, 3]
    assert float(metric(at, "largest difference, parallel vs step by step")) < 1e-5
    at.checkbox(key="ch07_pitfall_add_pe").check().run()
    at.checkbox(key="ch07_pitfall_valid_lens").check().run()
    assert "checked 2 of 4" in progress_texts(at)
    at.switch_page(CH08).run()
    at.switch_page(CH07).run()
    assert at.checkbox(key="ch07_pitfall_valid_lens").value and at.slider(key="ch07_steps").value == 4
    assert "Exercise ex07" in markdown_text(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ch08_tables_links_and_reading_checklist(lang):
    at = opened(CH08, lang)
    at.slider(key="ch08_d").set_value(10).run()
    at.slider(key="ch08_h").set_value(7).run()
    tables = page_tables(at)  # the page's own tables, not the charts' number tables
    scores = tables[1].value
    assert scores.iloc[:, 3].tolist() == [7 * 20 + 7, 0, 100, 0]
    timeline = tables[0].value
    assert timeline.iloc[:, 0].tolist() == ["2014", "2014", "2015", "2017"]
    assert len(tables[2].value) == len(exercise_index.EXERCISES) + 4  # each reference file, then four model files
    text = markdown_text(at)
    for arxiv in ("1409.3215", "1409.0473", "1508.04025", "1706.03762"):
        assert f"(https://arxiv.org/abs/{arxiv})" in text
    at.checkbox(key="ch08_read_bahdanau").check().run()
    at.checkbox(key="ch08_read_vaswani").check().run()
    assert i18n.t("ch08.papers.done", lang, done=2, total=4) in progress_texts(at)


def test_ch09_cards_and_progress_from_saved_results():
    progress.save_results(PROJECT_ROOT / "exercises", {
        "ex00": {"passed": True, "score": 1.0}, "ex01": {"passed": False, "score": 0.4}})
    at = opened(CH09)
    n_left = len(exercise_index.EXERCISES) - 2
    assert [m.value for m in at.metric] == ["1", "1", "0", "0", str(n_left)]  # passed, failed, not written, error, not graded
    table = frame_with(at, "last score").set_index("exercise")
    assert table.loc["ex00", "last score"] == 100.0 and table.loc["ex01", "last score"] == 40.0
    assert "passed" in table.loc["ex00", "status"] and "not passed" in table.loc["ex01", "status"]
    assert "**Next:** exercise ex01" in markdown_text(at)
    links = [link.proto.label for link in at.get("page_link")]
    assert "1 · Compression vs. dynamic reading" in links and "8 · History and paper map" in links
    assert "Open exercise ex01 on the Practice page" in links

    at.toggle(key="ch09_only_open").set_value(True).run()
    assert len(frame_with(at, "last score")) == len(exercise_index.EXERCISES) - 1
    at.checkbox(key="ch09_card_limits").check().run()
    assert "judgements you can explain: 1 of 6" in progress_texts(at)
    assert f"Exercises passed: 1 / {len(exercise_index.EXERCISES)}" in progress_texts(at)


def test_ch09_all_passed_in_chinese():
    progress.save_results(PROJECT_ROOT / "exercises", {ex.id: {"passed": True, "score": 1.0} for ex in exercise_index.EXERCISES})
    at = opened(CH09, "zh")
    assert [m.value for m in at.metric] == [str(len(exercise_index.EXERCISES)), "0", "0", "0", "0"]
    assert "所有练习都已通过" in at.success[0].value


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ch09_interview_cards_show_computed_answers(lang):
    from course.lessons import ch09

    at = opened(CH09, lang)
    numbers = ch09.interview_numbers()
    questions = [h.value for h in at.subheader]
    for card in ch09.INTERVIEW:
        assert i18n.t(f"ch09.interview.{card.key}.question", lang) in questions
    text = markdown_text(at)
    assert f"{numbers['attention_ops']:,}" in text and f"{numbers['dense_params']:,}" in text
    assert f"{numbers['var_unscaled']:.1f}" in text
    links = [link.proto.label for link in at.get("page_link")]
    assert i18n.t("nav.ch10", lang) in links  # the quadratic-cost card links to the variants chapter
    at.checkbox(key="ch09_interview_quadratic").check().run()
    assert i18n.t("ch09.interview.known", lang, done=1, total=4) in progress_texts(at)
