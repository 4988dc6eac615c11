"""Chapter 15's page in AppTest: it runs in both languages with the shipped figures in its text; the step slider
moves both heads' maps (to the snapshot's own weights), the seed radio changes the run, and the ablation table
is the shipped one; chapter 14's footer leads here."""

import pytest
from app_helpers import charts, errors_of, markdown_text, open_page, page_dataframes

from course.common import pages_index
from course.common.i18n import t
from course.lessons import ch15

pytestmark = pytest.mark.usefixtures("lab_home")

PAGE = pages_index.get("ch15").path


def head_maps(at, lang):
    """{role: DataFrame of cells} of the two heads' maps."""
    found = {}
    for role in ("previous", "induction"):
        title = next(title for title in charts(at) if title and title.startswith(t(f"ch15.maps.{role}_title", lang,
                                                                                   layer=1 if role == "previous" else 2,
                                                                                   head=1)[:8]))
        found[role] = next(f for f in charts(at)[title][1] if "value" in f.columns)
    return found


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_step_slider_and_the_seed_move_the_maps(lang):
    at = open_page(PAGE, lang=lang)
    assert errors_of(at) == [] and at.title[0].value == t("ch15.title", lang)
    results = ch15.load_results()
    text = markdown_text(at)
    seed = results["seeds"][0]
    assert t("ch15.loss.body", lang, **ch15.claims(results, seed), seed=seed).strip() in text
    assert t("ch15.ablation.after", lang, **ch15.claims(results, seed)).strip() in text
    last = head_maps(at, lang)
    run = ch15.find_run(results, seed)
    prev, ind = ch15.roles(run)
    final = run["snapshots"][-1]["maps"]["self"]
    assert last["previous"]["value"].tolist() == [w for row in final[prev["layer"]][prev["head"]] for w in row]

    at.select_slider(key="ch15_step").set_value(0).run()
    assert errors_of(at) == []
    first = head_maps(at, lang)
    start = run["snapshots"][0]["maps"]["self"]
    assert first["induction"]["value"].tolist() == [w for row in start[ind["layer"]][ind["head"]] for w in row]
    assert first["induction"]["value"].tolist() != last["induction"]["value"].tolist()
    assert any(c.value == t("ch15.maps.caption", lang, step=0) for c in at.caption)

    table = page_dataframes(at)[0].value
    assert table[t("ch15.ablation.col_repeat", lang)].tolist() == [f"{h['ablated']['repeat']:.2f}" for h in run["heads"]]
    other = results["seeds"][1]
    at.radio(key="ch15_seed").set_value(other).run()
    assert errors_of(at) == []
    assert t("ch15.loss.body", lang, **ch15.claims(results, other), seed=other).strip() in markdown_text(at)
    assert page_dataframes(at)[0].value[t("ch15.ablation.col_repeat", lang)].tolist() == [
        f"{h['ablated']['repeat']:.2f}" for h in ch15.find_run(results, other)["heads"]]


def test_chapter_14_links_here():
    at = open_page(pages_index.get("ch14").path, lang="en")
    links = [link for link in at.get("page_link") if link.proto.label == t("ch14.next", "en")]
    assert links and links[0].proto.page == pages_index.get("ch15").url_path


@pytest.mark.slow
def test_the_live_run_trains_in_a_child_and_draws_its_two_losses(monkeypatch):
    """The recipe (shortened) trained on the page's button in the lab's child process: its loss on new and on
    repeated symbols is drawn, as the run's own tests say."""
    import time
    from dataclasses import replace

    monkeypatch.setattr(ch15, "RECIPE", replace(ch15.RECIPE, steps=40, snapshot_every=20, eval_size=32))
    at = open_page(PAGE, lang="zh", timeout=300)
    at.button(key="ch15_train").click().run()
    assert errors_of(at) == [] and at.session_state["ch15_live"] is not None
    deadline = time.monotonic() + 300
    while at.session_state["ch15_live"] is not None:
        assert time.monotonic() < deadline, "the child did not finish"
        at.run()
    assert errors_of(at) == []
    run = at.session_state["ch15_run"]
    assert run["steps_done"] == 40 and [x["step"] for x in run["tests"]] == [0, 20, 40]
    _, frames = charts(at)[t("ch15.live.chart_title", "zh")]
    frame = next(f for f in frames if "loss" in f.columns)
    repeat = frame[frame["part"] == t("ch15.loss.repeat", "zh")]["loss"].tolist()
    assert repeat == [x["part_loss"]["repeat"] for x in run["tests"]]
