"""Chapter 1: from fixed compression to dynamic reading (Seq2Seq, path lengths, gradients)."""

import streamlit as st

from course.app.chart_view import show_chart
from course.app.ui import chapter_footer, labeler, prose, tr
from course.lessons import ch01, ch04
from course.lessons.ch01 import charts as ch01_charts

ARCH_NAMES = {"rnn": "paths.arch_rnn", "cnn": "paths.arch_cnn", "self-attention": "paths.arch_attention"}
MAX_DISTANCE = 64
GRAD_STEPS = 40
MAX_CONE_WIDTH = 128  # wider cones are summarised in words


@st.cache_data(max_entries=64)
def cached_gradients(scale):
    """Measured ||dh_n/dh_i|| of the random RNN for one weight scale (cached)."""
    return ch01.measured_gradients(scale, num_hiddens=16, num_steps=GRAD_STEPS, seed=0)


@st.cache_data(max_entries=256)
def spec(chart, *args):
    """The Vega-Lite spec of a chart from course.lessons.ch01.charts, cached on its plain arguments."""
    return getattr(ch01_charts, chart)(*args).to_dict()


def seq2seq_section():
    """Diagram, chain rule, recurrences, loss and teacher forcing."""
    prose("ch01.seq2seq.heading")
    labels = {name: tr(f"ch01.seq2seq.{name}") for name in ("encoder", "decoder", "context")}
    st.graphviz_chart(ch01.seq2seq_dot(labels))
    st.caption(tr("ch01.seq2seq.diagram_caption"))
    prose(*[f"ch01.seq2seq.{key}" for key in ("chain_rule_text", "chain_rule_formula", "chain_rule_after")])
    prose("ch01.framework.text")
    prose("ch01.seq2seq.encoder_text", "ch01.seq2seq.encoder_formula", "ch01.bidir.text", "ch01.bidir.formula",
          "ch01.bidir.after")
    prose(*[f"ch01.seq2seq.{key}" for key in (
        "context_text", "context_formula", "decoder_text", "decoder_formula", "loss_text", "loss_formula",
        "teacher_text")])
    st.table(ch01.decoder_input_table(
        tr("ch01.seq2seq.training_input"), tr("ch01.seq2seq.generation_input"), tr("ch01.seq2seq.step")))
    st.caption(tr("ch01.seq2seq.teacher_table_caption"))
    st.markdown(tr("ch01.seq2seq.exposure_text"))


def paths_section():
    """Path length slider: RNN vs CNN vs attention, from ex00's reference functions."""
    prose("ch01.paths.heading", "ch01.paths.intro")
    c1, c2, c3 = st.columns(3)
    distance = c1.slider(tr("ch01.paths.distance"), 1, MAX_DISTANCE, 8, key="ch01_distance", persist_state="session")
    kernel = c2.slider(tr("ch01.paths.kernel"), 2, 7, 3, key="ch01_path_kernel", persist_state="session")
    schedule = c3.radio(tr("ch01.paths.dilation"), ("none", "doubling"), key="ch01_path_dilation",
                        persist_state="session", format_func=labeler("ch01.paths.schedule_{}"))
    steps = ch01.path_steps(distance, kernel, schedule == "doubling")
    for col, (arch, value) in zip(st.columns(3), steps.items()):
        col.metric(tr("ch01.paths.steps_metric", arch=tr(f"ch01.{ARCH_NAMES[arch]}")), value)
    texts = {arch: tr(f"ch01.{key}") for arch, key in ARCH_NAMES.items()}
    texts.update(x=tr("ch01.paths.architecture"), y=tr("ch01.paths.y_steps"), distance=tr("ch01.paths.x_distance"))
    left, right = st.columns([1, 2])
    show_chart(left, spec("path_bars", distance, kernel, schedule == "doubling",
                          dict(texts, title=tr("ch01.paths.bar_title"))), width="stretch")
    show_chart(right, spec("path_lines", MAX_DISTANCE, kernel, schedule == "doubling",
                           dict(texts, title=tr("ch01.paths.line_title"))), width="stretch")
    st.markdown(tr("ch01.paths.why"))


def receptive_field_section():
    """Receptive field calculator with the worked case k=3, L=4 -> R=9."""
    prose("ch01.rf.heading", "ch01.rf.intro", "ch01.rf.formula_general", "ch01.rf.worked")
    c1, c2, c3 = st.columns(3)
    kernel = c1.slider(tr("ch01.rf.kernel"), 2, 7, 3, key="ch01_rf_kernel", persist_state="session")
    layers = c2.slider(tr("ch01.rf.layers"), 1, 8, 4, key="ch01_rf_layers", persist_state="session")
    schedule = c3.radio(tr("ch01.rf.schedule"), ch01.SCHEDULES, key="ch01_rf_schedule", persist_state="session",
                        format_func=labeler("ch01.paths.schedule_{}"))
    custom = st.text_input(tr("ch01.rf.custom"), "1, 2, 4, 8", key="ch01_rf_custom", persist_state="session",
                           disabled=schedule != "custom")
    try:
        dilations = ch01.dilation_schedule(schedule, layers, custom)
    except ValueError as err:
        st.error(tr("ch01.rf.bad_custom", error=str(err)))
        return
    field = ch01.receptive_field(kernel, layers, dilations)
    st.latex(tr("ch01.rf.formula_live", k=kernel, dsum=" + ".join(map(str, dilations)), r=field))
    m1, m2 = st.columns(2)
    m1.metric(tr("ch01.rf.metric"), field)
    m2.metric(tr("ch01.rf.metric_plain"), 1 + layers * (kernel - 1))
    per_layer = ch01.receptive_field_layers(kernel, dilations)
    per_layer.columns = [tr("ch01.rf.layer"), tr("ch01.rf.dilation_col"), tr("ch01.rf.field_col")]
    left, right = st.columns([1, 2])
    left.dataframe(per_layer, hide_index=True)
    if field > MAX_CONE_WIDTH:
        right.caption(tr("ch01.rf.cone_too_wide", r=field, limit=MAX_CONE_WIDTH))
        return
    texts = {name: tr(f"ch01.rf.cone_{name}") for name in ("output", "input", "title")}
    texts.update(layer=tr("ch01.rf.cone_layer", layer="{layer}"), position=tr("ch01.rf.position"))
    show_chart(right, spec("cone", kernel, tuple(dilations), texts), width="stretch")


def gradient_section():
    """The bound rho^(n-i) against measured Jacobian norms of a random tanh RNN."""
    prose("ch01.grad.heading", "ch01.grad.intro", "ch01.grad.formula", "ch01.grad.explain")
    c1, c2 = st.columns(2)
    rho = c1.slider(tr("ch01.grad.rho"), 0.5, 1.5, 0.9, 0.05, key="ch01_rho", persist_state="session")
    scale = c2.slider(tr("ch01.grad.scale"), 0.25, 3.0, 0.5, 0.25, key="ch01_scale", persist_state="session")
    measured, w_norm = cached_gradients(scale)
    m1, m2, m3 = st.columns(3)
    m1.metric(tr("ch01.grad.bound_metric", d=GRAD_STEPS), f"{rho ** GRAD_STEPS:.3g}")
    m2.metric(tr("ch01.grad.norm_metric"), f"{w_norm:.3f}")
    m3.metric(tr("ch01.grad.last_metric", d=GRAD_STEPS), f"{measured['norm'].iloc[-1]:.3g}")
    texts = {k: tr(f"ch01.grad.series_{k}") for k in ("bound", "w_bound", "measured")}
    texts.update(title=tr("ch01.grad.chart_title"), x=tr("ch01.grad.x_distance"), y=tr("ch01.grad.y_norm"),
                 series=tr("ch01.grad.series"))
    show_chart(st, spec("gradients", rho, w_norm, tuple(measured["norm"]), texts), width="stretch")
    st.markdown(tr("ch01.grad.observe"))
    st.markdown(tr("ch01.grad_path.text", d=GRAD_STEPS, steps=ch01.path_steps(GRAD_STEPS, 3, False)["rnn"]))


def alignment_section():
    """The word alignment of the chapter 4 example, posed as a problem."""
    prose("ch01.alignment.heading", "ch01.alignment.text")
    table = ch01.alignment_frame(ch04.SOURCE, ch04.TARGETS, ch04.ALIGNMENT)
    st.dataframe(table.rename_axis(tr("ch01.alignment.target")))
    st.caption(tr("ch01.alignment.caption"))


st.title(tr("ch01.title"))
prose("ch01.intro")
# Each experiment is a fragment: moving a widget reruns its own section, not the whole page.
for section in (seq2seq_section, paths_section, receptive_field_section, gradient_section, alignment_section):
    st.fragment(section)()
prose("ch01.bottleneck.heading", "ch01.bottleneck.body")
chapter_footer("ex00")
