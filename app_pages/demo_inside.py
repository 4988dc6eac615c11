"""Demo: inside the trained Transformer: every layer's and head's attention, three kinds."""

import pandas as pd
import streamlit as st

from course.app.chart_view import show_chart
from course.app.trained_ui import training_curves
from course.app.demo_ui import attention_heatmap, note_unknown, sentence_input, show_missing, translation
from course.app.ui import labeler, tr
from course.translation import demos

KEEP = "session"
KINDS = ("encoder", "decoder", "cross")

st.title(tr("demos.inside.title"))
st.markdown(tr("demos.inside.intro"))
if "transformer" not in demos.available_models():
    st.info(tr("demos.inside.no_transformer"))
    show_missing(["transformer"])
    st.stop()
sentence = sentence_input("demo_inside_sentence")
if sentence is None:
    st.stop()
result = translation("transformer", sentence)
st.markdown(f"**{result.text}**")
note_unknown(sentence, result)

layers, heads = result.cross_attention_heads.shape[:2]
kind = st.radio(tr("demos.inside.kind_label"), KINDS, format_func=labeler("demos.inside.kinds.{}"),
                horizontal=True, key="demo_inside_kind", persist_state=KEEP)
left, right = st.columns(2)
layer = left.selectbox(tr("demos.inside.layer_label"), range(1, layers + 1), key="demo_inside_layer")
head = right.selectbox(tr("demos.inside.head_label"), range(1, heads + 1), key="demo_inside_head")
values, rows, cols = demos.head_matrix(result, kind, layer - 1, head - 1)
frame = pd.DataFrame(values, index=rows, columns=cols)
title = tr("demos.inside.heatmap_title", kind=tr(f"demos.inside.kinds.{kind}"), layer=layer, head=head)
show_chart(st, attention_heatmap(frame, title, tr("demos.inside.key_title"), tr("demos.inside.query_title")),
           key="demo_inside_heatmap")
st.caption(tr(f"demos.inside.captions.{kind}"))
st.dataframe(pd.DataFrame(values, index=demos.numbered(rows), columns=demos.numbered(cols)).round(3),
             key="demo_inside_table")
training_curves(["transformer"], "demo_inside")
