"""Chapter 6: self-attention versus cross-attention, layer costs, positional encoding."""

import streamlit as st

from course.app.chart_view import show_chart
from course.app.ui import chapter_footer, current_lang, labeler, page_cache, prose, remembered_tabs, tr
from course.lessons import ch05, ch06
from course.lessons.ch06 import positions as ch06_positions

KEEP = "session"  # persist_state: widget values survive page switches

# Cached on plain values: the tables are sent as Arrow and the charts built once per setting.
roles_view = page_cache(ch06.roles_view, max_entries=8)
cost_view = page_cache(ch06.cost_view, max_entries=256)
pe_heatmap = page_cache(ch06_positions.pe_heatmap, max_entries=64)
encoding_view = page_cache(ch06_positions.encoding_view, max_entries=128)
rotation_view = page_cache(ch06_positions.rotation_view, max_entries=256)
scale_view = page_cache(ch06_positions.scale_view, max_entries=64)
shuffle_errors = page_cache(ch06_positions.shuffle_errors, max_entries=128)


def roles_section():
    """Where Q, K, V come from, and the worked example on a sentence."""
    prose("ch06.heading_roles", "ch06.roles_body")
    roles_slot = st.empty()  # the roles table, filled once the view is computed
    st.markdown(tr("ch06.example_body"))
    mode = st.radio(tr("ch06.mode_label"), ("self", "cross"), key="ch06_mode", horizontal=True,
                    format_func=labeler("ch06.mode_{}"), persist_state=KEEP)
    view, (left, right) = roles_view(current_lang(), mode), st.columns(2)
    roles_slot.dataframe(view["roles"], hide_index=True)
    for column, name in ((left, "queries"), (right, "keys"), (left, "scores"), (right, "output")):
        column.caption(tr(f"ch06.show_{name}"))
        column.dataframe(view[name], hide_index=True)
    show_chart(st, view["spec"])
    after = tr("ch06.example_after") if mode == "self" else tr("ch06.example_after_cross", tops=view["tops"])
    st.markdown(tr("ch06.example_shapes", m=view["shape"][0], n=view["shape"][1]) + "\n\n" + after)


def cost_section():
    """Cost, sequential steps and path length of the three layers for the learner's n, d, k."""
    prose("ch06.heading_cost", "ch06.cost_body")
    cols = st.columns(3)
    n = cols[0].slider(tr("ch06.n_label"), 1, 2048, 100, key="ch06_n", persist_state=KEEP)
    d = cols[1].slider(tr("ch06.d_label"), 8, 1024, 512, step=8, key="ch06_d", persist_state=KEEP)
    k = cols[2].slider(tr("ch06.k_label"), 2, 9, 3, key="ch06_k", persist_state=KEEP)
    table, spec = cost_view(current_lang(), n, d, k)
    st.dataframe(table, hide_index=True)
    st.metric(tr("ch06.ratio"), f"{n / d:.3g}")
    show_chart(st, spec)
    st.markdown(tr("ch06.cost_after", d=d))


def curve_columns(d):
    """The picker of P's columns drawn as curves, offering 0..d-1; chosen columns a narrower P lacks are
    set aside (said under the picker) and come back when num_hiddens grows again."""
    state = st.session_state
    wanted = list(state.get("ch06_columns", ch06_positions.DEFAULT_COLUMNS)) + state.get("ch06_columns_aside", [])
    state["ch06_columns"], state["ch06_columns_aside"] = ch06_positions.fit_columns(wanted, d)
    chosen = st.multiselect(tr("ch06.columns_label"), list(range(d)), key="ch06_columns", persist_state=KEEP)
    if state["ch06_columns_aside"]:
        st.info(tr("ch06.columns_aside", columns=", ".join(map(str, state["ch06_columns_aside"])), d=d, last=d - 1))
    return chosen


def encoding_section():
    """The table P as a heatmap and as curves, and the binary-counter analogy."""
    prose("ch06.heading_pe", "ch06.pe_body", "ch06.formula_pe")
    cols = st.columns(2)
    n = cols[0].slider(tr("ch06.length_label"), 8, 100, 60, key="ch06_length", persist_state=KEEP)
    d = cols[1].slider(tr("ch06.hiddens_label"), 4, 128, 32, step=4, key="ch06_hiddens", persist_state=KEEP)
    table, spec = pe_heatmap(current_lang(), n, d)
    show_chart(st, spec, data=table)
    st.markdown(tr("ch06.pe_after"))
    view = encoding_view(current_lang(), n, d, tuple(curve_columns(d)))
    if view["curves"]:
        show_chart(st, view["curves"])
    prose("ch06.heading_binary", "ch06.binary_body")
    left, right = st.columns(2)
    left.dataframe(view["binary"], hide_index=True, height="content")
    right.markdown(tr("ch06.period_caption", d=d))
    right.dataframe(view["periods"], hide_index=True)
    return n, d


def rotation_section(n, d):
    """The 2x2 rotation for an offset and a column pair, and its error over the whole table."""
    prose("ch06.heading_relative", "ch06.relative_body", "ch06.formula_rotation", "ch06.relative_after")
    cols = st.columns(2)
    delta = cols[0].slider(tr("ch06.delta_label"), 1, n - 1, min(5, n - 1), key="ch06_delta", persist_state=KEEP)
    j = cols[1].slider(tr("ch06.pair_label"), 0, d // 2 - 1, min(2, d // 2 - 1), key="ch06_pair", persist_state=KEEP)
    matrix, err64, err32 = rotation_view(n, d, delta, j)
    cols[0].markdown(tr("ch06.matrix_caption", j=j, omega=f"{ch06_positions.frequencies(d)[j]:.4g}"))
    cols[0].dataframe(matrix, hide_index=True)
    cols[1].metric(tr("ch06.error64"), f"{err64:.1e}")
    cols[1].metric(tr("ch06.error32"), f"{err32:.1e}")
    st.markdown(tr("ch06.error_note", bound=ch06_positions.latex_sci(ch06_positions.FLOAT32_BOUND)))


def scale_section(d):
    """Lengths of embeddings, scaled embeddings and rows of P for the chosen d."""
    prose("ch06.heading_scale", "ch06.scale_body")
    st.dataframe(scale_view(current_lang(), d), hide_index=True)
    st.markdown(tr("ch06.scale_after"))


def order_section():
    """Shuffle a sentence: self-attention's outputs move with it unless P is added."""
    prose("ch06.heading_order", "ch06.order_body")
    tokens = st.text_input(tr("ch06.sentence_label"), ch05.SENTENCE, key="ch06_sentence", persist_state=KEEP).split()
    if not 2 <= len(tokens) <= ch05.MAX_TOKENS:
        st.error(tr("ch06.bad_sentence", max=ch05.MAX_TOKENS, count=len(tokens)))
        return
    st.session_state.setdefault("ch06_shuffle", 1)
    cols = st.columns(2, vertical_alignment="bottom")
    seed = cols[0].number_input(tr("ch06.shuffle_label"), 0, 9999, key="ch06_shuffle", persist_state=KEEP)
    cols[1].button(tr("ch06.shuffle_button"), key="ch06_reshuffle", on_click=st.session_state.update,
                   kwargs={"ch06_shuffle": (seed + 1) % 10000})  # the next seed
    perm = ch06_positions.permutation(len(tokens), seed)
    st.markdown(tr("ch06.shuffled", sentence=" ".join(tokens[i] for i in perm)))
    errors = shuffle_errors(tuple(tokens), tuple(perm))
    for col, name in zip(st.columns(2), ("without", "with")):
        col.metric(tr(f"ch06.err_{name}"), f"{errors[name]:.1e}")
    st.markdown(tr("ch06.order_after"))


st.title(tr("ch06.title"))
st.markdown(tr("ch06.intro"))
roles_tab, cost_tab, order_tab, encoding_tab, relative_tab, scale_tab = remembered_tabs("ch06")  # one idea each
# Each experiment is a fragment: moving a widget reruns its own section, not the other tabs' (drawn all the same).
# The encoding's sliders set the length and width the last two read, so a move there reruns the page.
with roles_tab:
    st.fragment(roles_section)()
with cost_tab:
    st.fragment(cost_section)()
with order_tab:  # why positions are needed comes before how they are encoded
    st.fragment(order_section)()
with encoding_tab:
    length, width = encoding_section()
with relative_tab:
    st.fragment(rotation_section)(length, width)
with scale_tab:
    st.fragment(scale_section)(width)
chapter_footer("ex06")
