"""Training lab: a small Transformer learns copy, reverse, sort or a phrasebook; each ablation beside the baseline."""

import streamlit as st

from course.app import lab_live
from course.app.chart_view import show_chart
from course.app.ui import current_lang, labeler, tr
from course.lessons import lab_views, training_lab
from course.translation import lab_pairs

KEEP = "session"


@st.cache_resource(max_entries=2, show_spinner=False)
def shipped(mtime_ns):
    """The shipped results, checked (one read-only copy per file version: no per-rerun copy of 1 MB of maps)."""
    return training_lab.load_results()


@st.cache_resource(show_spinner=False)
def pairs_slice():
    """The Tatoeba slice (made from ../shared/data at run time, never shipped), or None without the data."""
    try:
        return lab_pairs.load_slice()
    except FileNotFoundError:
        return None


@st.cache_data(max_entries=256, show_spinner=False)
def attention_view(token, task, name, seed, step, kind, layer, head, lang, _run):
    """One head's map chart dict, the snapshot's step and output, cached on plain values (token names the run)."""
    title = tr("lab.maps.title", variant=tr(f"lab.variants.{name}"))
    return lab_views.attention_spec(_run, results["config"], step, kind, layer, head, title, lang, pairs_slice())


@st.cache_data(max_entries=64, show_spinner=False)
def comparison(token, task, names, seed, log_every, lang, _runs):
    """Curve chart dicts of the shown runs, cached on plain values (token names the compared run's version)."""
    labels = [tr(f"lab.variants.{n}") + (tr("lab.live_mark") if token.startswith("live") and n == names[1] != "mine"
                                         else "") for n in names]
    return lab_views.curve_specs(_runs, labels, log_every, lang)


def choose():
    """The task, variant and seed radios."""
    left, mid, right = st.columns((2, 3, 1))
    task = left.radio(tr("lab.task_label"), training_lab.TASKS, format_func=labeler("lab.tasks.{}"),
                      index=training_lab.TASKS.index(training_lab.LabConfig.task), horizontal=True, key="lab_task",
                      persist_state=KEEP)
    variant = mid.selectbox(tr("lab.variant_label"), training_lab.VARIANTS[1:], format_func=labeler("lab.variants.{}"),
                            key="lab_variant", persist_state=KEEP)
    seed = right.radio(tr("lab.seed_label"), results["seeds"], horizontal=True, key="lab_seed", persist_state=KEEP)
    return task, variant, seed


def maps_section(pair, tokens_of_runs, task, seed):
    """Attention maps of baseline and compared run, scrubbed over training steps."""
    st.subheader(tr("lab.maps.header"))
    a, b, c = st.columns(3)
    kind = a.radio(tr("lab.maps.kind_label"), training_lab.ATTENTION_KINDS, format_func=labeler("lab.maps.kinds.{}"),
                   key="lab_kind", persist_state=KEEP)
    layer = b.radio(tr("lab.maps.layer_label"), range(results["config"]["num_layers"]), horizontal=True,
                    format_func=lambda i: str(i + 1), key="lab_layer", persist_state=KEEP)
    head = c.radio(tr("lab.maps.head_label"), range(results["config"]["num_heads"]), horizontal=True,
                   format_func=lambda i: str(i + 1), key="lab_head", persist_state=KEEP)
    step = st.select_slider(tr("lab.maps.step_label"), lab_views.snapshot_steps(pair[0]), key="lab_step",
                            persist_state=KEEP)
    probe = lab_views.probe_ids(results["config"], task, pairs_slice())
    tokens = (pairs_slice() or {}).get("tokens") if task == training_lab.PAIRS_TASK else None
    for col, run, token, name in zip(st.columns(2), pair, tokens_of_runs, ("baseline", pair[1]["variant"])):
        spec, shown, output = attention_view(token, task, name, seed, step, kind, layer, head, current_lang(), run)
        show_chart(col, spec, width="stretch")
        if probe is None:
            col.caption(tr("lab.maps.no_data", step=shown))
        else:
            col.caption(tr("lab.maps.output", step=shown, output=" ".join(lab_views.token_text(output, tokens)),
                           target=" ".join(lab_views.token_text(probe[1], tokens))))


st.title(tr("lab.title"))
st.markdown(tr("lab.intro"))
mtime = training_lab.RESULTS.stat().st_mtime_ns
results = shipped(mtime)
task, variant, seed = choose()
live_run = st.session_state.get("lab_runs", {}).get((task, variant, seed))
mine = st.session_state.get("lab_runs", {}).get((task, "mine", seed))
pair = (training_lab.find_run(results, task, "baseline", seed),
        live_run or training_lab.find_run(results, task, variant, seed))
token = f"live:{live_run['seconds']}:{live_run['steps_done']}" if live_run else f"shipped:{mtime}"
shown = [(name, run) for name, run in zip(("baseline", variant, "mine"), (*pair, mine)) if run is not None]
curve_token = token + (f"|mine:{mine['seconds']}:{mine['steps_done']}" if mine else "")
st.markdown(lab_views.reading(results, task, variant, current_lang()) if None not in pair else tr("lab.not_shipped"))
if shown:
    names, runs = zip(*shown)
    specs = comparison(curve_token, task, names, seed, results["config"]["log_every"], current_lang(), runs)
    for col, spec in zip(st.columns(2), specs):
        show_chart(col, spec, width="stretch")
for run, name in ((live_run, variant), (mine, "mine")):
    if run:
        st.caption(tr("lab.live_caption", variant=tr(f"lab.variants.{name}"), steps=run["steps_done"],
                      seconds=run["seconds"], acc=f"{100 * run['final_seq_acc']:.0f}%"))
if None not in pair and pair[0]["snapshots"] and pair[1]["snapshots"]:
    st.fragment(maps_section)(pair, (f"shipped:{mtime}", token), task, seed)  # a move redraws the maps only
elif None not in pair:
    st.info(tr("lab.maps.no_maps", seed=seed))
st.subheader(tr("lab.live_header"))
st.markdown(tr("lab.live_body"))
lab_live.live_section(task, variant, seed)
