"""Chapter 8's local-attention experiment: masks, reach through stacked layers, the numbers the text quotes,
and the page in both languages after moving its widgets."""

import math
from collections import deque

import numpy as np
import pytest
import torch
from app_helpers import errors_of, markdown_text, metric, open_page
from streamlit import dataframe_util

from course.common.i18n import t
from course.lessons import ch08

pytestmark = pytest.mark.usefixtures("lab_home")  # progress and notes in a fresh folder per test

PAGE = "app_pages/ch08_history.py"


def hops(arcs, n, start):
    """Breadth-first distances from `start` in the undirected parse (an oracle independent of reach())."""
    neighbours = {i: set() for i in range(n)}
    for a, b in arcs:
        neighbours[a].add(b)
        neighbours[b].add(a)
    dist, queue = {start: 0}, deque([start])
    while queue:
        node = queue.popleft()
        for other in neighbours[node] - set(dist):
            dist[other] = dist[node] + 1
            queue.append(other)
    return dist


def test_the_parse_is_a_tree_over_the_sentence():
    n = len(ch08.TOKENS)
    assert len(ch08.ARCS) == n - 1 and len(hops(ch08.ARCS, n, 3)) == n  # n - 1 arcs, all words connected
    A = ch08.tree_adjacency()
    assert torch.equal(A, A.T) and int(A.sum()) == 2 * (n - 1)


@pytest.mark.parametrize("D", [1, 2, 3, 5])
def test_window_keeps_the_counted_scores_and_settles_after_ceil_n_minus_1_over_D_layers(D):
    n = len(ch08.TOKENS)
    stats = ch08.local_stats("window", D, False, 1)
    assert stats["kept"] == sum(min(n - 1, i + D) - max(0, i - D) + 1 for i in range(n))
    assert stats["settle"] == math.ceil((n - 1) / D) and stats["all"]
    # after L layers the last token has read the last L * D + 1 positions
    for layers in (1, 2, 3):
        assert ch08.local_stats("window", D, False, layers)["read"] == min(n, layers * D + 1)


def test_graph_reach_is_the_number_of_hops():
    n = len(ch08.TOKENS)
    mask = ch08.local_mask("graph")
    diameter = max(max(hops(ch08.ARCS, n, s).values()) for s in range(n))
    assert ch08.layers_to_settle(mask) == diameter == 4
    for layers in range(1, 5):
        seen = ch08.reach(mask, layers)
        for i in range(n):
            near = {j for j, d in hops(ch08.ARCS, n, i).items() if d <= layers}
            assert set(torch.nonzero(seen[i]).flatten().tolist()) == near


def test_masks_that_never_connect_everything():
    assert not ch08.local_stats("window", 0, False, 3)["all"]  # each position reads itself only
    causal = ch08.local_stats("window", 2, True, 8)
    assert not causal["all"] and causal["read"] == len(ch08.TOKENS)  # the last token reads all before it


def test_weights_are_zero_exactly_where_the_mask_hides_a_key():
    for kind, D, causal in (("window", 1, False), ("window", 2, True), ("graph", 1, False)):
        mask = ch08.local_mask(kind, D, causal)
        weights = ch08.local_weights(mask)
        assert torch.all(weights[~mask] == 0)
        torch.testing.assert_close(weights.sum(-1), torch.ones(len(ch08.TOKENS)))


def test_the_numbers_the_text_quotes():
    claims = ch08.local_claims()
    n = len(ch08.TOKENS)
    assert claims["total"] == n * n and claims["window_kept"] == 3 * n - 2  # D = 1: a band of three diagonals
    assert claims["graph_kept"] == n + 2 * (n - 1)  # self-loops and both directions of every arc
    assert claims["window_kept"] == claims["graph_kept"]  # "keeps ... scores as well"
    assert claims["graph_settle"] < claims["window_settle"] == n - 1  # "yet ... layers suffice"
    assert claims["gap"] == 0.0
    for lang in ("en", "zh"):
        text = t("ch08.local.after", lang, **claims)
        assert f"{claims['window_kept']}" in text and f"{claims['graph_settle']}" in text


def chart_values(at, index):
    proto = at.get("vega_lite_chart")[index].proto
    data = dataframe_util.convert_arrow_bytes_to_pandas_df(proto.datasets[0].data.data)
    n = len(ch08.TOKENS)
    return data.sort_values(["row", "col"])["value"].to_numpy().reshape(n, n)


@pytest.mark.slow  # the app in AppTest, several reruns
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_follows_the_widgets(lang):
    at = open_page(PAGE, lang)
    assert errors_of(at) == [] and t("ch08.local.intro", lang)[:40] in markdown_text(at)
    first = len(at.get("vega_lite_chart")) - 2  # the two heatmaps of this section come last among the charts
    at.slider(key="ch08_local_d").set_value(2).run()
    at.slider(key="ch08_local_layers").set_value(3).run()
    assert errors_of(at) == []
    assert metric(at, t("ch08.local.kept", lang)) == "34 / 64"
    assert metric(at, t("ch08.local.read", lang, layers=3)) == "7 / 8"
    assert metric(at, t("ch08.local.settle", lang)) == "4"
    np.testing.assert_array_equal(chart_values(at, first + 1), ch08.reach(ch08.local_mask("window", 2), 3).numpy())
    at.toggle(key="ch08_local_causal").set_value(True).run()
    weights = chart_values(at, first)
    assert np.all(np.triu(weights, 1) == 0) and any(c.value == t("ch08.local.never_all", lang) for c in at.caption)
    at.radio(key="ch08_local_kind").set_value("graph").run()
    assert errors_of(at) == [] and metric(at, t("ch08.local.settle", lang)) == "4"
    assert metric(at, t("ch08.local.kept", lang)) == "22 / 64"
    assert f"ex08 · {t('exercises.ex08.title', lang)}**" in markdown_text(at)
    assert "`exercises/ex08_structured_masks.py`" in markdown_text(at)
