"""AppTest of the training lab page: shipped runs shown first in both languages, widgets moved, a live run
trained in a child process and stopped from the page (never trained in the Streamlit process)."""

import json
import time
from dataclasses import replace

import pandas as pd
import pytest
from app_helpers import errors_of, markdown_text, open_page
from streamlit import dataframe_util

from course.common import i18n
from course.lessons import training_lab

PAGE = "app_pages/lab.py"
pytestmark = pytest.mark.skipif(not training_lab.RESULTS.is_file(), reason="no shipped results file")


@pytest.fixture(autouse=True)
def no_training_in_process(monkeypatch):
    """Any training in the test (= Streamlit) process fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError("the page trained in the Streamlit process")
    monkeypatch.setattr(training_lab, "train", refuse)


def chart_frames(at):
    """{chart title: data frame} of the page's Vega-Lite charts."""
    found = {}
    for chart in at.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        title = spec.get("title")
        title = title.get("text") if isinstance(title, dict) else title
        frames = [dataframe_util.convert_arrow_bytes_to_pandas_df(d.data.data) for d in chart.proto.datasets]
        frames += [pd.DataFrame(rows) for rows in spec.get("datasets", {}).values()]  # data inlined by Altair
        found[title] = frames[0] if frames else None
    return found


def pct(x):
    return f"{100 * x:.0f}%"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_shipped_runs_are_shown_with_their_figures_and_the_widgets_move(lang):
    shipped = training_lab.load_results()
    at = open_page(PAGE, lang, timeout=300)
    assert errors_of(at) == []
    task = at.radio(key="lab_task").value
    for variant in ("no_pe", "no_residual"):
        at.selectbox(key="lab_variant").set_value(variant).run()
        assert errors_of(at) == []
        text = markdown_text(at)
        for seed in shipped["seeds"]:
            run = training_lab.find_run(shipped, task, variant, seed)
            base = training_lab.find_run(shipped, task, "baseline", seed)
            assert pct(run["final_seq_acc"]) in text and pct(base["final_seq_acc"]) in text
        assert i18n.t(f"lab.ablations.{variant}.claim", lang) in text
    curves = chart_frames(at)[i18n.t("lab.chart.seq_acc", lang)]
    seed = at.radio(key="lab_seed").value
    run = training_lab.find_run(shipped, task, "no_residual", seed)
    label = i18n.t("lab.variants.no_residual", lang)
    assert list(curves[curves["series"] == label]["value"]) == [x["seq_acc"] for x in run["tests"]]
    at.radio(key="lab_kind").set_value("cross").run()
    at.radio(key="lab_layer").set_value(1).run()
    at.radio(key="lab_head").set_value(3).run()
    last = run["snapshots"][-1]
    at.select_slider(key="lab_step").set_value(last["step"]).run()
    assert errors_of(at) == []
    maps = chart_frames(at)[i18n.t("lab.maps.title", lang, variant=label)]
    expected = [w for row in last["maps"]["cross"][1][3] for w in row]
    assert list(maps.sort_values(["row", "col"])["value"]) == pytest.approx(expected)
    assert any(" ".join(map(str, last["prediction"])) in c.value for c in at.caption)


def wait_for(at, condition, timeout=300):
    """Rerun the page until condition(at) holds (the live section polls the child each run)."""
    deadline = time.monotonic() + timeout
    while not condition(at):
        assert time.monotonic() < deadline, "timed out waiting for the training child"
        at.run()
        assert errors_of(at) == []


def test_a_live_run_trains_in_a_child_and_the_stop_button_ends_it(monkeypatch):
    real = training_lab.variant_config
    long_run = dict(num_hiddens=16, ffn_num_hiddens=16, steps=100_000, snapshot_every=5, log_every=1, eval_size=8)
    monkeypatch.setattr(training_lab, "variant_config", lambda v, base=None: replace(real(v, base), **long_run))
    at = open_page(PAGE, "en", timeout=300)
    at.selectbox(key="lab_variant").set_value("one_head").run()
    at.button(key="lab_train").click().run()
    assert errors_of(at) == [] and at.session_state["lab_live"] is not None
    wait_for(at, lambda at: any("step" in p.proto.text and not p.proto.text.startswith("Training: step 0 ")
                                for p in at.get("progress")))
    at.button(key="lab_stop").click().run()
    wait_for(at, lambda at: at.session_state["lab_live"] is None)
    runs = at.session_state["lab_runs"]
    task, seed = at.radio(key="lab_task").value, at.radio(key="lab_seed").value
    run = runs[(task, "one_head", seed)]
    assert run["stopped"] and 0 < run["steps_done"] < long_run["steps"]
    assert any(f"{run['steps_done']} steps" in c.value for c in at.caption)
    curves = chart_frames(at)[i18n.t("lab.chart.loss", "en")]
    live = curves[curves["series"].str.endswith(i18n.t("lab.live_mark", "en"))]
    assert list(live["value"]) == run["loss"]
