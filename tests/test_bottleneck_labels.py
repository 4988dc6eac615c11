"""The Bottleneck page in Chinese: table headers translated, each model keeps its colour in both languages."""

import json

import pytest
from app_helpers import errors_of, open_page

from course.common import pages_index
from course.common import i18n
from course.translation.models import MODEL_NAMES

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("tiny_env")]  # a fresh progress home; the tiny checkpoints

BOTTLENECK = pages_index.get("demo_bottleneck").path
ENGLISH = {"greedy", "beam", "model", "bucket"}


def headers(frame):
    """Column labels, index labels and axis names of a shown table."""
    return {str(c) for c in frame.columns} | {str(frame.index.name), str(frame.columns.name)}


def test_bleu_tables_have_chinese_headers():
    at = open_page(BOTTLENECK, lang="zh")
    assert errors_of(at) == []
    frames = [df.value for df in at.dataframe]
    assert frames and not any(ENGLISH & headers(f) for f in frames), [headers(f) for f in frames]
    overall = next(f for f in frames if i18n.t("demos.bottleneck.methods.greedy", "zh") in f.columns)
    assert i18n.t("demos.bottleneck.methods.beam", "zh") in overall.columns
    assert overall.index.name == i18n.t("demos.bottleneck.color_title", "zh")


def test_each_model_keeps_its_colour_in_both_languages():
    for lang in ("en", "zh"):
        at = open_page(BOTTLENECK, lang=lang)
        spec = json.loads(next(c.proto.spec for c in at.get("vega_lite_chart") + at.get("arrow_vega_lite_chart")
                               if '"bleu"' in c.proto.spec))
        colour = spec.get("encoding", {}).get("color") or spec["layer"][0]["encoding"]["color"]
        assert colour["scale"]["domain"] == [i18n.t(f"demos.models.{n}", lang) for n in MODEL_NAMES]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_bleu_table_lists_the_models_in_the_charts_order(lang):
    import pandas as pd

    from course.lessons.bottleneck import views

    labels = ["1-5", "6-10"]
    table = pd.DataFrame([(m, b, 10.0 + i, 5) for i, m in enumerate(("transformer", "seq2seq", "bahdanau"))
                          for b in labels], columns=["model", "bucket", "bleu", "count"])
    specs, bleu, _ = views.tatoeba_view(table, labels, lang)
    names = [i18n.t(f"demos.models.{m}", lang) for m in ("transformer", "seq2seq", "bahdanau")]
    assert list(bleu.index) == names
    for spec in specs:
        assert spec["encoding"]["color"]["scale"]["domain"] == names
