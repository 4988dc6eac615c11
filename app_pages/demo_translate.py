"""Demo: translate with every trained model; cross-attention heatmap and a step scrubber."""

import pandas as pd
import streamlit as st

from course.app.chart_view import show_chart
from course.app.trained_ui import training_curves
from course.app.demo_ui import (attention_heatmap, decoding_note, load_models, model_label, note_unknown,
                                available_or_stop, sentence_input, show_missing, translation)
from course.app.ui import labeler, tr
from course.common import charts
from course.translation import demos
from course.translation.models import MODEL_NAMES

KEEP = "session"  # persist_state: widget values survive page switches


def results_table(names, sentence, beam_size):
    """Each available model's Chinese output."""
    return pd.DataFrame({tr("demos.translate.col_model"): [model_label(n) for n in names],
                         tr("demos.translate.col_output"): [translation(n, sentence, beam_size=beam_size).text
                                                           for n in names]})


def about_models(models):
    """Say plainly what these models are and where they fail, with the numbers their checkpoints record."""
    summary = demos.training_summary([m.meta for m in models.values()])
    if summary is None:
        st.info(tr("demos.translate.about_plain"))
    else:
        device = tr(f"demos.translate.device.{summary['device']}", threads=summary["threads"])
        st.info(tr("demos.translate.about", minutes=summary["minutes"], pairs=f"{summary['pairs']:,}",
                   device=device))


@st.cache_data(max_entries=64, show_spinner=False)
def row_bars(words, weights, x_title, y_title):
    """One step's attention row as bars (a dict built once per row: the page reruns on every move)."""
    return charts.position_bar_chart(list(words), list(weights), x_title=x_title, y_title=y_title, height=220).to_dict()


def show_step(result, step):
    """The attention row and the next-character guesses at one decoder step."""
    labels = demos.step_labels(result)
    st.markdown(tr("demos.translate.step_caption", step=step, last=len(labels) - 1, token=labels[step]))
    left, right = st.columns(2)
    row = demos.attention_row(result, step)
    if row is not None:
        left.markdown(f"**{tr('demos.translate.row_title')}**")
        left.dataframe(row[["word", "weight"]].rename(columns={
            "word": tr("demos.translate.col_word"), "weight": tr("demos.translate.col_weight")}).round(4),
            hide_index=True, key="demo_translate_row_table")
        show_chart(left, row_bars(tuple(row["word"]), tuple(row["weight"].round(3)), tr("demos.translate.col_word"),
                                  tr("demos.translate.col_weight")),
                   key="demo_translate_row_chart")  # one bar per position: repeated words are not stacked
    top = demos.top_next_frame(result, step)
    right.markdown(f"**{tr('demos.translate.top_title')}**")
    right.dataframe(top.rename(columns={"token": tr("demos.translate.col_token"),
                                        "probability": tr("demos.translate.col_prob")}).round(4),
                    hide_index=True, key="demo_translate_top_table")


@st.fragment
def scrubber(result):
    """The step slider and that step's attention row and guesses: a fragment, so a move redraws only them."""
    st.header(tr("demos.translate.scrubber_header"))
    last = len(result.top_next) - 1
    step = st.slider(tr("demos.translate.scrubber_label"), 0, max(last, 1), 0, key="demo_translate_step",
                     disabled=last < 1)
    show_step(result, min(step, last))


st.title(tr("demos.translate.title"))
st.markdown(tr("demos.translate.intro"))
names = available_or_stop()
about_models(load_models(names))
sentence = sentence_input("demo_translate_sentence", demos.EXAMPLE_SENTENCES)
if sentence is None:
    st.stop()
method = st.radio(tr("demos.translate.decoding_label"), ("greedy", "beam"), horizontal=True,
                  format_func=labeler("demos.translate.decoding.{}"), key="demo_translate_decoding",
                  persist_state=KEEP)
beam_size = 4 if method == "beam" else 1
st.dataframe(results_table(names, sentence, beam_size), hide_index=True, key="demo_translate_results")
show_missing([n for n in MODEL_NAMES if n not in names])

name = st.radio(tr("demos.translate.inspect_label"), names, index=len(names) - 1,
                format_func=labeler("demos.models.{}"), horizontal=True, key="demo_translate_model",
                persist_state=KEEP)
result = translation(name, sentence, beam_size=beam_size)
st.caption(decoding_note(result))
note_unknown(sentence, result)
frame = demos.cross_attention_frame(result)
st.header(tr("demos.translate.heatmap_header"))
if frame is None:
    st.info(tr("demos.translate.no_attention"))
else:
    show_chart(st, attention_heatmap(frame, tr("demos.translate.heatmap_title"), tr("demos.translate.x_title"),
                                     tr("demos.translate.y_title")), key="demo_translate_heatmap")
    if result.cross_attention_heads is not None:
        st.caption(tr("demos.translate.heads_note"))
scrubber(result)
training_curves(names, "demo_translate")
