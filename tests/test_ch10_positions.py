"""Chapter 10's positions experiment: RoPE from chapter 6's matrices, scores by offset, the numbers the text
quotes, and the page section in both languages after moving its widgets."""

import cmath
import math

import numpy as np
import pytest
import torch
from app_helpers import errors_of, markdown_text, metric, open_page
from streamlit import dataframe_util

from course.common.i18n import t
from course.lessons import ch10
from course.lessons.ch06 import positions

pytestmark = pytest.mark.usefixtures("lab_home")  # progress and notes in a fresh folder per test

PAGE = "app_pages/ch10_variants.py"


def test_rope_by_rotation_is_multiplication_by_e_to_the_i_m_omega():
    d, T = 6, 5
    X = np.random.default_rng(0).normal(size=(T, d))
    out = ch10.rope_by_rotation(X, offset=2)
    for m in range(T):
        for j in range(d // 2):
            z = complex(X[m, 2 * j], X[m, 2 * j + 1]) * cmath.exp(1j * (2 + m) * positions.frequencies(d)[j])
            assert out[m, 2 * j] == pytest.approx(z.real) and out[m, 2 * j + 1] == pytest.approx(z.imag)


@pytest.mark.parametrize("d", [8, 16, 32, 64])
def test_rotary_and_bias_scores_depend_on_the_offset_only_and_absolute_ones_do_not(d):
    assert ch10.diagonal_spread(ch10.position_scores("rotary", d)) < 1e-12
    assert ch10.diagonal_spread(ch10.position_scores("alibi", d)) == 0
    assert ch10.diagonal_spread(ch10.position_scores("absolute", d)) > 0.5
    for shift in (1, 7, 40):
        assert ch10.shift_change("rotary", d, shift) < 1e-12 and ch10.shift_change("alibi", d, shift) == 0
        assert ch10.shift_change("absolute", d, shift) > 0.1


def test_absolute_scores_by_hand():
    q, k = ch10.query_and_key(8)
    P = positions.sinusoid_table(20, 8)
    S = ch10.position_scores("absolute", 8, start=3)
    assert S[2, 4] == pytest.approx((q + P[5]) @ (k + P[7]) / math.sqrt(8))
    bias = ch10.position_scores("alibi", 8)
    assert bias[1, 6] == pytest.approx(q @ k / math.sqrt(8) - 0.5 * 5)


def test_the_numbers_the_text_quotes():
    claims = ch10.positions_claims()
    assert claims["rotary"] < 1e-12 and claims["alibi"] == 0 and claims["absolute"] > 1
    assert claims["agreement"] < 1e-6  # chapter 6's matrices = the reference RotaryEmbedding (float32 tables)
    X = torch.randn(4, 16, dtype=torch.float64)
    assert np.abs(ch10.rope_by_rotation(X.numpy()) - X.numpy()).max() > 0.1  # the agreement is not trivial
    for lang in ("en", "zh"):
        text = t("ch10.rope.after", lang, **claims)
        assert f"{claims['absolute']:.2f}" in text and f"{claims['agreement']:.1e}" in text


def heatmap(at):
    chart = next(c for c in at.get("vega_lite_chart") if "row_label" in str(c.proto.spec))
    data = dataframe_util.convert_arrow_bytes_to_pandas_df(chart.proto.datasets[0].data.data)
    n = ch10.SCORE_LEN
    return data.sort_values(["row", "col"])["value"].to_numpy().reshape(n, n)


@pytest.mark.slow  # the app in AppTest, several reruns
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_section_follows_the_widgets(lang):
    at = open_page(PAGE, lang)
    assert errors_of(at) == [] and t("ch10.rope.intro", lang)[:40] in markdown_text(at)
    at.select_slider(key="ch10_rope_d").set_value(32).run()
    at.slider(key="ch10_rope_shift").set_value(9).run()
    assert errors_of(at) == []
    assert float(metric(at, t("ch10.rope.change", lang, shift=9))) < 1e-9
    np.testing.assert_allclose(heatmap(at), ch10.position_scores("rotary", 32, 9), atol=1e-12)
    at.radio(key="ch10_rope_scheme").set_value("absolute").run()
    assert float(metric(at, t("ch10.rope.change", lang, shift=9))) > 0.1
    assert metric(at, t("ch10.rope.spread", lang)) == f"{ch10.diagonal_spread(ch10.position_scores('absolute', 32, 9)):.3g}"
    np.testing.assert_allclose(heatmap(at), ch10.position_scores("absolute", 32, 9), atol=1e-12)
    assert f"ex09 · {t('exercises.ex09.title', lang)}**" in markdown_text(at)
