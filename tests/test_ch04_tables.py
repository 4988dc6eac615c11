"""Chapter 4's added tables: the alignment matrix, the convex context, additive shapes with three sizes,
and the fixed-context vs Bahdanau decoder comparison. Expected values come from formulas written here."""

import numpy as np
import pytest
from app_helpers import errors_of, metric, open_page
from streamlit import dataframe_util

from course.common.i18n import t
from course.lessons import ch04
from course.lessons.ch04 import tables as ch04_tables
from course.translation.decoder_compare import decoder_comparison

pytestmark = pytest.mark.usefixtures("lab_home")  # progress and notes in a fresh folder per test

PAGE = "app_pages/ch04_bahdanau.py"


def softmax_np(x):
    e = np.exp(np.asarray(x, dtype=np.float64) - np.max(x))
    return e / e.sum()


def test_alignment_matrix_is_row_softmax_and_its_peaks_are_the_hand_links():
    matrix = ch04_tables.alignment_matrix(ch04.SCORES)
    assert list(matrix.index) == list(ch04.TARGETS) and matrix.shape == (6, 7)
    for target in ch04.TARGETS:
        np.testing.assert_allclose(matrix.loc[target], softmax_np(ch04.SCORES[target]), rtol=1e-12)
        assert (int(np.argmax(matrix.loc[target])),) == ch04.ALIGNMENT[target]


def test_convex_view_by_hand():
    view = ch04_tables.convex_view([0.25, 0.75], [[0.0, 0.0], [4.0, 8.0]])
    np.testing.assert_allclose(view["table"]["c"], [3.0, 6.0])
    np.testing.assert_allclose(view["table"]["v_top"], [4.0, 8.0])
    assert view["inside"] and view["weight_sum"] == 1.0 and view["min_weight"] == 0.25
    assert view["distance_to_top"] == pytest.approx(5**0.5)
    assert not ch04_tables.convex_view([-0.5, 1.5], [[0.0], [1.0]])["inside"]  # not softmax weights: outside


@pytest.mark.parametrize("d_s, d_h, d_a", [(3, 5, 7), (6, 10, 4), (1, 1, 1)])
def test_additive_shapes_follow_the_three_sizes(d_s, d_h, d_a):
    shapes = dict(ch04_tables.additive_shapes(d_s, d_h, d_a, batch=2, num_queries=1, src_len=7))
    assert shapes == {
        "s (query)": (2, 1, d_s), "h (keys = values)": (2, 7, d_h), "W_q": (d_a, d_s), "W_k": (d_a, d_h),
        "w_v": (1, d_a), "W_q s": (2, 1, d_a), "W_k h": (2, 7, d_a), "tanh(W_q s + W_k h)": (2, 1, 7, d_a),
        "e": (2, 1, 7), "α": (2, 1, 7), "c = α h": (2, 1, d_h)}


def test_decoder_comparison_counts_by_hand():
    B, T, steps, H, E, V = 3, 6, 4, 8, 5, 20
    m = decoder_comparison(batch=B, src_len=T, steps=steps, num_hiddens=H, embed_size=E, vocab_size=V)
    assert m["fixed"]["kept"] == (B, H) and m["bahdanau"]["kept"] == (B, T, H)
    assert m["fixed"]["distinct_contexts"] == 1 and m["bahdanau"]["distinct_contexts"] == steps
    gru = 3 * (H * (E + H) + H * H + 2 * H)
    fixed = V * E + gru + (2 * H + E) * H + H + H * V + V
    assert m["fixed"]["parameters"] == fixed
    assert m["attention_parameters"] == 2 * H * H + H
    assert m["bahdanau"]["parameters"] == fixed + 2 * H * H + H


def chart_data(at, index):
    proto = at.get("vega_lite_chart")[index].proto
    raw = proto.datasets[0].data.data if proto.datasets else proto.data.data
    return dataframe_util.convert_arrow_bytes_to_pandas_df(raw)


def heatmap_of(at):
    """The alignment heatmap's cells as a 6 x 7 array (the chart with 42 cells)."""
    for i in range(len(at.get("vega_lite_chart"))):
        data = chart_data(at, i)
        if len(data) == 42 and {"row", "col", "value"} <= set(data.columns):
            return data.sort_values(["row", "col"])["value"].to_numpy().reshape(6, 7)
    raise AssertionError("no 6 x 7 heatmap on the page")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_heatmap_follows_the_edited_scores(lang):
    at = open_page(PAGE, lang=lang)
    assert errors_of(at) == []
    expected = np.array([softmax_np(ch04.SCORES[target]) for target in ch04.TARGETS])
    np.testing.assert_allclose(heatmap_of(at), expected.round(3), atol=1e-9)
    caption = next(c.value for c in at.caption if "垫子 → mat" in c.value)
    assert "上 → on" in caption
    at.session_state["ch04_scores_1"] = {"edited_rows": {6: {"e": 9.0}}, "added_rows": [], "deleted_rows": []}
    at.run()  # 猫 now reads "mat" most
    edited = list(ch04.SCORES["猫"][:6]) + [9.0]
    np.testing.assert_allclose(heatmap_of(at)[1], softmax_np(edited).round(3), atol=1e-9)
    assert "猫 → mat" in next(c.value for c in at.caption if "垫子 → mat" in c.value)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_convex_context_and_shapes_follow_the_controls(lang):
    at = open_page(PAGE, lang=lang)
    alpha = softmax_np([np.tanh(2.0), np.tanh(1.0) + np.tanh(2.0)])  # the worked example's weights
    c = alpha @ np.array([[1.0, 0.0], [0.0, 2.0]])
    assert metric(at, t("ch04.convex.weight_sum", lang)) == "1.000"
    assert float(metric(at, t("ch04.convex.distance", lang, top="h2"))) == pytest.approx(
        np.linalg.norm(c - [0.0, 2.0]), abs=1e-3)
    at.session_state["ch04_vectors"] = {"edited_rows": {1: {"1": 5.0, "2": -3.0}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert metric(at, t("ch04.convex.weight_sum", lang)) == "1.000"  # h1 = (5, -3): new weights, same sum
    assert t("ch04.convex.inside_yes", lang) in [m.value for m in at.markdown]

    for key, value in (("ch04_ds", 3), ("ch04_dh", 5), ("ch04_da", 7)):
        at.slider(key=key).set_value(value).run()
    table = next(tb.value for tb in at.table if "W_k" in tb.value.iloc[:, 0].tolist())
    shapes = dict(zip(table.iloc[:, 0], table.iloc[:, 1]))
    assert shapes["W_q"] == "(7, 3)" and shapes["W_k"] == "(7, 5)" and shapes["c = α h"] == "(2, 1, 5)"
    assert shapes["tanh(W_q s + W_k h)"] == "(2, 1, 7, 7)"
    assert t("ch04.shapes.params", lang, count=7 * 3 + 7 * 5 + 7) in [c.value for c in at.caption]


def test_page_comparison_table_shows_the_measured_rows():
    at = open_page(PAGE, lang="en")
    table = next(tb.value for tb in at.table if t("ch04.compare.col_fixed", "en") in tb.value.columns)
    rows = dict(zip(table.iloc[:, 0], zip(table.iloc[:, 1], table.iloc[:, 2])))
    assert rows[t("ch04.compare.row_kept", "en")] == ("(4, 16)", "(4, 7, 16)")
    assert rows[t("ch04.compare.row_distinct", "en", steps=5)] == ("1", "5")
    extra = 2 * 16 * 16 + 16
    fixed, bahdanau = rows[t("ch04.compare.row_params", "en")]
    assert bahdanau == f"{int(fixed) + extra} (+{extra} for the scorer)"
