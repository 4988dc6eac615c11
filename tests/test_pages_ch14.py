"""Chapter 14's page in AppTest: it runs in both languages; the temperature, top-k and top-p sliders change the
next-character distribution (checked against the filters computed here from the shipped model's logits) and the
sample; the same settings give the same sample; the ablation's figures are the shipped ones; a bad prompt
character is named."""

from dataclasses import replace

import pytest
import torch
from app_helpers import charts, errors_of, markdown_text, open_page

from course.common import pages_index
from course.common.i18n import t
from course.lessons import ch14

pytestmark = pytest.mark.usefixtures("lab_home")

PAGE = pages_index.get("ch14").path


def distribution(at, lang):
    """{series: {character: p}} of the page's distribution chart."""
    _, frames = charts(at)[t("ch14.sampling.chart_title", lang)]
    frame = next(f for f in frames if "p" in f.columns)
    return {s: dict(zip(g["token"], g["p"].round(6))) for s, g in frame.groupby("series")}


def expected_after(prompt, temperature, top_k, top_p):
    """The filtered distribution of the shipped seed-0 model after the prompt, computed here: the softmax by
    hand, then the two filters written as sorting and cutting."""
    results = ch14.load_results()
    model = ch14.load_model(results, 0)
    ids = ch14.encode(prompt, results["tokens"])
    with torch.no_grad():
        logits = model(torch.tensor([ids]))[0, -1].double()  # (V,)
    probs = torch.exp(logits / temperature - torch.logsumexp(logits / temperature, 0))
    order = sorted(range(len(probs)), key=lambda i: -float(probs[i]))
    keep = order[:top_k] if top_k else order
    total = sum(float(probs[i]) for i in keep)
    nucleus, running = [], 0.0
    for i in keep:
        if running >= top_p * total - 1e-12:
            break
        nucleus.append(i)
        running += float(probs[i])
    return {i: float(probs[i]) / running for i in nucleus}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_filters_change_the_distribution_and_the_sample(lang):
    at = open_page(PAGE, lang=lang)
    assert errors_of(at) == [] and at.title[0].value == t("ch14.title", lang)
    text = markdown_text(at)
    results = ch14.load_results()
    assert t("ch14.mask.body", lang, **ch14.claims(results, 0))[:200] in text
    assert t("ch14.sampling.after", lang, **ch14.worked_example())[:300] in text
    series_before, series_after = t("ch14.sampling.before", lang), t("ch14.sampling.after_filters", lang)
    first = distribution(at, lang)
    assert first[series_before] == first[series_after]  # the defaults filter nothing
    sample_before = at.code[0].value

    at.slider(key="ch14_temperature").set_value(1.5).run()
    at.slider(key="ch14_top_k").set_value(10).run()
    at.slider(key="ch14_top_p").set_value(0.6).run()
    assert errors_of(at) == []
    shown = distribution(at, lang)
    assert shown[series_before] == first[series_before]  # the model's own distribution does not move
    want = expected_after(ch14.SAMPLE_PROMPT, 1.5, 10, 0.6)
    tokens = results["tokens"]
    kept = {tok: p for tok, p in shown[series_after].items() if p > 0}
    assert len(kept) == len(want) and len(want) < 10
    assert sorted(kept.values()) == pytest.approx(sorted(want.values()), abs=1e-5)
    assert any(c.value == t("ch14.sampling.kept", lang, kept=len(want), vocab=len(tokens)) for c in at.caption)
    sample_after = at.code[0].value
    assert sample_after != sample_before and sample_after.startswith(ch14.SAMPLE_PROMPT)

    at.number_input(key="ch14_sample_seed").set_value(7).run()
    other = at.code[0].value
    at.number_input(key="ch14_sample_seed").set_value(0).run()
    assert other != sample_after and at.code[0].value == sample_after  # seeded: the same settings, the same text


def test_the_other_seed_and_a_prompt_outside_the_vocabulary():
    at = open_page(PAGE, lang="en")
    before = distribution(at, "en")
    at.radio(key="ch14_seed").set_value(1).run()
    assert errors_of(at) == [] and distribution(at, "en") != before
    at.text_input(key="ch14_prompt").input("Tom 猫").run()
    assert any("'猫'" in e.value for e in at.error)
    at.text_input(key="ch14_prompt").input("").run()  # an empty prompt starts a sentence
    assert errors_of(at) == []


@pytest.mark.slow
def test_the_live_run_trains_in_a_child_stops_on_the_button_and_then_samples(monkeypatch):
    """The recipe trained on the page's button in a child process (the lab's), stopped early; its model then
    becomes an option of the sampler, and its distribution is its own."""
    import time

    monkeypatch.setattr(ch14, "RECIPE", replace(ch14.RECIPE, steps=100_000, snapshot_every=50, eval_size=16))
    at = open_page(PAGE, lang="en", timeout=300)
    shipped = distribution(at, "en")
    at.button(key="ch14_train").click().run()
    assert errors_of(at) == [] and at.session_state["ch14_live"] is not None
    deadline = time.monotonic() + 300
    while not any("step" in p.proto.text and not p.proto.text.startswith("Training: step 0 ")
                  for p in at.get("progress")):
        assert time.monotonic() < deadline, "the child never reported progress"
        at.run()
    at.button(key="ch14_stop").click().run()
    while at.session_state["ch14_live"] is not None:
        assert time.monotonic() < deadline, "the child did not stop"
        at.run()
    assert errors_of(at) == []
    run = at.session_state["ch14_run"]
    assert run["stopped"] and 0 < run["steps_done"] < 100_000 and "state_dict" in run
    assert any(f"Trained {run['steps_done']} steps" in c.value for c in at.caption)
    at.radio(key="ch14_seed").set_value("live").run()
    assert errors_of(at) == [] and distribution(at, "en") != shipped
