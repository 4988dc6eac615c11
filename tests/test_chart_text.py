"""The text alternative of charts (course/common/chart_text.py): sentences and tables from hand-picked data."""

import pandas as pd
import pyarrow as pa

from course.common import chart_text, charts
from course.lessons.ch06.positions import pe_heatmap

WEIGHTS = [[0.7, 0.2, 0.1],
           [0.05, 0.05, 0.9],
           [0.3, 0.6, 0.1]]


def test_attention_weights_are_summarised_by_their_strongest_cells_in_each_language():
    spec = charts.heatmap(WEIGHTS, ["I", "love", "tea"], ["I", "love", "tea"], "self-attention",
                          show_values=True).to_dict()
    assert chart_text.summary(spec, "en") == (
        "self-attention: attention weights of 3 queries (rows) over 3 keys (columns); "
        "the strongest: love → tea (0.9); I → I (0.7); tea → love (0.6).")
    assert chart_text.summary(spec, "zh") == (
        "self-attention：3 个查询（行）对 3 个键（列）的注意力权重；"
        "最强的是 love → tea（0.9）；I → I（0.7）；tea → love（0.6）。")


def test_a_grid_that_is_not_weights_says_its_range_and_largest_values():
    spec = charts.heatmap([[-1.5, 2.0], [0.25, -0.5]], title="scores", scheme="redblue").to_dict()
    assert chart_text.summary(spec, "en") == (
        "scores: a grid of 2 × 2 values from -1.5 to 2; the largest: 0 → 1 (2); 1 → 0 (0.25); 1 → 1 (-0.5).")


def test_rows_that_do_not_sum_to_one_are_not_weights():
    assert chart_text.are_weights([(0, 0, 0.5), (0, 1, 0.5), (1, 0, 0.0), (1, 1, 0.0)])  # a fully masked row
    assert not chart_text.are_weights([(0, 0, 0.5), (0, 1, 0.6)])
    assert not chart_text.are_weights([(0, 0, 1.5), (0, 1, -0.5)])


def test_a_repeated_word_keeps_its_own_row_and_column_in_the_table():
    spec = charts.heatmap([[1.0, 0.0], [0.25, 0.75]], ["the", "the"], ["a", "b"], "t").to_dict()
    frame = chart_text.table(spec, "en")
    assert list(frame.index) == ["the (0)", "the (1)"] and list(frame.columns) == ["a", "b"]
    assert frame.loc["the (1)", "b"] == "0.75"


def test_lines_name_each_series_with_its_first_and_last_value():
    frame = pd.DataFrame({"step": [0, 1, 2, 0, 1, 2], "loss": [2.0, 1.0, 0.5, 2.0, 1.5, 1.25],
                          "run": ["scaled"] * 3 + ["unscaled"] * 3})
    spec = charts.line_chart(frame, "step", "loss", color="run", title="Training loss", x_title="step",
                             y_title="loss").to_dict()
    assert chart_text.summary(spec, "en") == (
        "Training loss: loss against step: scaled from 2 at 0 to 0.5 at 2; unscaled from 2 at 0 to 1.25 at 2.")
    assert chart_text.summary(spec, "zh") == (
        "Training loss：loss随step的变化——scaled在 0 处为 2，到 2 处为 0.5；unscaled在 0 处为 2，到 2 处为 1.25。")
    table = chart_text.table(spec, "en")
    assert table.to_dict("list") == {"step": ["0", "1", "2"], "scaled": ["2", "1", "0.5"],
                                     "unscaled": ["2", "1.5", "1.25"]}


def test_bars_name_the_highest_and_the_lowest():
    frame = pd.DataFrame({"word": ["The", "cat", "sat"], "alpha": [0.2, 0.7, 0.1]})
    spec = charts.bar_chart(frame, "word", "alpha", y_title="α").to_dict()
    assert chart_text.summary(spec, "en") == (
        "This chart: 3 bars of α; the highest is cat (0.7), the lowest sat (0.1).")
    assert chart_text.table(spec, "zh").to_dict("list") == {"word": ["The", "cat", "sat"], "α": ["0.2", "0.7", "0.1"]}


def test_position_bars_use_the_words_on_their_axis():
    spec = charts.position_bar_chart(["the", "cat", "the"], [0.1, 0.3, 0.6], y_title="weight").to_dict()
    assert chart_text.summary(spec, "en") == (
        "This chart: 3 bars of weight; the highest is the (0.6), the lowest the (0.1).")


def test_data_passed_beside_the_spec_as_arrow_is_read():
    table, spec = pe_heatmap("en", 4, 4)
    assert isinstance(table, pa.Table)
    sentence = chart_text.summary(spec, "en", table)
    assert sentence.startswith(f"{spec['title']}: a grid of 4 × 4 values from ")
    assert chart_text.table(spec, "en", table).shape == (4, 4)


def test_a_spec_without_a_data_mark_has_no_summary():
    assert chart_text.summary({"mark": "text", "encoding": {"text": {"field": "a"}}}, "en") is None
    assert chart_text.table({"mark": "rule"}, "en") is None


def test_bars_that_share_the_lowest_value_are_all_named():
    """A softmax at a low temperature: every bar but one rounds to 0; naming one of them as "the lowest" would
    pick it by drawing order alone."""
    frame = pd.DataFrame({"item": ["+3.0", "+1.0", "+0.2", "-0.5", "-2.0"], "alpha": [1.0, 0.0, 0.0, 0.0, 0.0]})
    spec = charts.bar_chart(frame, "item", "alpha", y_title="α").to_dict()
    said = chart_text.summary(spec, "en")
    assert said.endswith("the highest is +3.0 (1), the lowest +1.0, +0.2, -0.5, -2.0 (0)."), said
    assert "最低的是 +1.0、+0.2、-0.5、-2.0（0）" in chart_text.summary(spec, "zh")
    many = pd.DataFrame({"item": list("abcdefg"), "alpha": [1.0] + [0.0] * 6})
    said = chart_text.summary(charts.bar_chart(many, "item", "alpha", y_title="α").to_dict(), "en")
    assert "the lowest b, c, d, e and 2 more (0)" in said, said


def test_a_grid_of_zeros_and_ones_says_how_many_cells_hold_the_one():
    grid = [[1, 1, 1], [0, 1, 1], [0, 0, 1]]  # six ones: "the largest" three of them would be arbitrary
    spec = charts.heatmap(grid, ["a", "b", "c"], ["x", "y", "z"], "reach").to_dict()
    assert chart_text.summary(spec, "en") == (
        "reach: a grid of 3 × 3 values from 0 to 1; 6 cells hold 1, the first: a → x (1); a → y (1); a → z (1).")
    assert "有 6 个格子为 1" in chart_text.summary(spec, "zh")


def test_a_fit_chart_describes_its_curves_as_well_as_its_points():
    points = pd.DataFrame({"x": [0.5, 1.5, 2.5], "y": [1.0, 2.0, 1.0]})
    curves = pd.DataFrame({"x": [0.0, 3.0, 0.0, 3.0], "y": [0.0, 3.0, 1.5, 1.5],
                           "curve": ["truth", "truth", "average", "average"]})
    dots = charts.alt.Chart(points).mark_circle().encode(x="x:Q", y="y:Q")
    lines = charts.alt.Chart(curves).mark_line().encode(x=charts.alt.X("x:Q", title="x"),
                                                        y=charts.alt.Y("y:Q", title="y"), color="curve:N")
    spec = (dots + lines).properties(title="fit").to_dict()
    assert chart_text.summary(spec, "en") == (
        "fit: 3 points, x from 0.5 to 2.5. Also: y against x: truth from 0 at 0 to 3 at 3; "
        "average from 1.5 at 0 to 1.5 at 3.")
    assert "另外：y随x的变化——truth在 0 处为 0" in chart_text.summary(spec, "zh")
