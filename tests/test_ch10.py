"""Chapter 10: full vs linear attention (formulas checked by hand), the memory counter, the shipped
figures, and the page (both languages, the scarce-budget slider, the measure button)."""

import math

import numpy as np
import pytest
import torch
from app_helpers import errors_of, markdown_text, metric, open_page
from streamlit import dataframe_util

from course.common import pages_index
from course.common.i18n import t
from course.lessons import ch10

pytestmark = pytest.mark.usefixtures("lab_home")  # progress and notes in a fresh folder per test

PAGE = "app_pages/ch10_variants.py"


def test_full_attention_is_softmax_of_scaled_scores():
    q, k, v = ch10.random_inputs(7, 5, seed=3)
    weights = torch.softmax(q[0] @ k[0].T / math.sqrt(5), dim=-1)  # (7, 7)
    torch.testing.assert_close(ch10.full_attention(q, k, v)[0], weights @ v[0])


def test_linear_attention_is_the_normalised_kernel_average():
    q, k, v = ch10.random_inputs(9, 4, seed=1)
    phi = lambda x: torch.where(x > 0, x + 1, torch.exp(x))  # noqa: E731  elu(x) + 1 written out
    sim = phi(q[0]) @ phi(k[0]).T  # (9, 9), all positive
    weights = sim / sim.sum(dim=1, keepdim=True)
    torch.testing.assert_close(ch10.linear_attention(q, k, v)[0], weights @ v[0])


def test_peak_bytes_counts_live_tensors_and_not_the_inputs():
    x = torch.ones(1000)  # 4000 bytes, an input
    assert ch10.peak_bytes(lambda a: (a * 2) + 1, x) == 2 * 4000  # a*2 is alive while +1 is computed
    assert ch10.peak_bytes(lambda a: a.view(10, 100).T, x) == 0  # views of the input allocate nothing
    assert ch10.peak_bytes(lambda a: torch.cat([a, a, a]), x) == 3 * 4000


@pytest.mark.parametrize("n", [64, 256])
def test_full_attention_holds_n_by_n_matrices_and_linear_does_not(n):
    d = ch10.NUM_HIDDENS
    inputs = ch10.random_inputs(n)
    full, linear = ch10.peak_bytes(ch10.full_attention, *inputs), ch10.peak_bytes(ch10.linear_attention, *inputs)
    assert 3 * 4 * n * n <= full < 3 * 4 * n * n + 8 * 4 * n * d  # scores, exp and weights alive at once
    assert 4 * n * d <= linear <= 4 * 4 * n * d  # a few (n, d) tensors, nothing n x n


def test_measure_reports_every_length_and_variant():
    steps = []
    table = ch10.measure((32, 64), repeats=1, on_step=lambda done, total: steps.append((done, total)))
    assert table[["n", "variant"]].values.tolist() == [[32, "full"], [32, "linear"], [64, "full"], [64, "linear"]]
    assert (table["ms"] > 0).all() and steps == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert ch10.ratio(table, 64, "mib") == pytest.approx(table["mib"].iloc[2] / table["mib"].iloc[3])


def test_shipped_figures_cover_the_lengths_and_grow_as_the_arithmetic_says():
    table, machine = ch10.load_shipped()
    assert machine["cores"] >= 1 and machine["threads"] >= 1 and machine["torch"].startswith("2.")
    assert sorted(set(table["n"])) == list(ch10.N_VALUES) and set(table["variant"]) == set(ch10.VARIANTS)
    mib = table.pivot(index="n", columns="variant", values="mib")
    growth = mib.iloc[-1] / mib.iloc[-2]  # one doubling of n at the top
    assert growth["full"] == pytest.approx(4, rel=0.05) and growth["linear"] == pytest.approx(2, rel=0.05)
    assert (table.pivot(index="n", columns="variant", values="ms").iloc[-1]["full"]
            > table.pivot(index="n", columns="variant", values="ms").iloc[-1]["linear"])


def chart_data(at, index):
    """The data of the index-th cost chart (the positions heatmap above them is not counted)."""
    costs = [c for c in at.get("vega_lite_chart") if "row_label" not in str(c.proto.spec)]
    proto = costs[index].proto
    raw = proto.datasets[0].data.data if proto.datasets else proto.data.data
    return dataframe_util.convert_arrow_bytes_to_pandas_df(raw)


def test_page_is_registered_with_a_title_in_both_languages():
    entry = pages_index.get("ch10")
    assert entry.file.is_file() and entry in pages_index.chapters()
    assert t("nav.ch10", "en").startswith("10") and t("nav.ch10", "zh").startswith("10")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_shows_the_budget_and_the_shipped_costs(lang):
    at = open_page(PAGE, lang=lang)
    assert errors_of(at) == [] and at.title[0].value == t("ch10.title", lang)
    text = markdown_text(at)
    for key in ("ch10.kinds.body", "ch10.beyond.body", "ch10.stacks.body", "ch10.positions.body", "ch10.long.body",
                "ch10.strengths.body"):
        assert t(key, lang)[:30] in text, key
    at.slider(key="ch10_boost").set_value(3.0).run()
    scores = np.array([6.0, 1.0, 0.2, -0.5, -2.0])
    weights = np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()
    table = next(df.value for df in at.dataframe if t("ch10.scarce.col_after", lang) in df.value.columns)
    np.testing.assert_allclose(table[t("ch10.scarce.col_after", lang)], weights.round(3), atol=1e-9)
    assert metric(at, t("ch10.scarce.total", lang)) == "1.000"

    shipped, _ = ch10.load_shipped()
    memory = chart_data(at, 1).sort_values(["n", "variant"])
    assert len(memory) == len(shipped)
    assert set(memory["variant"]) == {t("ch10.long.full", lang), t("ch10.long.linear", lang)}
    top = int(shipped["n"].max())
    assert metric(at, t("ch10.long.ratio_memory", lang, n=top)) == f"{ch10.ratio(shipped, top, 'mib'):.1f}×"


def test_page_measure_button_replaces_the_shipped_figures(monkeypatch):
    # a quick measurement for the test, long enough that the n x n tensors outweigh the (n, d) ones (the
    # scoring divides the queries by its temperature: one more (n, d) tensor, 3.6x from 64 to 128)
    monkeypatch.setattr(ch10, "N_VALUES", (128, 256, 512))
    at = open_page(PAGE, lang="en")
    at.button(key="ch10_measure").click().run()
    assert errors_of(at) == []
    assert any("Measured just now" in c.value for c in at.caption)
    memory = chart_data(at, 1)
    assert sorted(set(memory["n"])) == [128, 256, 512]
    full = memory[memory["variant"] == t("ch10.long.full", "en")].sort_values("n")["mib"].to_numpy()
    assert full[2] / full[1] == pytest.approx(4, rel=0.1)  # n x n: four times the memory per doubling
    at.slider(key="ch10_boost").set_value(1.0).run()  # another rerun keeps the learner's measurement
    assert sorted(set(chart_data(at, 1)["n"])) == [128, 256, 512]
