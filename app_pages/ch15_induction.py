"""Chapter 15: induction heads: a two-layer attention-only model learns to continue repeated patterns."""

from dataclasses import replace

import pandas as pd
import streamlit as st

from course.app import decoder_live
from course.app.chart_view import show_chart
from course.app.ui import chapter_footer, tr
from course.lessons import ch15
from course.lessons.lab_tasks import MIN_PERIOD

KEEP = "session"  # persist_state: widget values survive page switches


@st.cache_resource(max_entries=2, show_spinner=False)
def shipped(mtime_ns):
    """The shipped results, checked (one read-only copy per file version)."""
    return ch15.load_results()


@st.cache_data(max_entries=64, show_spinner=False)
def map_view(token, seed, step, layer, head, title, x_title, y_title, _run, _probe):
    """One head's map of the probe at a snapshot: (chart dict, step shown), cached on plain values."""
    return ch15.map_chart(_run, step, layer, head, _probe, title, x_title, y_title)


def loss_section(results, run, seed):
    """The test loss on new and on repeated symbols over training, and what it shows."""
    st.header(tr("ch15.loss.heading"))
    labels = {part: tr(f"ch15.loss.{part}") for part in ch15.PARTS}
    show_chart(st, ch15.part_loss_chart(run, labels, tr("ch15.loss.chart_title", seed=seed), tr("ch15.loss.x"),
                                        tr("ch15.loss.y")), width="stretch")
    st.markdown(tr("ch15.loss.body", **ch15.claims(results, seed), seed=seed))


def maps_section(results, run, seed, token):
    """The previous-token head and the induction head on the probe, scrubbed over training."""
    st.header(tr("ch15.maps.heading"))
    st.markdown(tr("ch15.maps.body", period=results["probe_period"]))
    steps = [s["step"] for s in run["snapshots"]]
    step = st.select_slider(tr("ch15.maps.step"), steps, value=steps[-1], key="ch15_step", persist_state=KEEP)
    for col, entry, role in zip(st.columns(2), ch15.roles(run), ("previous", "induction")):
        title = tr(f"ch15.maps.{role}_title", layer=entry["layer"] + 1, head=entry["head"] + 1)
        spec, shown = map_view(token, seed, step, entry["layer"], entry["head"], title, tr("ch15.maps.x"),
                               tr("ch15.maps.y"), run, results["probe"])
        show_chart(col, spec, width="content")
        col.caption(tr("ch15.maps.caption", step=shown))


def ablation_section(results, run, seed):
    """Each head's scores and the loss with it masked."""
    st.header(tr("ch15.ablation.heading"))
    st.markdown(tr("ch15.ablation.body"))
    st.dataframe(pd.DataFrame({
        tr("ch15.ablation.col_head"): [tr("ch15.ablation.head", layer=h["layer"] + 1, head=h["head"] + 1)
                                       for h in run["heads"]],
        tr("ch15.ablation.col_previous"): [f"{100 * h['previous']:.0f}%" for h in run["heads"]],
        tr("ch15.ablation.col_induction"): [f"{100 * h['induction']:.0f}%" for h in run["heads"]],
        tr("ch15.ablation.col_repeat"): [f"{h['ablated']['repeat']:.2f}" for h in run["heads"]],
        tr("ch15.ablation.col_first"): [f"{h['ablated']['first']:.2f}" for h in run["heads"]],
    }), hide_index=True)
    st.markdown(tr("ch15.ablation.after", **ch15.claims(results, seed)))


def live_section(results):
    """Train the recipe here, in a child process (the lab's), and draw its two losses."""
    st.header(tr("ch15.live.heading"))
    st.markdown(tr("ch15.live.body", seconds=ch15.find_run(results, 0)["seconds"]))
    decoder_live.live_section("ch15", replace(ch15.RECIPE, seed=0))
    run = st.session_state.get("ch15_run")
    if run:
        labels = {part: tr(f"ch15.loss.{part}") for part in ch15.PARTS}
        show_chart(st, ch15.part_loss_chart(run, labels, tr("ch15.live.chart_title"), tr("ch15.loss.x"),
                                            tr("ch15.loss.y")), width="stretch")
        last = run["tests"][-1]["part_loss"]
        st.caption(tr("ch15.live.done", steps=run["steps_done"], seconds=run["seconds"],
                      first=f"{last['first']:.2f}", repeat=f"{last['repeat']:.2f}"))


st.title(tr("ch15.title"))
st.markdown(tr("ch15.intro"))
results = shipped(ch15.RESULTS.stat().st_mtime_ns)
config = results["config"]
st.markdown(tr("ch15.task", vocab=config["vocab_size"], length=config["seq_len"], shortest=MIN_PERIOD,
               longest=config["seq_len"] // 2, dim=config["num_hiddens"], heads=config["num_heads"],
               parameters=ch15.find_run(results, results["seeds"][0])["parameters"], steps=config["steps"]))
seed = st.radio(tr("ch15.seed"), results["seeds"], horizontal=True, key="ch15_seed", persist_state=KEEP)
run = ch15.find_run(results, seed)
loss_section(results, run, seed)
# A fragment: moving the step slider redraws the two maps, not the whole page.
st.fragment(maps_section)(results, run, seed, f"shipped:{ch15.RESULTS.stat().st_mtime_ns}")
ablation_section(results, run, seed)
live_section(results)
chapter_footer()
