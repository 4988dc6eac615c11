"""AppTest of the two training experiments on their pages: the Bottleneck demo and chapter 3's sqrt(d_k) section.

Expected figures are read here straight from the JSON files (checkpoints/*.bleu.json and the shipped
results) and compared with what the pages show. Training runs only when its button is pressed: a
counter around the real training functions checks it (with a small real configuration for speed).
"""

import dataclasses
import json
import re
from pathlib import Path

import pytest
from app_helpers import charts, open_page, page_tables

from course.common import i18n
from course.lessons import ch03
from course.lessons.bottleneck import task as bottleneck_task
from course.lessons.ch03 import scaling_task

ROOT = Path(__file__).resolve().parent.parent
BOTTLENECK, CH03 = "app_pages/demo_bottleneck.py", "app_pages/ch03_scoring.py"


@pytest.fixture(autouse=True)
def env(lab_home, monkeypatch):
    """Fresh progress home; the shipped checkpoints' BLEU reports."""
    monkeypatch.setenv("ATTENTION_LAB_CHECKPOINTS", str(ROOT / "checkpoints"))


def counted(monkeypatch, module, **small):
    """Count calls of module.run, and make the page's default config small (still a real run)."""
    calls = []
    real_run = module.run
    config_cls = module.BottleneckConfig if module is bottleneck_task else module.ScalingConfig

    def run(config=None, progress=None):
        calls.append(config)
        return real_run(dataclasses.replace(config or config_cls(), **small), progress)

    monkeypatch.setattr(module, "run", run)
    return calls


def report(name):
    return json.loads((ROOT / "checkpoints" / f"{name}.bleu.json").read_text(encoding="utf-8"))


# ---- the Bottleneck page ------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["greedy", "beam"])
def test_the_reading_quotes_the_reports_figures(method):
    at = open_page(BOTTLENECK)
    if method == "beam":
        at.radio(key="demo_bottleneck_method").set_value("beam").run()
    text = "\n".join(m.value for m in at.markdown)
    gaps = []
    for name in ("seq2seq", "bahdanau", "transformer"):
        b = report(name)["buckets"]
        drop = 100 * (1 - b["13+"][method] / b["1-4"][method])
        assert drop > 30  # "the BLEU of all three translators falls"; by how much is quoted, not claimed
        assert f"{i18n.t(f'demos.models.{name}', 'en')} {drop:.0f}%" in text
    for bucket in ("1-4", "13+"):
        gaps.append(report("bahdanau")["buckets"][bucket][method] - report("seq2seq")["buckets"][bucket][method])
        assert f"{gaps[-1]:.1f}" in text
    wider = i18n.t("demos.bottleneck.reading_gap_wider", "en")
    narrower = i18n.t("demos.bottleneck.reading_gap_not_wider", "en")
    assert (wider in text) == (gaps[1] > gaps[0]) and (narrower in text) == (gaps[1] <= gaps[0])
    assert "keep reading" not in text  # the old claim the figures contradicted
    edge = i18n.t("demos.bottleneck.beam_edge", "en", models=i18n.t("demos.models.transformer", "en"), alpha="2.2")
    captions = "\n".join(c.value for c in at.caption)
    assert (edge in captions) == (method == "beam")  # 2.2: the largest alpha tried, BLEU still rising


def test_tatoeba_is_shown_as_bleu_and_as_the_drop_from_short_sentences():
    at = open_page(BOTTLENECK)
    shown = charts(at)
    _, (drops,) = shown[i18n.t("demos.bottleneck.drop_title", "en")]
    _, (bleu,) = shown[i18n.t("demos.bottleneck.chart_title", "en")]
    label = i18n.t("demos.models.transformer", "en")
    b = report("transformer")["buckets"]
    row = drops[(drops["model"] == label) & (drops["bucket"] == "13+")]
    assert float(row["drop_pct"].iloc[0]) == pytest.approx(100 * (1 - b["13+"]["greedy"] / b["1-4"]["greedy"]), abs=0.1)
    assert float(drops[drops["bucket"] == "1-4"]["drop_pct"].abs().max()) == 0
    assert len(bleu) == len(drops) == 18  # 3 models x 6 buckets


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_synthetic_experiment_is_shown_from_the_shipped_results_without_training(monkeypatch, lang):
    calls = counted(monkeypatch, bottleneck_task)
    at = open_page(BOTTLENECK, lang)
    shipped = bottleneck_task.load_results()
    text = "\n".join(m.value for m in at.markdown)
    for name in bottleneck_task.MODELS:
        assert str(shipped["models"][name]["parameters"]) in text
    for measure in ("token_acc", "seq_acc"):
        _, frames = charts(at)[i18n.t(f"demos.bottleneck.synthetic.{measure}", lang)]
        data = frames[0]
        for name in bottleneck_task.MODELS:
            label = i18n.t(f"demos.bottleneck.synthetic.model_{name}", lang)
            expected = [row[measure] for row in shipped["models"][name]["by_length"]]
            assert list(data[data["model"] == label][measure]) == expected
    assert any(i18n.t("demos.bottleneck.synthetic.shipped_caption", lang, seed=0, seconds="")[:12] in c.value
               for c in at.caption)
    at.select_slider(key="demo_bottleneck_bucket").set_value("1-4").run()
    at.radio(key="demo_bottleneck_method").set_value("beam").run()
    at.number_input(key="demo_bottleneck_seed").set_value(3).run()
    assert calls == [] and not at.exception


def test_the_button_trains_both_models_and_the_page_keeps_the_run(monkeypatch):
    calls = counted(monkeypatch, bottleneck_task, steps=2, min_len=5, max_len=9, batch_size=4, eval_per_length=1)
    at = open_page(BOTTLENECK)
    at.number_input(key="demo_bottleneck_seed").set_value(7).run()
    at.button(key="demo_bottleneck_live_run").click().run()
    assert not at.exception and len(calls) == 1 and calls[0].seed == 7
    assert any("seed 7" in c.value for c in at.caption)
    _, frames = charts(at)[i18n.t("demos.bottleneck.synthetic.token_acc", "en")]
    assert list(frames[0]["bucket"].unique()) == ["5-9"]  # the live run's buckets, not the shipped ones
    at.select_slider(key="demo_bottleneck_bucket").set_value("1-4").run()
    assert len(calls) == 1 and any("seed 7" in c.value for c in at.caption)


def test_examples_are_a_wrapping_table_in_both_languages():
    for lang in ("en", "zh"):
        at = open_page(BOTTLENECK, lang)
        table = page_tables(at)[0].value
        assert table.index.name == i18n.t("demos.bottleneck.col_en", lang)
        assert list(table.columns)[0] == i18n.t("demos.bottleneck.col_reference", lang)
        assert len(table.columns) == 4  # reference + three models, all on the page


# ---- chapter 3: the sqrt(d_k) learning experiment --------------------------------------------------------


def test_the_learning_section_shows_shipped_curves_and_the_gradient_figures(monkeypatch):
    calls = counted(monkeypatch, scaling_task)
    at = open_page(CH03)
    shipped = scaling_task.load_results()
    for d in (256, 64):
        if d != 256:
            at.select_slider(key="ch03_learn_d").set_value(d).run()
        text = "\n".join(m.value for m in at.markdown)
        for version, mark in (("unscaled", "u"), ("scaled", "s")):
            g = scaling_task.run_of(shipped, d, version)["gradients_at_init"]
            assert f"{g['scores']:.3f}" in text and f"{g['query']:.3f}" in text and f"{g['W_q']:.3f}" in text
        _, frames = charts(at)[i18n.t("ch03.learn.curve_title", "en", d=d)]
        data = frames[0]
        label = i18n.t("ch03.col_unscaled", "en")
        shown = list(data[data["version"] == label]["loss"])
        assert shown[:5] == scaling_task.run_of(shipped, d, "unscaled")["loss"][:5]
    table = next(df.value for df in at.table if i18n.t("ch03.learn.col_grad_query", "en") in df.value.columns)
    assert len(table) == 2 * len(scaling_task.D_VALUES)
    assert "gradient at the scores shrinks" in text and "does not shrink, it grows" in text
    assert calls == []


def test_the_learning_button_trains_and_the_section_shows_the_live_run(monkeypatch):
    calls = counted(monkeypatch, scaling_task, steps=20, d_values=(8, 16), grad_batches=1)
    at = open_page(CH03, "zh")
    at.button(key="ch03_learn_live_run").click().run()
    assert not at.exception and len(calls) == 1
    assert at.select_slider(key="ch03_learn_d").options == ["8", "16"]
    assert any(c.value.startswith(i18n.t("ch03.learn.live_caption", "zh", seconds="")[:6]) for c in at.caption)
    at.select_slider(key="ch03_d").set_value(1024).run()
    assert len(calls) == 1 and not at.exception


def test_the_scale_grid_charts_have_room_and_both_lines_after_a_move():
    at = open_page(CH03)
    for d in (64, 1024, 2):
        if d != 64:
            at.select_slider(key="ch03_d").set_value(d).run()
        spec, frames = charts(at)[i18n.t("ch03.measure_grad_norm", "en")]
        assert spec["height"] >= ch03.SCALE_CHART_HEIGHT >= 300
        assert len(frames) == 1  # lines and rule read one dataset
        assert set(frames[0]["version"]) == {i18n.t("ch03.col_unscaled", "en"), i18n.t("ch03.col_scaled", "en")}
        rule = spec["layer"][1]
        assert rule["mark"]["type"] == "rule" and re.search(rf"=== {d}\b", rule["transform"][0]["filter"])
