"""AppTest of the training lab page: shipped runs shown first in both languages, widgets moved, a live run
trained in a child process and stopped from the page (never trained in the Streamlit process)."""

import time
from dataclasses import replace

import pytest
from app_helpers import charts, errors_of, markdown_text, open_page

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
    curves = charts(at)[i18n.t("lab.chart.seq_acc", lang)][1][0]
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
    maps = charts(at)[i18n.t("lab.maps.title", lang, variant=label)][1][0]
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


@pytest.mark.slow
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
    curves = charts(at)[i18n.t("lab.chart.loss", "en")][1][0]
    live = curves[curves["series"].str.endswith(i18n.t("lab.live_mark", "en"))]
    assert list(live["value"]) == run["loss"]


def test_the_learners_button_waits_for_ex05_to_ex07(lab_home):
    at = open_page(PAGE, "en", timeout=300)
    assert i18n.t("lab.mine_not_passed", "en") in [i.value for i in at.info]
    assert not any(b.key == "lab_train_mine" for b in at.button)


@pytest.mark.slow
def test_unfinished_modules_that_are_marked_passed_give_a_clear_message(lab_home, monkeypatch):
    """The stubs in exercises/ with a progress file claiming ex05-ex07 passed: the child fails, the page says
    which file is not finished, and nothing was trained in this process."""
    from course.app import progress
    from course.common.paths import PROJECT_ROOT

    progress.save_results(PROJECT_ROOT / "exercises", {ex: {"passed": True, "score": 1} for ex in ("ex05", "ex06", "ex07")})
    real = training_lab.variant_config
    monkeypatch.setattr(training_lab, "variant_config", lambda v, base=None: replace(real(v, base), steps=20))
    at = open_page(PAGE, "en", timeout=300)
    at.button(key="lab_train_mine").click().run()
    deadline = time.monotonic() + 300
    while not at.error:
        assert time.monotonic() < deadline, "no message from the failed child"
        at.run()
    assert "not finished" in at.error[0].value and ".py, line " in at.error[0].value, at.error[0].value
    assert at.session_state["lab_live"] is None


@pytest.mark.slow
def test_a_passing_copy_of_the_solutions_is_trained_and_drawn_beside_the_reference(lab_home, monkeypatch, tmp_path):
    import functools
    import shutil

    from course.app import lab_runner, progress
    from course.common.paths import PROJECT_ROOT

    mine = tmp_path / "exercises"
    shutil.copytree(PROJECT_ROOT / "solutions", mine, ignore=shutil.ignore_patterns("__pycache__"))
    progress.save_results(PROJECT_ROOT / "exercises", {ex: {"passed": True, "score": 1} for ex in ("ex05", "ex06", "ex07")})
    monkeypatch.setattr(lab_runner, "start", functools.partial(lab_runner.start, exercises_dir=mine))
    real = training_lab.variant_config
    monkeypatch.setattr(training_lab, "variant_config", lambda v, base=None: replace(real(v, base), steps=20))
    at = open_page(PAGE, "zh", timeout=300)
    at.button(key="lab_train_mine").click().run()
    wait_for(at, lambda at: at.session_state["lab_live"] is None)
    task, seed = at.radio(key="lab_task").value, at.radio(key="lab_seed").value
    run = at.session_state["lab_runs"][(task, "mine", seed)]
    assert run["learner"] and run["steps_done"] == 20
    curves = charts(at)[i18n.t("lab.chart.loss", "zh")][1][0]
    assert list(curves[curves["series"] == i18n.t("lab.variants.mine", "zh")]["value"]) == run["loss"]
    assert set(curves["series"]) >= {i18n.t("lab.variants.baseline", "zh"), i18n.t("lab.variants.mine", "zh")}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_sentence_pairs_show_their_figures_and_label_the_maps_from_the_local_data(lang):
    from course.lessons import lab_views
    from course.translation import lab_pairs

    shipped = training_lab.load_results()
    at = open_page(PAGE, lang, timeout=300)
    at.radio(key="lab_task").set_value("tatoeba").run()
    at.selectbox(key="lab_variant").set_value("no_residual").run()
    assert errors_of(at) == []
    text = markdown_text(at)
    for seed in shipped["seeds"]:
        for variant in ("baseline", "no_residual"):
            assert pct(training_lab.find_run(shipped, "tatoeba", variant, seed)["final_token_acc"]) in text
    assert i18n.t("lab.pairs_claim", lang) in text
    at.radio(key="lab_kind").set_value("cross").run()
    captions = " ".join(c.value for c in at.caption)
    if not lab_pairs.DATA.is_file():
        assert i18n.t("lab.maps.no_data", lang, step=0) in captions
        return
    pairs = lab_pairs.load_slice()
    _, target = lab_views.probe_ids(shipped["config"], "tatoeba", pairs)
    assert " ".join(lab_views.token_text(target, pairs["tokens"])) in captions
    spec, _ = charts(at)[i18n.t("lab.maps.title", lang, variant=i18n.t("lab.variants.baseline", lang))]
    assert pairs["tokens"][target[0]] in str(spec)  # the rows are labelled with the output's characters
