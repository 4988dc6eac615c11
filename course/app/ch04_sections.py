"""Chapter 4's added sections (alignment heatmap, convex context, additive shapes, decoder comparison).

Streamlit widgets and layout only; the numbers come from course.lessons.ch04_tables.
"""

import pandas as pd
import streamlit as st

from course.app.ui import tr
from course.lessons import ch04, ch04_tables
from course.translation import decoder_compare

KEEP = "session"  # persist_state: widget values survive page switches

heatmap_spec = st.cache_data(max_entries=64)(ch04_tables.alignment_heatmap_spec)
additive_shapes = st.cache_data(max_entries=256)(ch04_tables.additive_shapes)
decoder_comparison = st.cache_data(decoder_compare.decoder_comparison)
convex_spec = st.cache_data(max_entries=64)(ch04_tables.convex_spec)


def edited_scores():
    """Every target word's scores as the learner left them (originals where an edit is unusable)."""
    result = {}
    for i, target in enumerate(ch04.TARGETS):
        edited = st.session_state.get(f"ch04_scores_{i}_data")
        try:
            ch04.alignment_table(edited["e"].tolist())
            result[target] = tuple(float(x) for x in edited["e"])
        except (TypeError, ch04.BadInput):  # not edited yet, or an empty cell
            result[target] = ch04.SCORES[target]
    return result


def heatmap_section():
    """The alignment matrix of the whole sentence: rows target words, columns source words."""
    st.subheader(tr("ch04.heatmap.header"))
    st.markdown(tr("ch04.heatmap.body"))
    matrix = ch04_tables.alignment_matrix(edited_scores()).round(3)
    st.vega_lite_chart(heatmap_spec(matrix, tr("ch04.col_word"), tr("ch04.target_label")))
    tops = ", ".join(f"{t} → {matrix.loc[t].idxmax().split(' ', 1)[1]}" for t in matrix.index)
    st.caption(tr("ch04.heatmap.caption", tops=tops))


def convex_section(alpha, values):
    """The context as a convex combination of the values, with numbers from the worked step."""
    st.subheader(tr("ch04.convex.header"))
    st.markdown(tr("ch04.convex.body"))
    view = ch04_tables.convex_view(alpha, values)
    top = f"h{int(pd.Series(alpha).idxmax()) + 1}"
    m1, m2, m3 = st.columns(3)
    m1.metric(tr("ch04.convex.weight_sum"), f"{view['weight_sum']:.3f}")
    m2.metric(tr("ch04.convex.min_weight"), f"{view['min_weight']:.3f}")
    m3.metric(tr("ch04.convex.distance", top=top), f"{view['distance_to_top']:.3f}")
    left, right = st.columns(2)
    left.dataframe(view["table"].round(3).rename_axis(tr("ch04.convex.coordinate")).rename(columns={
        "min_i v_i": tr("ch04.convex.col_min"), "max_i v_i": tr("ch04.convex.col_max"),
        "v_top": tr("ch04.convex.col_top")}))
    left.markdown(tr("ch04.convex.inside_yes" if view["inside"] else "ch04.convex.inside_no"))
    points = ch04_tables.convex_points(alpha, values, ["h1", "h2"])
    points["kind"] = points["kind"].map({"value": tr("ch04.convex.kind_value"), "context": tr("ch04.convex.kind_context")})
    right.vega_lite_chart(convex_spec(points, tr("ch04.convex.chart_title")))


def shapes_section():
    """Shapes of additive scoring with d_s, d_h, d_a chosen by the learner."""
    st.subheader(tr("ch04.shapes.header"))
    st.markdown(tr("ch04.shapes.body"))
    c1, c2, c3 = st.columns(3)
    d_s = c1.slider(tr("ch04.shapes.ds_label"), 1, 32, 6, key="ch04_ds", persist_state=KEEP)
    d_h = c2.slider(tr("ch04.shapes.dh_label"), 1, 32, 10, key="ch04_dh", persist_state=KEEP)
    d_a = c3.slider(tr("ch04.shapes.da_label"), 1, 32, 4, key="ch04_da", persist_state=KEEP)
    st.table(pd.DataFrame([(name, str(shape)) for name, shape in additive_shapes(d_s, d_h, d_a)],
                          columns=[tr("ch04.col_tensor"), tr("ch04.col_shape")]))
    st.caption(tr("ch04.shapes.params", count=d_a * d_s + d_a * d_h + d_a))


def compare_section():
    """Fixed-context decoder against the Bahdanau decoder, measured rows from the reference modules."""
    st.subheader(tr("ch04.compare.header"))
    m = decoder_comparison()
    st.markdown(tr("ch04.compare.body", **m["sizes"]))
    f, b = m["fixed"], m["bahdanau"]
    rows = [
        ("row_context", tr("ch04.compare.fixed_context"), tr("ch04.compare.bahdanau_context")),
        ("row_kept", str(f["kept"]), str(b["kept"])),
        ("row_distinct", str(f["distinct_contexts"]), str(b["distinct_contexts"])),
        ("row_params", str(f["parameters"]),
         tr("ch04.compare.params_extra", count=b["parameters"], extra=m["attention_parameters"])),
        ("row_path", tr("ch04.compare.fixed_path"), tr("ch04.compare.bahdanau_path")),
        ("row_cost", tr("ch04.compare.fixed_cost"), tr("ch04.compare.bahdanau_cost")),
        ("row_alignment", tr("ch04.compare.fixed_alignment"), tr("ch04.compare.bahdanau_alignment")),
    ]
    st.table(pd.DataFrame([(tr(f"ch04.compare.{key}", steps=m["sizes"]["steps"]), x, y) for key, x, y in rows],
                          columns=[tr("ch04.compare.col_aspect"), tr("ch04.compare.col_fixed"),
                                   tr("ch04.compare.col_bahdanau")]))
