"""Chapter 4's added sections (alignment heatmap, convex context, additive shapes, decoder comparison).

Streamlit widgets and layout only; the numbers come from course.lessons.ch04.tables.
"""

import math

import pandas as pd
import pyarrow as pa
import streamlit as st

from course.app.chart_view import show_chart
from course.app.ui import current_lang, tr
from course.common.arrow import arrow_table
from course.common.i18n import t
from course.lessons import ch04
from course.lessons.ch04 import tables as ch04_tables
from course.translation import decoder_compare

KEEP = "session"  # persist_state: widget values survive page switches


@st.cache_data(max_entries=64, show_spinner=False)
def alignment_display(lang, target, scores):
    """One target word's edited scores as the page shows them: (the top word and its weight, the table (Arrow),
    the weights), or None when a score is unusable (ch04.BadInput). Cached on plain values: the page reruns
    on every move of any widget on it."""
    try:
        table = ch04.alignment_table(list(scores))
    except ch04.BadInput:
        return None
    top = table["alpha"].idxmax()
    shown = table.rename(columns={"word": t("ch04.col_word", lang), "alpha": "α"}).round(3)
    return (table["word"][top], float(table["alpha"][top])), arrow_table(shown), tuple(table["alpha"].round(3))


@st.cache_data(max_entries=64, show_spinner=False)
def worked_display(lang, s, hs, W_s, W_h, v):
    """The worked step of one set of edited inputs: {"error": the BadInput's name} when one is unusable, else
    the step's numbers (e, alpha, c, p as a table (Arrow) and as floats), the loss and the two gradient paths
    (Arrow)."""
    inputs = ([*s], [[*h] for h in hs], [[*r] for r in W_s], [[*r] for r in W_h], [*v])
    try:
        step = ch04.bahdanau_step(*inputs)
        grads = ch04.gradient_paths(*inputs, target=1)
    except ch04.BadInput as err:
        return {"error": err.name}
    result = pd.DataFrame({k: step[k].numpy().round(3) for k in ("e", "alpha", "c", "p")}, index=["1", "2"]).T
    paths = pd.DataFrame({
        t("ch04.col_value_path", lang): [", ".join(f"{x:+.4f}" for x in g.tolist()) for g in grads["value"]],
        t("ch04.col_score_path", lang): [", ".join(f"{x:+.4f}" for x in g.tolist()) for g in grads["score"]],
    }, index=["h1", "h2"])
    return {"error": None, "table": pa.Table.from_pandas(result.rename(index={"alpha": "α"})),
            "numbers": {k: [float(x) for x in step[k]] for k in ("e", "alpha", "c", "p")},
            "loss": float(grads["loss"]), "paths": pa.Table.from_pandas(paths)}


@st.cache_data(max_entries=4, show_spinner=False)
def step_shapes_display(lang):
    """The shape table of one decoder step of the reference (Arrow), in `lang`."""
    return arrow_table(pd.DataFrame([(t(f"ch04.step_{s}", lang), t(f"ch04.tensor.{name}", lang), str(shape))
                                     for s, name, shape in ch04.step_shapes()],
                                    columns=[t("ch04.col_step", lang), t("ch04.col_tensor", lang),
                                             t("ch04.col_shape", lang)]))


@st.cache_data(max_entries=64)
def heatmap_view(lang, scores):
    """(heatmap dict, 'target → top source' text) for a tuple of per-target score tuples."""
    matrix = ch04_tables.alignment_matrix(dict(zip(ch04.TARGETS, scores))).round(3)
    spec = ch04_tables.alignment_heatmap_spec(matrix, t("ch04.col_word", lang), t("ch04.target_label", lang))
    tops = ", ".join(f"{w} → {matrix.loc[w].idxmax().split(' ', 1)[1]}" for w in matrix.index)
    return spec, tops


@st.cache_data(max_entries=64)
def convex_display(lang, alpha, values):
    """Metrics, the coordinate table (Arrow), the verdict key and the 2-D chart dict of one step."""
    view = ch04_tables.convex_view(alpha, values)
    table = view["table"].round(3).rename(columns={
        "min_i v_i": t("ch04.convex.col_min", lang), "max_i v_i": t("ch04.convex.col_max", lang),
        "v_top": t("ch04.convex.col_top", lang)})
    points = ch04_tables.convex_points(alpha, values, ["h1", "h2"])
    points["kind"] = points["kind"].map({"value": t("ch04.convex.kind_value", lang),
                                         "context": t("ch04.convex.kind_context", lang)})
    return {
        "weight_sum": view["weight_sum"], "min_weight": view["min_weight"], "distance": view["distance_to_top"],
        "top": f"h{max(range(len(alpha)), key=lambda i: alpha[i]) + 1}",
        "table": arrow_table(table, t("ch04.convex.coordinate", lang)),
        "verdict": "ch04.convex.inside_yes" if view["inside"] else "ch04.convex.inside_no",
        "spec": ch04_tables.convex_spec(points, t("ch04.convex.chart_title", lang)),
    }


@st.cache_data(max_entries=256)
def shapes_table(lang, d_s, d_h, d_a):
    """The additive-scoring shape table (Arrow) for three sizes."""
    rows = [(name, str(shape)) for name, shape in ch04_tables.additive_shapes(d_s, d_h, d_a)]
    return arrow_table(pd.DataFrame(rows, columns=[t("ch04.col_tensor", lang), t("ch04.col_shape", lang)]))


@st.cache_data(max_entries=4)
def compare_view(lang):
    """(comparison table as Arrow, the sizes) of the fixed-context and Bahdanau decoders."""
    m = decoder_compare.decoder_comparison()
    f, b = m["fixed"], m["bahdanau"]
    text = lambda key, **fields: t(f"ch04.compare.{key}", lang, **fields)  # noqa: E731
    rows = [
        ("row_context", text("fixed_context"), text("bahdanau_context")),
        ("row_kept", str(f["kept"]), str(b["kept"])),
        ("row_distinct", str(f["distinct_contexts"]), str(b["distinct_contexts"])),
        ("row_params", str(f["parameters"]),
         text("params_extra", count=b["parameters"], extra=m["attention_parameters"])),
        ("row_path", text("fixed_path"), text("bahdanau_path")),
        ("row_cost", text("fixed_cost"), text("bahdanau_cost")),
        ("row_alignment", text("fixed_alignment"), text("bahdanau_alignment")),
    ]
    frame = pd.DataFrame([(text(key, steps=m["sizes"]["steps"]), x, y) for key, x, y in rows],
                         columns=[text("col_aspect"), text("col_fixed"), text("col_bahdanau")])
    return arrow_table(frame), m["sizes"]


def edited_scores():
    """Every target word's scores as the learner left them (originals where an edit is unusable)."""
    result = []
    for i, target in enumerate(ch04.TARGETS):
        edited = st.session_state.get(f"ch04_scores_{i}_data")
        try:
            scores = tuple(float(x) for x in edited["e"])
        except (TypeError, ValueError):  # not edited yet, or an unreadable cell
            scores = ()
        usable = len(scores) == len(ch04.SOURCE) and all(math.isfinite(x) for x in scores)
        result.append(scores if usable else ch04.SCORES[target])
    return tuple(result)


def heatmap_section():
    """The alignment matrix of the whole sentence: rows target words, columns source words."""
    st.subheader(tr("ch04.heatmap.header"))
    st.markdown(tr("ch04.heatmap.body"))
    spec, tops = heatmap_view(current_lang(), edited_scores())
    show_chart(st, spec)
    st.caption(tr("ch04.heatmap.caption", tops=tops))


def convex_section(alpha, values):
    """The context as a convex combination of the values, with numbers from the worked step."""
    st.subheader(tr("ch04.convex.header"))
    st.markdown(tr("ch04.convex.body"))
    view = convex_display(current_lang(), alpha, values)
    m1, m2, m3 = st.columns(3)
    m1.metric(tr("ch04.convex.weight_sum"), f"{view['weight_sum']:.3f}")
    m2.metric(tr("ch04.convex.min_weight"), f"{view['min_weight']:.3f}")
    m3.metric(tr("ch04.convex.distance", top=view["top"]), f"{view['distance']:.3f}")
    left, right = st.columns(2)
    left.table(view["table"], hide_index=True)  # a table wraps its long headers; a dataframe cut them off
    left.markdown(tr(view["verdict"]))
    show_chart(right, view["spec"])


def shapes_section():
    """Shapes of additive scoring with d_s, d_h, d_a chosen by the learner."""
    st.subheader(tr("ch04.shapes.header"))
    st.markdown(tr("ch04.shapes.body"))
    c1, c2, c3 = st.columns(3)
    d_s = c1.slider(tr("ch04.shapes.ds_label"), 1, 32, 6, key="ch04_ds", persist_state=KEEP)
    d_h = c2.slider(tr("ch04.shapes.dh_label"), 1, 32, 10, key="ch04_dh", persist_state=KEEP)
    d_a = c3.slider(tr("ch04.shapes.da_label"), 1, 32, 4, key="ch04_da", persist_state=KEEP)
    st.table(shapes_table(current_lang(), d_s, d_h, d_a), hide_index=True)
    st.caption(tr("ch04.shapes.params", count=d_a * d_s + d_a * d_h + d_a))


def compare_section():
    """Fixed-context decoder against the Bahdanau decoder, measured rows from the reference modules."""
    st.subheader(tr("ch04.compare.header"))
    table, sizes = compare_view(current_lang())
    st.markdown(tr("ch04.compare.body", **sizes))
    st.table(table, hide_index=True)
