"""AppTest of chapters 5 and 6: both languages render, and the controls change the shown numbers.

Expected numbers are computed here independently: shapes and costs from their formulas, attention
weights from the layer's weight matrices with plain torch, the encoding with math.sin/cos.
"""

import math
import re

import numpy as np
import pytest
import torch
from app_helpers import errors_of, markdown_text, metric, open_page, widgets
from streamlit import dataframe_util

from course.common import i18n
from course.lessons import ch05, ch06

pytestmark = pytest.mark.usefixtures("lab_home")  # progress and notes in a fresh folder per test

CH05, CH06 = "app_pages/ch05_multihead.py", "app_pages/ch06_self_attention.py"
BOUND32 = (1 + math.sqrt(2)) * 2.0**-24


def opened(page, lang):
    """The page in `lang`, checked to run without errors, to be in that language and to prefix its keys."""
    at = open_page(page, lang=lang)
    assert errors_of(at) == []
    assert bool(re.search(r"[\u4e00-\u9fff]", at.title[0].value)) == (lang == "zh")
    prefix = page.split("/")[1][:5]  # "ch05_"
    assert [w.key for w in widgets(at._tree) if not w.key.startswith((prefix, "app_"))] == []
    return at


def expected_shapes(b, n_q, n_k, h, heads):
    """The tracer's shapes, in its row order, from the formulas."""
    d = h // heads
    return [str(s) for s in ((b, n_q, h), (b, n_k, h), (b, n_q, h), (b, n_k, h), (b * heads, n_q, d),
                             (b * heads, n_k, d), (b * heads, n_q, n_k), (b * heads, n_q, d), (b, n_q, h), (b, n_q, h))]


def chart_data(at, index):
    """The data table behind the index-th chart (inline dataset or data passed apart)."""
    proto = at.get("vega_lite_chart")[index].proto
    raw = proto.datasets[0].data.data if proto.datasets else proto.data.data
    return dataframe_util.convert_arrow_bytes_to_pandas_df(raw)


def softmax_rows(a):
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ch05_shape_tracer_offers_only_head_counts_that_divide_num_hiddens(lang):
    at = opened(CH05, lang)
    shapes = at.dataframe[0].value.iloc[:, 2].tolist()
    assert shapes == expected_shapes(2, 4, 6, 100, 5)  # the worked case
    assert shapes[4:6] == ["(10, 4, 20)", "(10, 6, 20)"] and shapes[-1] == "(2, 4, 100)"
    assert float(at.metric[0].value) < 1e-6
    params = at.dataframe[1].value
    assert params.iloc[-1, 1] == params.iloc[-1, 2] == 4 * 100**2

    heads = at.select_slider(key="ch05_heads")
    assert list(heads.options) == ["1", "2", "4", "5", "10"]  # the divisors of 100 up to 16: no 3, no error
    assert i18n.t("ch05.heads_divide", lang, num_hiddens=100, valid="1, 2, 4, 5, 10") in [c.value for c in at.caption]
    heads.set_value(10).run()
    assert errors_of(at) == [] and at.dataframe[0].value.iloc[4, 2] == "(20, 4, 10)"
    heads.set_value(5).run()

    for key, value in (("ch05_batch", 3), ("ch05_n_q", 2), ("ch05_n_k", 5), ("ch05_hiddens", 48)):
        at.slider(key=key).set_value(value).run()
    assert errors_of(at) == []
    # 48 has no 5 heads: the nearest count it allows, 4 (6 is as near; the smaller wins)
    assert at.select_slider(key="ch05_heads").value == 4
    assert at.dataframe[0].value.iloc[:, 2].tolist() == expected_shapes(3, 2, 5, 48, 4)
    assert at.dataframe[1].value.iloc[-1, 1:].tolist() == [4 * 48**2, 4 * 48**2]


def test_ch05_head_heatmaps_follow_the_chosen_input_and_head():
    at = opened(CH05, "en")
    at.text_input(key="ch05_sentence").set_value("a dog saw a cat").run()
    at.select_slider(key="ch05_num_heads").set_value(2).run()
    at.slider(key="ch05_scale").set_value(3.0).run()
    at.number_input(key="ch05_seed").set_value(5).run()
    at.radio(key="ch05_head").set_value(1).run()
    assert errors_of(at) == []
    assert at.radio(key="ch05_head").options == ["1", "2"]  # numbered from 1, as the tables' "head 1", "head 2"
    layer = ch05.build_layer(32, 2, seed=5)
    X = ch05.embed("a dog saw a cat".split(), 32, 3.0)  # (T, 32)
    with torch.no_grad():
        q, k = (X @ layer.W_q.weight.T)[:, 16:], (X @ layer.W_k.weight.T)[:, 16:]  # head 1's 16 columns
        expected = torch.softmax(q @ k.T / 4.0, dim=-1).numpy()  # sqrt(16) = 4
    shown = chart_data(at, 0).sort_values(["row", "col"])["value"].to_numpy().reshape(5, 5)
    np.testing.assert_allclose(shown, expected, atol=1e-5)
    np.testing.assert_allclose(shown[0], shown[3])  # the two "a"s read alike
    diff = at.dataframe[-1].value.set_index("")  # head x head
    assert diff.shape == (2, 2) and diff.iloc[0, 1] > 0 and diff.iloc[0, 0] == 0

    at.switch_page(CH06).run()
    at.switch_page(CH05).run()
    assert at.text_input(key="ch05_sentence").value == "a dog saw a cat" and at.radio(key="ch05_head").value == 1
    at.text_input(key="ch05_sentence").set_value(" ".join(["w"] * 13)).run()
    assert not at.exception and "13 words" in at.error[0].value


def dilated_layers(n, k):
    """Fewest layers with dilations 1, 2, 4, ... whose receptive field 1 + (k-1)(2^L - 1) reaches n."""
    layers = 0
    while 1 + (k - 1) * (2**layers - 1) < n:
        layers += 1
    return layers


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ch06_costs_and_rotation(lang):
    at = opened(CH06, lang)
    for key, value in (("ch06_n", 600), ("ch06_d", 64), ("ch06_k", 5)):
        at.slider(key=key).set_value(value).run()
    n, d, k = 600, 64, 5
    table = next(df.value for df in at.dataframe if len(df.value) == 4 and df.value.shape[1] == 7)  # the cost table
    assert table.iloc[:, 2].tolist() == [f"{n * n * d:,}", f"{n * d * d:,}", f"{k * n * d * d:,}", f"{k * n * d * d:,}"]
    assert table.iloc[:, 4].tolist() == [1, n, 1, 1]
    assert table.iloc[:, 6].tolist() == [1, n - 1, math.ceil((n - 1) / (k - 1)), dilated_layers(n, k)]
    assert float(at.metric[0].value) == pytest.approx(n / d, rel=1e-3)
    assert f"n = d = {d}" in markdown_text(at)

    assert float(metric(at, i18n.t("ch06.error64", lang))) < 1e-6
    assert float(metric(at, i18n.t("ch06.error32", lang))) <= BOUND32
    at.switch_page(CH05).run()
    at.switch_page(CH06).run()
    assert (at.slider(key="ch06_n").value, at.slider(key="ch06_k").value) == (n, k)  # kept across pages
    for key, value in (("ch06_length", 100), ("ch06_hiddens", 128), ("ch06_delta", 37), ("ch06_pair", 50)):
        at.slider(key=key).set_value(value).run()
    assert errors_of(at) == []
    w = 10000 ** (-2 * 50 / 128)
    matrix = next(df.value for df in at.dataframe if df.value.shape == (2, 2)).to_numpy()
    c, s = math.cos(37 * w), math.sin(37 * w)
    np.testing.assert_allclose(matrix, [[c, s], [-s, c]], atol=1e-6)
    assert float(metric(at, i18n.t("ch06.error64", lang))) < 1e-6
    assert float(metric(at, i18n.t("ch06.error32", lang))) <= BOUND32


def test_ch06_cross_attention_encoding_scale_and_shuffle():
    at = opened(CH06, "en")
    at.radio(key="ch06_mode").set_value("cross").run()
    frames = [df.value for df in at.dataframe[1:5]]  # queries, scores (left column); keys, outputs (right)
    frames = [f.set_index("") for f in frames if list(f.columns) == ["", "x0", "x1", "x2", "x3"]]
    Q = next(f for f in frames if list(f.index) == list(ch06.TARGET)).to_numpy()  # queries before outputs
    K = next(f for f in frames if list(f.index) == list(ch06.SOURCE)).to_numpy()
    weights = chart_data(at, 0).sort_values(["row", "col"])["value"].to_numpy().reshape(3, 4)
    np.testing.assert_allclose(weights, softmax_rows(Q @ K.T / 2.0), atol=2e-3)  # from the shown 3-decimal tables
    assert "**3 × 4**" in markdown_text(at)
    top = ch06.TARGET[0] + " → " + ch06.SOURCE[int(weights[0].argmax())]  # the random vectors' chance alignment, named
    assert "**random**" in markdown_text(at) and top in markdown_text(at)

    at.slider(key="ch06_length").set_value(20).run()
    at.slider(key="ch06_hiddens").set_value(16).run()
    at.multiselect(key="ch06_columns").set_value([3, 14]).run()
    heat = chart_data(at, 2)
    for _, row in heat.sample(40, random_state=0).iterrows():
        i, dim = int(row["position"]), int(row["dimension"])
        angle = i / 10000 ** (2 * (dim // 2) / 16)
        assert row["P"] == pytest.approx(math.sin(angle) if dim % 2 == 0 else math.cos(angle), abs=1e-4)
    curves = chart_data(at, 3)
    assert sorted(curves["column"].unique()) == ["P[:, 14]", "P[:, 3]"]
    col3 = curves[curves["column"] == "P[:, 3]"].sort_values("position")["P"].to_numpy()
    np.testing.assert_allclose(col3, [math.cos(i / 10000 ** (2 / 16)) for i in range(20)], atol=1e-6)
    norms = next(df.value for df in at.dataframe if df.value.columns[0] == "measured").iloc[:, 1].tolist()
    assert norms[2] == pytest.approx(math.sqrt(16 / 2), abs=1e-3)  # a row of P: sqrt(d/2)

    without, with_p = (float(metric(at, i18n.t(f"ch06.err_{m}", "en"))) for m in ("without", "with"))
    assert without < 1e-6 and with_p > 1e-3
    at.button(key="ch06_reshuffle").click().run()
    assert at.number_input(key="ch06_shuffle").value == 2
    words = ch05.SENTENCE.split()
    perm = torch.randperm(len(words), generator=torch.Generator().manual_seed(2)).tolist()
    assert f"**{' '.join(words[i] for i in perm)}**" in markdown_text(at)
    without, with_p = (float(metric(at, i18n.t(f"ch06.err_{m}", "en"))) for m in ("without", "with"))
    assert without < 1e-6 and with_p > 1e-3
    at.text_input(key="ch06_sentence").set_value("alone").run()
    assert not at.exception and "got 1" in at.error[0].value


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ch06_shows_why_positions_are_needed_before_encoding_them(lang):
    at = opened(CH06, lang)
    headers = [h.value for h in at.header]  # in page order
    assert headers.index(i18n.t("ch06.heading_order", lang)) < headers.index(i18n.t("ch06.heading_pe", lang))
    assert float(metric(at, i18n.t("ch06.err_without", lang))) < 1e-6 < float(metric(at, i18n.t("ch06.err_with", lang)))


def test_valid_lens_parse_and_trace_by_hand():
    assert ch05.parse_valid_lens("3, 2", 2, 6) == [3, 2] and ch05.parse_valid_lens("0 6", 2, 6) == [0, 6]
    for text, fragment in (("3", "one per example"), ("3, x", "whole numbers"), ("3, 7", "between 0 and n_k = 6")):
        with pytest.raises(ch05.BadLengths, match=fragment) as bad:
            ch05.parse_valid_lens(text, 2, 6)
        assert i18n.t(f"ch05.lens.bad_{bad.value.code}", "zh", **bad.value.fields)  # every code has its text
    seen = ch05.trace_valid_lens(2, 4, 6, 100, 5, [3, 2])
    assert seen["repeated"] == [3] * 5 + [2] * 5 and seen["repeated_shape"] == (10,)
    assert seen["weights_shape"] == (10, 4, 6) and seen["zero_weights"] == 5 * 4 * (6 - 3) + 5 * 4 * (6 - 2)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ch05_tracer_repeats_valid_lens_per_head(lang):
    at = opened(CH05, lang)
    text = markdown_text(at)
    assert "[3, 3, 3, 3, 3, 2, 2, 2, 2, 2]" in text and "**(10,)**" in text
    assert metric(at, i18n.t("ch05.lens.zeros", lang, shape=(10, 4, 6))) == "140"
    at.select_slider(key="ch05_heads").set_value(4).run()
    at.text_input(key="ch05_valid_lens").set_value("6, 1").run()
    assert "[6, 6, 6, 6, 1, 1, 1, 1]" in markdown_text(at) and "**(8,)**" in markdown_text(at)
    assert metric(at, i18n.t("ch05.lens.zeros", lang, shape=(8, 4, 6))) == str(4 * 4 * 5)
    at.text_input(key="ch05_valid_lens").set_value("6").run()
    fix = i18n.t("ch05.lens.bad_count", lang, count=1, batch=2)  # the learner's language, not English
    assert errors_of(at) == [] and fix in at.warning[0].value


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_positional_encoding_at_the_smallest_width_offers_its_columns_and_names_those_set_aside(lang):
    """num_hiddens = 4 once crashed the period table and silently dropped the curve columns 8 and 20."""
    at = opened(CH06, lang)
    assert at.multiselect(key="ch06_columns").value == [0, 1, 8, 20]
    at.slider(key="ch06_hiddens").set_value(4).run()
    assert errors_of(at) == []
    picker = at.multiselect(key="ch06_columns")
    assert picker.options == ["0", "1", "2", "3"] and picker.value == [0, 1]
    notes = [i.value for i in at.info if i18n.t("ch06.columns_aside", lang, columns="8, 20", d=4, last=3) == i.value]
    assert notes, [i.value for i in at.info]
    periods = next(df.value for df in at.dataframe if i18n.t("ch06.col_pair", lang) in df.value.columns)
    assert periods[i18n.t("ch06.col_pair", lang)].tolist() == [0, 1]
    at.slider(key="ch06_hiddens").set_value(32).run()
    assert at.multiselect(key="ch06_columns").value == [0, 1, 8, 20]  # back, and no note
    assert not [i for i in at.info if "8, 20" in i.value]
