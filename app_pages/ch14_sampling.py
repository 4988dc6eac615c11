"""Chapter 14: a decoder-only model that samples: temperature, top-k and top-p, and the causal mask's ablation."""

from dataclasses import replace

import streamlit as st

from course.app import decoder_live
from course.app.chart_view import show_chart
from course.app.ui import chapter_footer, next_chapter, page_cache, prose, tr
from course.lessons import ch14
from course.translation import char_corpus

KEEP = "session"  # persist_state: widget values survive page switches
LIVE = "live"  # the model option of a run trained on this page


@st.cache_resource(max_entries=2, show_spinner=False)
def shipped(mtime_ns):
    """The shipped results, checked, and the causal model of each seed (one read-only copy per file version)."""
    results = ch14.load_results()
    return results, {seed: ch14.load_model(results, seed) for seed in results["seeds"]}


@st.cache_data(max_entries=256, show_spinner=False)
def sampled(token, prompt, temperature, top_k, top_p, seed, _model, context, _tokens):
    """The sample's text, cached on plain values (token names the model)."""
    ids = ch14.sample(_model, ch14.encode(prompt, _tokens), ch14.SAMPLE_LENGTH, context, temperature, top_k, top_p,
                      seed)
    return ch14.decode(ids, _tokens)


@st.cache_data(max_entries=64, show_spinner=False)
def next_logits(token, ids, _model):
    """The model's logits (V,) of the character after `ids`, once per model (token) and prompt."""
    return ch14.next_logits(_model, list(ids), ch14.RECIPE.seq_len)


distribution_chart = page_cache(ch14.distribution_chart, max_entries=256, show_spinner=False)


def choose_model(results, models):
    """The seed radio (and this page's own run once trained) -> (token, model)."""
    live = st.session_state.get("ch14_run")
    options = [*results["seeds"], *([LIVE] if live else [])]
    names = {o: tr("ch14.model.live") if o == LIVE else tr("ch14.model.seed", seed=o) for o in options}
    choice = st.radio(tr("ch14.model.label"), options, horizontal=True, key="ch14_seed", persist_state=KEEP,
                      format_func=names.get)
    if choice == LIVE:
        model = ch14.build_model(ch14.RECIPE, len(results["tokens"]), live["state_dict"])
        return f"live:{live['seconds']}:{live['steps_done']}", model
    return f"seed:{choice}", models[choice]


def sampling_section(results, models):
    """The prompt, the three filters, the next character's distribution before and after them, and a sample."""
    prose("ch14.sampling.heading", "ch14.sampling.body", "ch14.sampling.formula")
    st.markdown(tr("ch14.sampling.after", **ch14.worked_example()))
    token, model = choose_model(results, models)
    tokens = results["tokens"]
    prompt = st.text_input(tr("ch14.sampling.prompt"), ch14.SAMPLE_PROMPT, max_chars=200, key="ch14_prompt",
                           persist_state=KEEP)
    a, b, c, d = st.columns(4)
    temperature = a.slider(tr("ch14.sampling.temperature"), 0.1, 2.0, 1.0, 0.1, key="ch14_temperature",
                           persist_state=KEEP)
    top_k = b.slider(tr("ch14.sampling.top_k"), 0, len(tokens), 0, key="ch14_top_k", persist_state=KEEP)
    top_p = c.slider(tr("ch14.sampling.top_p"), 0.05, 1.0, 1.0, 0.05, key="ch14_top_p", persist_state=KEEP)
    seed = d.number_input(tr("ch14.sampling.seed"), 0, 9999, 0, key="ch14_sample_seed", persist_state=KEEP)
    try:
        ids = ch14.encode(prompt, tokens) or ch14.encode("\n", tokens)  # an empty prompt starts a sentence
    except ValueError as err:
        st.error(tr("ch14.sampling.bad_char", error=str(err)))
        return
    logits = next_logits(token, tuple(ids), model)  # (V,)
    labels = (tr("ch14.sampling.before"), tr("ch14.sampling.after_filters"))
    frame = ch14.distribution_frame(logits, tokens, temperature, top_k, top_p, labels)
    show_chart(st, distribution_chart(frame, tr("ch14.sampling.chart_title"), tr("ch14.sampling.x"),
                                      tr("ch14.sampling.y")), width="stretch")
    kept = int((ch14.next_distribution(logits, temperature, top_k, top_p) > 0).sum())
    st.caption(tr("ch14.sampling.kept", kept=kept, vocab=len(tokens)))
    st.code(sampled(token, prompt or "\n", temperature, top_k, top_p, int(seed), model, ch14.RECIPE.seq_len,
                    tokens), language=None, wrap_lines=True)


def mask_section(results):
    """The ablation: both variants' training loss and their shipped samples, with the text's figures."""
    st.header(tr("ch14.mask.heading"))
    seed = results["seeds"][0]
    st.markdown(tr("ch14.mask.body", **ch14.claims(results, seed)))
    labels = {v: tr(f"ch14.mask.{v}") for v in ch14.VARIANTS}
    show_chart(st, ch14.loss_chart(results, seed, labels, tr("ch14.mask.chart_title", seed=seed),
                                   tr("ch14.mask.x"), tr("ch14.mask.y")), width="stretch")
    for col, variant in zip(st.columns(2), ch14.VARIANTS):
        col.markdown(f"**{labels[variant]}**")
        col.code(ch14.find_run(results, variant, seed)["sample"], language=None, wrap_lines=True)
    other = results["seeds"][-1]
    st.markdown(tr("ch14.mask.other_seed", **ch14.claims(results, other), seed=other))


def live_section(results):
    """Train the recipe here, in a child process (the lab's)."""
    st.header(tr("ch14.live.heading"))
    st.markdown(tr("ch14.live.body", seconds=ch14.find_run(results, "causal", 0)["seconds"]))
    decoder_live.live_section("ch14", replace(ch14.RECIPE, seed=0))
    run = st.session_state.get("ch14_run")
    if run:
        st.caption(tr("ch14.live.done", steps=run["steps_done"], seconds=run["seconds"],
                      loss=f"{run['final_loss']:.2f}" if run["final_loss"] is not None else "–"))


st.title(tr("ch14.title"))
st.markdown(tr("ch14.intro"))
results, models = shipped(ch14.RESULTS.stat().st_mtime_ns)
config = results["config"]
st.markdown(tr("ch14.model.body", parameters=ch14.find_run(results, "causal", results["seeds"][0])["parameters"],
               vocab=len(results["tokens"]), context=config["seq_len"], steps=config["steps"],
               layers=config["num_layers"], heads=config["num_heads"], test_every=char_corpus.TEST_EVERY))
sampling_section(results, models)
mask_section(results)
live_section(results)
chapter_footer()
next_chapter("ch14", "ch15")
