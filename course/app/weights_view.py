"""A failing attention exercise's weights beside the expected ones (the report's `weights` field, grader/weight_diff.py).

Pure builders (a sentence, two tables, one Vega-Lite chart) and `show_weights_diff`, which the Practice
page calls: two heatmaps side by side in a colour-blind-safe scheme with every value printed in its cell,
the worst (query, key) cell outlined and named in words, and the same numbers as tables for a screen
reader or a keyboard. The diff is data from the grader's report: only the failing example, no code.
"""

import math

import altair as alt
import pandas as pd
import streamlit as st

from course.app.chart_view import show_chart
from course.common.charts import cell_label_colours
from course.common.i18n import t, t_pair
from course.common.json_numbers import number, number_text
from course.common.result_names import result_name

SCHEME = "viridis"  # perceptually uniform and readable with the common colour-vision deficiencies
CELL = 34  # pixels per cell


def worst_sentence(diff, lang):
    """The one sentence that names the failing example and its worst cell, in `lang`."""
    q, k = diff["worst"]
    example = ", ".join(str(i) for i in diff["example"]) or "0"
    return t("practice.weights_worst", lang, result=t_pair(diff.get("name"), lang, result_name(diff["result"], lang)),
             example=example, q=q, k=k,
             expected=number_text(diff["expected_value"]), got=number_text(diff["got_value"]))


def diff_frames(diff, lang):
    """(expected, got) as DataFrames whose rows are queries and columns keys, labelled with their full-matrix
    indices."""
    q_word, k_word = t("practice.weights_query", lang), t("practice.weights_key", lang)

    def frame(rows):
        index = [f"{q_word} {i + diff['rows_from']}" for i in range(len(rows))]
        columns = [f"{k_word} {j + diff['cols_from']}" for j in range(len(rows[0]) if rows else 0)]
        values = [[number(value) for value in row] for row in rows]  # NaN and inf as floats, whatever their form
        return pd.DataFrame(values, index=index, columns=columns, dtype=float)

    return frame(diff["expected"]), frame(diff["got"])


def _panel(rows, diff, title, lang):
    """One heatmap with values in its cells and the worst cell outlined."""
    q, k = diff["worst"]
    cells = [{"query": i + diff["rows_from"], "key": j + diff["cols_from"], "weight": number(v),
              "label": number_text(v, ".2f")} for i, row in enumerate(rows) for j, v in enumerate(row)]
    frame = pd.DataFrame(cells)
    frame.loc[~frame["weight"].map(math.isfinite), "weight"] = None  # NaN and inf: no colour; the label says it
    frame["label_colour"] = cell_label_colours(frame["weight"].fillna(0).to_numpy(), SCHEME, [0, 1])
    frame["worst"] = (frame["query"] == q) & (frame["key"] == k)
    base = alt.Chart(frame).encode(
        x=alt.X("key:O", title=t("practice.weights_key", lang), axis=alt.Axis(labelAngle=0)),
        y=alt.Y("query:O", title=t("practice.weights_query", lang)))
    heat = base.mark_rect().encode(
        color=alt.Color("weight:Q", scale=alt.Scale(scheme=SCHEME, domain=[0, 1]), title=None),
        tooltip=["query:O", "key:O", alt.Tooltip("label:N", title="weight")])
    text = base.mark_text(fontSize=11).encode(
        text=alt.Text("label:N"),  # "NaN" and "inf" said, not drawn as 0
        color=alt.condition(alt.datum.label_colour == "white", alt.value("white"), alt.value("black")))
    outline = base.transform_filter(alt.datum.worst).mark_rect(filled=False, stroke="#d62728", strokeWidth=3)
    width, height = CELL * max(len(rows[0]), 1), CELL * max(len(rows), 1)
    return (heat + text + outline).properties(title=title, width=width, height=height)


def diff_chart(diff, lang):
    """The expected and the learner's weights side by side, one colour scale: a Vega-Lite dict."""
    left = _panel(diff["expected"], diff, t("practice.weights_expected", lang), lang)
    right = _panel(diff["got"], diff, t("practice.weights_got", lang), lang)
    return alt.hconcat(left, right).resolve_scale(color="shared").to_dict()


def show_weights_diff(where, diff, lang, key):
    """Draw the diff in `where`: the sentence, the two heatmaps, the tables in an expander."""
    where.markdown(worst_sentence(diff, lang))
    show_chart(where, diff_chart(diff, lang), key=key, describe=False)  # its own sentence and tables
    with where.expander(t("practice.weights_table", lang)):
        expected, got = diff_frames(diff, lang)
        st.caption(t("practice.weights_expected", lang))
        st.dataframe(expected.style.format(lambda value: number_text(value, ".4f")), key=f"{key}_expected")
        st.caption(t("practice.weights_got", lang))
        st.dataframe(got.style.format(lambda value: number_text(value, ".4f")), key=f"{key}_got")
