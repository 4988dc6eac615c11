"""AppTest of chapters 2-4: both languages render, and every control changes the shown numbers.

Expected numbers are computed here independently (numpy formulas, torch.softmax), then compared
with the numbers the page shows.
"""

import re

import numpy as np
import pytest
import torch
from app_helpers import errors_of, open_page, page_tables
from streamlit import dataframe_util

from course.common import i18n
from course.lessons import ch02

pytestmark = pytest.mark.usefixtures("lab_home")  # progress and notes in a fresh folder per test

CH02, CH03, CH04 = "app_pages/ch02_attention_cues.py", "app_pages/ch03_scoring.py", "app_pages/ch04_bahdanau.py"
READING = np.array([3.0, 1.0, 0.2, -0.5, -2.0])


def softmax(x):
    e = np.exp(np.asarray(x, dtype=np.float64) - np.max(x))
    return e / e.sum()


def nw_mse(w):
    """Independent Nadaraya-Watson test error on the chapter's seeded data."""
    d = ch02.make_data(n_train=50, noise=0.5, seed=0)
    x, xi, yi = (t.numpy().astype(np.float64) for t in (d.x_test, d.x_train, d.y_train))
    k = np.exp(-(((x[:, None] - xi[None, :]) * w) ** 2) / 2)
    y_hat = (k / k.sum(axis=1, keepdims=True)) @ yi
    return ((y_hat - (2 * np.sin(x) + x**0.8)) ** 2).mean()


def frame_with(at, column):
    """The first shown dataframe that has this column (or index label)."""
    for df in at.dataframe:
        if column in df.value.columns or column in df.value.index:
            return df.value
    raise AssertionError(f"no dataframe with {column!r}")


def chart_data(at, index):
    """The data table behind the index-th chart on the page."""
    proto = at.get("vega_lite_chart")[index].proto
    return dataframe_util.convert_arrow_bytes_to_pandas_df(proto.datasets[0].data.data)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("page", [CH02, CH03, CH04])
def test_page_renders_in_both_languages(page, lang):
    at = open_page(page, lang)
    assert not at.error
    assert at.title[0].value.split(" · ")[0] in {"2", "3", "4"}
    han = bool(re.search(r"[\u4e00-\u9fff]", at.title[0].value))
    assert han == (lang == "zh")


def test_ch02_w_slider_training_and_state_across_pages():
    at = open_page(CH02)
    metrics = [m.value for m in at.metric]
    mean_mse = ((ch02.make_data().y_train.numpy().mean() - ch02.make_data().y_truth.numpy()) ** 2).mean()
    assert float(metrics[0]) == pytest.approx(mean_mse, abs=1e-4)
    assert float(metrics[1]) == pytest.approx(nw_mse(1.0), abs=1e-4)
    at.slider(key="ch02_w").set_value(3.0).run()
    assert float(at.metric[1].value) == pytest.approx(nw_mse(3.0), abs=1e-4)
    assert "(50, 1, 49)" in page_tables(at)[0].value.to_string()

    at.slider(key="ch02_epochs").set_value(4).run()
    at.button(key="ch02_train").click().run()
    assert not at.exception
    trained = at.metric[2]
    w = float(re.search(r"w = ([0-9.]+)", trained.label).group(1))
    assert float(trained.value) == pytest.approx(nw_mse(w), abs=2e-3)
    assert any(re.search(r"After 4 epochs: \*\*w = " + re.escape(f"{w:.3f}"), m.value) for m in at.markdown)

    torch.manual_seed(0)
    w0 = float(torch.rand(1))  # the seeded initial w
    at.select_slider(key="ch02_lr").set_value(0.05).run()
    at.button(key="ch02_train").click().run()
    w_slow = float(re.search(r"w = ([0-9.]+)", at.metric[2].label).group(1))
    assert abs(w_slow - w0) < abs(w - w0)  # a smaller learning rate moves w less in 4 epochs

    at.switch_page(CH03).run()
    at.switch_page(CH02).run()
    assert at.slider(key="ch02_w").value == 3.0 and at.select_slider(key="ch02_lr").value == 0.05
    assert float(at.metric[1].value) == pytest.approx(nw_mse(3.0), abs=1e-4)
    assert len(at.metric) == 3  # the trained result is still there


def test_ch03_masking_sliders_zero_the_right_cells():
    at = open_page(CH03)
    assert int(at.metric[0].value) == 3 * (6 - 4)  # defaults: lengths 6 and 4
    at.slider(key="ch03_len_0").set_value(2).run()
    at.slider(key="ch03_len_1").set_value(5).run()
    at.number_input(key="ch03_seed").set_value(7).run()
    assert int(at.metric[0].value) == 3 * (6 - 2) + 3 * (6 - 5)
    scores = torch.randn(2, 3, 6, generator=torch.Generator().manual_seed(7))
    for b, n in enumerate([2, 5]):
        shown = chart_data(at, b)["value"].to_numpy().reshape(3, 6)
        np.testing.assert_allclose(shown[:, :n], torch.softmax(scores[b, :, :n], dim=-1).numpy(), atol=1e-6)
        assert (shown[:, n:] == 0).all()
    at.radio(key="ch03_len_mode").set_value("query").run()
    lens = [[6, 5, 4], [5, 4, 3]]  # the per-query defaults
    assert int(at.metric[0].value) == sum(6 - n for row in lens for n in row)
    at.slider(key="ch03_len_1_2").set_value(0).run()
    assert int(at.metric[0].value) == sum(6 - n for row in lens for n in row) + 3


def test_ch03_shift_temperature_and_comparison():
    at = open_page(CH03)
    at.slider(key="ch03_shift").set_value(150).run()
    naive, stable = (i18n.t(f"ui.shift.{c}", "en") for c in ("naive", "stable"))
    shift = frame_with(at, naive)
    assert (shift[naive] == "NaN").all()  # written as the text names it (a table widget shows NaN as None)
    np.testing.assert_allclose(shift[stable].astype(float), softmax(READING), atol=1e-5)
    assert float(at.metric[1].value) < 1e-5

    at.slider(key="ch03_temperature").set_value(0.5).run()
    alpha = softmax(READING / 0.5)
    assert at.metric[2].value == f"{alpha.max():.3f}"
    assert float(at.metric[3].value) == pytest.approx(-(alpha * np.log(alpha)).sum(), abs=1e-3)

    at.slider(key="ch03_dq").set_value(8).run()
    at.slider(key="ch03_dk").set_value(6).run()
    at.slider(key="ch03_hidden").set_value(10).run()
    params = page_tables(at)[0].value.iloc[:, 2].astype(int).tolist()
    assert params == [10 * (8 + 6) + 10, 0, 0, 8 * 6]
    ms = frame_with(at, "median ms per forward pass").iloc[:, 1]
    assert len(ms) == 4 and (ms > 0).all()


def test_ch03_shift_table_and_temperature_bars_in_chinese():
    at = open_page(CH03, "zh")
    at.slider(key="ch03_temperature").set_value(1.3).run()
    headers = [c for df in at.dataframe for c in df.value.columns]
    assert "naive" not in headers and "stable" not in headers and "直接计算 softmax(x + c)" in headers
    charts = at.get("vega_lite_chart")
    index = next(i for i, c in enumerate(charts) if '"alpha:Q"' in c.proto.spec or '"field": "alpha"' in c.proto.spec)
    shown = chart_data(at, index)["alpha"].tolist()  # the bar heights and their labels (no 0.81099998951)
    assert len(shown) == 5 and all(len(repr(float(a))) <= 5 for a in shown), shown
    assert '"format": ".3~f"' in charts[index].proto.spec


def test_ch03_dk_slider_measures_the_variance():
    at = open_page(CH03, "zh")
    at.select_slider(key="ch03_d").set_value(1024).run()
    measure = i18n.t("ch03.col_measure", "zh")
    table = next(tb.value for tb in at.table if tb.value.columns[0] == measure)  # the variance table, not the learning one
    unscaled, scaled = float(table.iloc[0, 1]), float(table.iloc[0, 2])
    assert unscaled == pytest.approx(1024, rel=0.15)
    assert scaled == pytest.approx(1.0, rel=0.15)
    assert float(table.iloc[1, 1]) > 0.9 > float(table.iloc[1, 2])  # unscaled softmax saturates


def test_ch04_alignment_editor_and_target_switch():
    at = open_page(CH04)
    cat = [0.3, 1.0, 3.8, 0.3, -0.8, -0.5, -0.9]
    assert at.metric[0].value == f"α(cat) = {softmax(cat)[2]:.3f}" == "α(cat) = 0.867"
    assert frame_with(at, "α")["α"].tolist() == [round(a, 3) for a in softmax(cat)]

    at.session_state["ch04_scores_1"] = {"edited_rows": {2: {"e": 0.5}}, "added_rows": [], "deleted_rows": []}
    at.run()
    edited = cat[:2] + [0.5] + cat[3:]
    assert at.metric[0].value == f"α(black) = {softmax(edited)[1]:.3f}"

    at.radio(key="ch04_target").set_value("垫子").run()
    assert at.metric[0].value.startswith("α(mat)")
    at.switch_page(CH02).run()
    at.switch_page(CH04).run()
    assert at.radio(key="ch04_target").value == "垫子"
    at.radio(key="ch04_target").set_value("猫").run()
    assert at.metric[0].value == f"α(black) = {softmax(edited)[1]:.3f}"  # the edit survived
    at.button(key="ch04_reset_scores").click().run()
    assert at.metric[0].value == "α(cat) = 0.867"

    at.session_state["ch04_scores_1"] = {"edited_rows": {0: {"e": None}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert not at.exception and "fill in the empty cells" in at.error[0].value


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ch04_worked_example_and_edits(lang):
    at = open_page(CH04, lang)
    result = frame_with(at, "p")
    np.testing.assert_allclose(result.loc["e"], [0.964, 1.726], atol=1e-3)
    np.testing.assert_allclose(result.loc["α"], [0.318, 0.682], atol=1e-3)
    np.testing.assert_allclose(result.loc["c"], [0.318, 1.363], atol=1e-3)  # 1.364 when alpha is rounded first
    np.testing.assert_allclose(result.loc["p"], [0.260, 0.740], atol=1e-3)

    # s = [0.5, 1] and v = [2, -1]: recompute by hand.
    at.session_state["ch04_vectors"] = {
        "edited_rows": {0: {"1": 0.5, "2": 1.0}, 3: {"1": 2.0, "2": -1.0}}, "added_rows": [], "deleted_rows": []}
    at.run()
    s, v, H = np.array([0.5, 1.0]), np.array([2.0, -1.0]), np.array([[1.0, 0.0], [0.0, 2.0]])
    e = np.array([v @ np.tanh(s + h) for h in H])
    a = softmax(e)
    c = a @ H
    result = frame_with(at, "p")
    for row, expected in (("e", e), ("α", a), ("c", c), ("p", softmax(c))):
        np.testing.assert_allclose(result.loc[row], np.round(expected, 3), atol=1.5e-3)

    at.session_state["ch04_W_s"] = {"edited_rows": {0: {"1": 2.0}}, "added_rows": [], "deleted_rows": []}
    at.run()
    e = np.array([v @ np.tanh(np.array([2.0, 0.0]) * s[0] + np.array([0.0, s[1]]) + h) for h in H])
    np.testing.assert_allclose(frame_with(at, "p").loc["e"], np.round(e, 3), atol=1.5e-3)

    at.button(key="ch04_reset_example").click().run()
    np.testing.assert_allclose(frame_with(at, "p").loc["c"], [0.318, 1.363], atol=1e-3)

    at.session_state["ch04_W_h"] = {"edited_rows": {0: {"1": None}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert not at.exception and at.error  # an empty cell gets a message, not a traceback
    assert "W_h" in at.error[0].value
    assert ("Cannot compute" in at.error[0].value) == (lang == "en")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ch02_result_of_an_earlier_training_run_says_it_is_stale_after_the_sliders_move(lang):
    at = open_page(CH02, lang)
    at.slider(key="ch02_epochs").set_value(50).run()
    at.button(key="ch02_train").click().run()
    assert errors_of(at) == [] and [w.value for w in at.warning] == []
    at.slider(key="ch02_epochs").set_value(10).run()
    lr = at.select_slider(key="ch02_lr").value  # the default learning rate, unchanged
    stale = i18n.t("ch02.train_stale", lang, epochs=50, lr=lr, now_epochs=10, now_lr=lr)
    assert [w.value for w in at.warning] == [stale]
    at.button(key="ch02_train").click().run()  # retrained with the sliders' settings: current again
    assert [w.value for w in at.warning] == []
    assert any(i18n.t("ch02.train_result", lang, w="X", loss="Y", epochs=10).split("X")[0] in m.value
               for m in at.markdown)
