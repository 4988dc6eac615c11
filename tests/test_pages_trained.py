"""The trained translators inside the chapters and the demo pages: the alignment rule of chapter 4, its
walk-through, the Transformer's heads (chapter 5) and attention (chapter 7), and the training curves.

Pure functions are tested on hand-made reports; the pages in AppTest in both languages against the shipped
checkpoints (skipped when they are absent) and, for the missing case, against an empty checkpoint folder.
Expected values are written out here (the sentence the rule must pick, the shipped losses of
docs/inside/checkpoints.md), not produced by the code under test.
"""

import json
import re

import numpy as np
import pandas as pd
import pytest
from app_helpers import errors_of, markdown_text, open_page
from streamlit import dataframe_util

from course.common import i18n
from course.common.paths import PROJECT_ROOT
from course.translation import trained_views

pytestmark = pytest.mark.usefixtures("lab_home")  # progress and notes in a fresh folder per test

SHIPPED = PROJECT_ROOT / "checkpoints"
CH04, CH05, CH07 = "app_pages/ch04_bahdanau.py", "app_pages/ch05_multihead.py", "app_pages/ch07_transformer.py"
INSIDE, TRANSLATE = "app_pages/demo_inside.py", "app_pages/demo_translate.py"


def needs_shipped(*names):
    """Skip unless the shipped checkpoints and reports of `names` are here."""
    missing = [n for n in names if not (SHIPPED / f"{n}.pt").is_file() or not (SHIPPED / f"{n}.bleu.json").is_file()]
    if missing:
        pytest.skip(f"no shipped checkpoint for {missing}")


def charts(at):
    """[(title text, data frame)] of every Vega-Lite chart on the page."""
    found = []
    for element in at.get("vega_lite_chart"):
        proto = element.proto
        spec = json.loads(proto.spec)
        title = spec.get("title")
        title = title.get("text") if isinstance(title, dict) else title
        raw = [d.data.data for d in proto.datasets] or [proto.data.data]
        data = dataframe_util.convert_arrow_bytes_to_pandas_df(raw[0]) if raw[0] else None
        if data is None and spec.get("datasets"):
            data = pd.DataFrame(next(iter(spec["datasets"].values())))
        found.append((title, data))
    return found


def chart_titled(at, title):
    """The data of the one chart with this title."""
    hits = [data for t, data in charts(at) if t == title]
    assert len(hits) == 1, (title, [t for t, _ in charts(at)])
    return hits[0]


# ---- the pure functions ---------------------------------------------------------------------------

REPORT = {
    "train_metrics": {"train_loss": 1.9, "valid_loss": 1.65, "steps": 300, "train_minutes": 6.2,
                      "valid_curve": [{"step": 100, "minutes": 2.0, "valid_loss": 3.0},
                                      {"step": 200, "minutes": 4.0, "valid_loss": 1.6},
                                      {"step": 300, "minutes": 6.0, "valid_loss": 1.65}]},
    "examples": {"1-4": [{"en": "Go now.", "reference": "现在走。", "greedy": "现在走。"},
                         {"en": "I am fine.", "reference": "我很好。", "greedy": "我好。"}],
                 "5-6": [{"en": "He reads a long book.", "reference": "他读一本长书。", "greedy": "他 读 一本 长书 。"},
                         {"en": "We all went home early.", "reference": "我们都早早回家了。", "greedy": "我们回家了。"}]},
}


def test_curves_and_final_losses_come_from_the_reports():
    curves = trained_views.valid_curves({"a": REPORT, "b": {"train_metrics": {}}})
    assert curves["step"].tolist() == [100, 200, 300] and set(curves["model"]) == {"a"}
    assert curves["valid_loss"].tolist() == [3.0, 1.6, 1.65]
    final = trained_views.final_losses({"a": REPORT, "b": {}})
    assert final.to_dict("records") == [{"model": "a", "steps": 300, "minutes": 6, "train_loss": 1.9,
                                         "valid_loss": 1.65, "best_valid_loss": 1.6}]


def test_the_rule_picks_the_longest_example_translated_exactly_spaces_aside():
    assert [e["en"] for e in trained_views.correct_examples(REPORT)] == ["He reads a long book.", "Go now."]
    assert trained_views.picked_example(REPORT)["en"] == "He reads a long book."
    assert trained_views.picked_example({"examples": {"1-4": [REPORT["examples"]["1-4"][1]]}}) is None
    assert trained_views.picked_example(None) is None


def test_top_sources_monotone_share_and_step_weights():
    frame = pd.DataFrame([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.6, 0.3, 0.1], [0.0, 0.1, 0.9]],
                         index=["我", "爱", "你", "。"], columns=["i", "love", "you"])
    assert trained_views.top_sources(frame) == [("我", "i", 0.7), ("爱", "love", 0.8), ("你", "i", 0.6),
                                                ("。", "you", 0.9)]
    assert trained_views.monotone_share(frame) == pytest.approx(2 / 3)  # one step of three goes back
    row = trained_views.step_weights(frame, 1)
    assert row["source"].tolist() == ["i", "love", "you"] and row["weight"].tolist() == [0.1, 0.8, 0.1]
    with pytest.raises(ValueError, match="steps 0..3"):
        trained_views.step_weights(frame, 4)


# ---- the pages, with the shipped checkpoints ----------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ch04_shows_the_rule_picked_sentence_and_its_learned_alignment(lang):
    needs_shipped("bahdanau")
    at = open_page(CH04, lang=lang)
    assert errors_of(at) == []
    text = markdown_text(at)
    assert "I am unable to finish my homework." in text and "我无法完成我的作业。" in text  # the rule, applied by hand
    assert "`checkpoints/bahdanau.bleu.json`" in text
    title = i18n.t("trained.alignment.title", lang, sentence="I am unable to finish my homework.")
    data = chart_titled(at, title)
    weights = data.sort_values(["row", "col"])["value"].to_numpy().reshape(11, 8)  # 10 characters + <eos>, 8 pieces
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-4)
    assert weights[0].argmax() == 0 and weights[2].argmax() == 2  # 我 reads "i", 法 (of 无法) reads "unable"


@pytest.mark.slow
def test_ch04_walk_through_moves_across_the_source():
    needs_shipped("bahdanau")
    at = open_page(CH04, lang="en")
    at.radio(key="ch04_walk_sentence").set_value("I love music.").run()
    seen = []
    for step in (0, 1, 2):
        at.slider(key="ch04_walk_step").set_value(step).run()
        assert errors_of(at) == []
        label = i18n.t("trained.walk.metric", "en", step=step, token="我爱音"[step])
        seen.append([m.value for m in at.metric if m.label == label][0].split(" · ")[0])
    assert seen == ["i", "love", "music"]  # the most-read source word moves left to right
    at.radio(key="ch04_walk_sentence").set_value("I love AI.").run()
    assert errors_of(at) == [] and "`a` `##i`" in markdown_text(at)


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ch05_shows_the_four_heads_of_the_trained_transformer(lang):
    needs_shipped("transformer")
    at = open_page(CH05, lang=lang)
    assert errors_of(at) == [] and "我有两个兄弟。" in markdown_text(at)
    titles = [i18n.t("trained.transformer.head_title", lang, head=h)
              for h in range(1, 5)]
    for title in titles:
        data = chart_titled(at, title)
        assert len(data) == 8 * 5  # 7 characters + <eos> queries, 5 source pieces
    at.select_slider(key="ch05_trained_layer").set_value(1).run()
    at.radio(key="ch05_trained_kind").set_value("encoder").run()
    assert errors_of(at) == []
    assert len(chart_titled(at, titles[0])) == 5 * 5
    assert "transformer-inside" in {link.proto.page for link in at.get("page_link")}


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ch07_shows_the_trained_attention_its_curve_and_links(lang):
    needs_shipped("transformer")
    at = open_page(CH07, lang=lang)
    assert errors_of(at) == []
    kind = i18n.t("demos.inside.kinds.cross", lang)
    data = chart_titled(at, i18n.t("trained.transformer.mean_title", lang, kind=kind, layer=3))
    weights = data.sort_values(["row", "col"])["value"].to_numpy().reshape(8, 5)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-3)
    at.radio(key="ch07_trained_kind").set_value("decoder").run()
    kind = i18n.t("demos.inside.kinds.decoder", lang)
    data = chart_titled(at, i18n.t("trained.transformer.mean_title", lang, kind=kind, layer=3))
    weights = data.sort_values(["row", "col"])["value"].to_numpy().reshape(8, 8)
    assert np.abs(np.triu(weights, 1)).max() < 1e-6  # the causal mask: nothing right of the diagonal
    keys = data.sort_values("col").drop_duplicates("col")["col_label"].tolist()
    assert keys == ["<bos>", *"我有两个兄弟。"]  # step t reads the tokens fed in so far: <bos>, then its outputs
    curve = chart_titled(at, i18n.t("trained.curves.title", lang))
    assert len(curve) == 28 and curve["valid_loss"].min() == pytest.approx(1.6468, abs=1e-3)  # docs/inside/checkpoints.md
    assert {"transformer-inside", "translate"} <= {link.proto.page for link in at.get("page_link")}


@pytest.mark.slow
@pytest.mark.parametrize("page", [INSIDE, TRANSLATE])
def test_demo_pages_show_the_training_curves_and_final_losses(page):
    needs_shipped("seq2seq", "bahdanau", "transformer")
    at = open_page(page, lang="en")
    assert errors_of(at) == []
    curve = chart_titled(at, i18n.t("trained.curves.title", "en"))
    models = {i18n.t(f"demos.models.{n}", "en") for n in (["transformer"] if page == INSIDE else
                                                           ["seq2seq", "bahdanau", "transformer"])}
    assert set(curve["model"]) == models
    table = [f for f in at.dataframe if i18n.t("trained.curves.col_valid_loss", "en") in f.value.columns][0].value
    shown = dict(zip(table[i18n.t("trained.curves.col_model", "en")], table[i18n.t("trained.curves.col_valid_loss", "en")]))
    expected = {"seq2seq": 2.06, "bahdanau": 1.88, "transformer": 1.65}  # the README's table
    for name, loss in expected.items():
        label = i18n.t(f"demos.models.{name}", "en")
        if label in shown:
            assert round(shown[label], 2) == loss


@pytest.mark.slow
@pytest.mark.parametrize("page", [CH04, CH05, CH07])
def test_chapters_without_checkpoints_say_so_and_give_the_command(page, tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_CHECKPOINTS", str(tmp_path / "none"))
    at = open_page(page, lang="zh")
    assert errors_of(at) == []
    assert any("还没有" in i.value for i in at.info)
    assert any(re.match(r"python -m course\.translation\.train --model (bahdanau|transformer) ", c.value) for c in at.code)


def test_training_losses_recorded_at_each_check_are_drawn_dashed_beside_the_validation_curve():
    from course.app import trained_ui

    recorded = {"train_metrics": dict(REPORT["train_metrics"], valid_curve=[
        {"step": 100, "minutes": 2.0, "valid_loss": 3.0, "train_loss": 3.4},
        {"step": 200, "minutes": 4.0, "valid_loss": 1.6, "train_loss": 2.1}])}
    curves = trained_views.valid_curves({"new": recorded, "old": REPORT})
    assert curves["train_loss"].tolist()[:2] == [3.4, 2.1] and curves["train_loss"][2:].isna().all()
    both = trained_views.both_curves(curves, {"valid": "V", "train": "T"})
    # Every validation point, and only the training points that were recorded (the old run has none).
    assert sorted(zip(both["model"], both["curve"], both["loss"])) == sorted(
        [("new", "V", 3.0), ("new", "V", 1.6), ("old", "V", 3.0), ("old", "V", 1.6), ("old", "V", 1.65),
         ("new", "T", 3.4), ("new", "T", 2.1)])
    for lang in ("en", "zh"):
        spec, _ = trained_ui.curves_view({"transformer": recorded}, lang)
        assert spec["encoding"]["strokeDash"]["field"] == "curve"
        assert spec["title"] == i18n.t("trained.curves.title_both", lang)
        rows = next(iter(spec["datasets"].values()))
        assert {r["curve"] for r in rows} == {i18n.t(f"trained.curves.kind_{k}", lang) for k in ("valid", "train")}
        spec, _ = trained_ui.curves_view({"transformer": REPORT}, lang)  # nothing recorded: validation only
        assert "strokeDash" not in spec["encoding"] and spec["title"] == i18n.t("trained.curves.title", lang)
