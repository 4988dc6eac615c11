"""Chapter 3's d2l masked-softmax presets: the lesson functions and the page. Expected weights are
computed here with torch.softmax over the allowed keys only."""

import re

import numpy as np
import pytest
import torch
from app_helpers import errors_of, markdown_text, open_page

from course.common.i18n import t
from course.lessons.ch03 import masks as ch03_masks

pytestmark = pytest.mark.usefixtures("lab_home")  # progress and notes in a fresh folder per test

PAGE = "app_pages/ch03_scoring.py"
ALLOWED = {"per_example": [[2, 2], [3, 3]], "per_query": [[1, 3], [2, 4]]}  # keys readable per (example, query)


def expected(name, seed):
    scores = torch.rand(2, 2, 4, generator=torch.Generator().manual_seed(seed)).double()
    weights = torch.zeros(2, 2, 4, dtype=torch.float64)
    for b in range(2):
        for i in range(2):
            n = ALLOWED[name][b][i]
            weights[b, i, :n] = torch.softmax(scores[b, i, :n], dim=0)
    return scores, weights


@pytest.mark.parametrize("name", ["per_example", "per_query"])
@pytest.mark.parametrize("seed", [0, 7])
def test_presets_mask_the_d2l_cells(name, seed):
    scores, lens, weights = ch03_masks.preset_weights(name, seed)
    want_scores, want = expected(name, seed)
    assert tuple(lens.shape) == ((2,) if name == "per_example" else (2, 2))
    torch.testing.assert_close(scores.double(), want_scores)
    torch.testing.assert_close(weights.double(), want, atol=1e-6, rtol=0)


def shown_weights(at):
    """The weights printed on the page after 'weights =', as a (2, 2, 4) array."""
    text = next(c.value for c in at.code if "weights =" in c.value).split("weights =")[1]
    return np.array([float(x) for x in re.findall(r"\d+\.\d{4}", text)]).reshape(2, 2, 4)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_presets_follow_the_choice_and_the_seed(lang):
    at = open_page(PAGE, lang=lang)
    assert errors_of(at) == []
    assert "torch.tensor([2, 3])" in "".join(c.value for c in at.code)
    np.testing.assert_allclose(shown_weights(at), expected("per_example", 0)[1].numpy(), atol=6e-5)
    at.radio(key="ch03_mask_preset").set_value("per_query").run()
    at.number_input(key="ch03_seed").set_value(7).run()
    assert "torch.tensor([[1, 3], [2, 4]])" in "".join(c.value for c in at.code)
    weights = shown_weights(at)
    np.testing.assert_allclose(weights, expected("per_query", 7)[1].numpy(), atol=6e-5)
    assert weights[0, 0, 0] == 1.0  # a query that may read one key puts all its weight there
    assert t("ch03.presets.per_query_after", lang)[:25] in markdown_text(at)
