"""Chapter 4: Bahdanau attention, computed by hand."""

import pandas as pd
import streamlit as st

from course.app.ch04_sections import (alignment_display, compare_section, convex_section, heatmap_section, shapes_section,
                                      step_shapes_display, worked_display)
from course.app.chart_view import show_chart
from course.app.trained_ui import learned_alignment, walk_through
from course.app.ui import chapter_footer, current_lang, page_cache, tr
from course.lessons import ch04

E = ch04.EXAMPLE
KEEP = "session"  # persist_state: widget values survive page switches
# st.data_editor has no persist_state: its edited table is kept under "<key>_data" (see editor()).


def editor(key, default, **kwargs):
    """A fixed-size data_editor whose edited table survives page switches."""
    data_key = f"{key}_data"
    if data_key not in st.session_state:
        st.session_state[data_key] = default
    edited = st.data_editor(st.session_state[data_key], key=key, num_rows="fixed", **kwargs)
    st.session_state[data_key] = edited
    return edited


def reset(*keys):
    """Forget the edits of these editors (an on_click callback)."""
    for key in keys:
        for k in (key, f"{key}_data"):
            st.session_state.pop(k, None)


alignment_spec = page_cache(ch04.alignment_spec, max_entries=256)  # Altair is slow to build


st.title(tr("ch04.title"))
st.markdown(tr("ch04.intro"))

st.header(tr("ch04.align_header"))
st.markdown(tr("ch04.align_body"))
target = st.radio(tr("ch04.target_label"), ch04.TARGETS, index=1, key="ch04_target", horizontal=True,
                  persist_state=KEEP)
score_key = f"ch04_scores_{ch04.TARGETS.index(target)}"
left, right = st.columns([2, 3])
with left:
    scores = editor(score_key, pd.DataFrame({"word": ch04.SOURCE, "e": ch04.SCORES[target]}), hide_index=True,
                    column_config={"word": st.column_config.TextColumn(tr("ch04.col_word"), disabled=True)})
    st.button(tr("ch04.reset"), key="ch04_reset_scores", on_click=reset, args=(score_key,))
aligned = alignment_display(current_lang(), target, tuple(scores["e"].tolist()))
if aligned is None:
    st.error(tr("ch04.bad_scores"))
    st.stop()
(top_word, top_alpha), table, alpha = aligned
right.metric(tr("ch04.top_weight", target=target), f"α({top_word}) = {top_alpha:.3f}")
right.dataframe(table, hide_index=True)
show_chart(st, alignment_spec(alpha, tr("ch04.col_word")))
st.markdown(tr("ch04.align_after"))
# Each experiment below is a fragment: moving one of its widgets reruns that section, not the whole long page.
st.fragment(heatmap_section)()
st.fragment(learned_alignment)("ch04_learned")
st.fragment(walk_through)("ch04_walk")

st.header(tr("ch04.worked_header"))
st.markdown(tr("ch04.worked_body"))
vec_default = pd.DataFrame([E["s"], E["h1"], E["h2"], E["v"]], index=["s", "h1", "h2", "v"], columns=["1", "2"])
cols = st.columns(3)
with cols[0]:
    vec = editor("ch04_vectors", vec_default)
mats = {}
for col, name in zip(cols[1:], ("W_s", "W_h")):
    col.markdown(f"${name[0]}_{name[2]}$")
    with col:
        mats[name] = editor(f"ch04_{name}", pd.DataFrame(E[name], index=["1", "2"], columns=["1", "2"]))
st.button(tr("ch04.reset"), key="ch04_reset_example", on_click=reset,
          args=("ch04_vectors", "ch04_W_s", "ch04_W_h"))
rows = tuple(map(tuple, vec.to_numpy().tolist()))
worked = worked_display(current_lang(), rows[0], rows[1:3], tuple(map(tuple, mats["W_s"].to_numpy().tolist())),
                        tuple(map(tuple, mats["W_h"].to_numpy().tolist())), rows[3])
if worked["error"]:
    st.error(tr("ch04.bad_input", name=worked["error"]))
    st.stop()
st.dataframe(worked["table"])
n = worked["numbers"]
st.markdown(tr("ch04.worked_numbers", e1=f"{n['e'][0]:.3f}", e2=f"{n['e'][1]:.3f}",
               a1=f"{n['alpha'][0]:.3f}", a2=f"{n['alpha'][1]:.3f}",
               c1=f"{n['c'][0]:.3f}", c2=f"{n['c'][1]:.3f}", p1=f"{n['p'][0]:.3f}", p2=f"{n['p'][1]:.3f}"))
st.fragment(convex_section)(tuple(n["alpha"]), rows[1:3])

st.header(tr("ch04.steps_header"))
st.markdown(tr("ch04.steps_body"))
st.table(step_shapes_display(current_lang()))
st.fragment(shapes_section)()

st.header(tr("ch04.grad_header"))
st.markdown(tr("ch04.grad_body", loss=f"{worked['loss']:.3f}"))
st.dataframe(worked["paths"])
st.markdown(tr("ch04.grad_after"))

st.fragment(compare_section)()

st.header(tr("ch04.qkv_header"))
st.markdown(tr("ch04.qkv_body"))
st.warning(tr("ch04.caveat"))

chapter_footer("ex04")
