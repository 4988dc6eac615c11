"""Chapter 5: multi-head attention: split, attend in parallel, merge."""

import streamlit as st

from course.app.chart_view import show_chart
from course.app.trained_ui import heads_side_by_side
from course.app.ui import chapter_footer, current_lang, page_cache, prose, tr
from course.lessons import ch05

MAX_HEADS = 16  # the head-count slider's right end
KEEP = "session"  # persist_state: widget values survive page switches
HEAD_HIDDENS = 32  # width of the layer in the per-head heatmaps

# Cached on plain values: building the layers, the Altair charts and the tables is slow.
tracer_view = page_cache(ch05.tracer_view, max_entries=256)
params_view = page_cache(ch05.params_view, max_entries=64)
heads_view = page_cache(ch05.heads_view, max_entries=256)
valid_lens_view = page_cache(ch05.trace_valid_lens, max_entries=256)


def tracer_section():
    """Sliders for the sizes (head counts that divide num_hiddens only); every intermediate shape of the layer."""
    prose("ch05.heading_tracer", "ch05.tracer_body")
    w = ch05.WORKED
    cols = st.columns(5)
    b = cols[0].slider(tr("ch05.batch_label"), 1, 8, w["batch"], key="ch05_batch", persist_state=KEEP)
    n_q = cols[1].slider(tr("ch05.n_q_label"), 1, 12, w["n_q"], key="ch05_n_q", persist_state=KEEP)
    n_k = cols[2].slider(tr("ch05.n_k_label"), 1, 12, w["n_k"], key="ch05_n_k", persist_state=KEEP)
    h = cols[3].slider(tr("ch05.hiddens_label"), 4, 128, w["num_hiddens"], step=4, key="ch05_hiddens",
                       persist_state=KEEP)
    options = [n for n in ch05.valid_head_counts(h) if n <= MAX_HEADS]  # the layer needs heads | num_hiddens
    if st.session_state.get("ch05_heads") not in options:  # num_hiddens moved: the nearest count it allows
        held = st.session_state.get("ch05_heads", w["num_heads"])
        st.session_state["ch05_heads"] = min(options, key=lambda n: (abs(n - held), n))
    heads = cols[4].select_slider(tr("ch05.heads_label"), options, key="ch05_heads", persist_state=KEEP)
    table, diff = tracer_view(current_lang(), b, n_q, n_k, h, heads)
    st.caption(tr("ch05.heads_divide", num_hiddens=h, valid=", ".join(map(str, options))))
    st.dataframe(table, hide_index=True, height="content")
    st.markdown(tr("ch05.per_head", d=h // heads, h=h, heads=heads, bh=b * heads, b=b))
    st.metric(tr("ch05.consistency"), f"{diff:.1e}")
    valid_lens_part(b, n_q, n_k, h, heads)
    return h, heads


def valid_lens_part(b, n_q, n_k, h, heads):
    """valid_lens (B,) as the learner types them, and the (B*heads,) tensor the attention receives."""
    st.markdown(tr("ch05.lens.body"))
    text = st.text_input(tr("ch05.lens.label"), "3, 2", key="ch05_valid_lens", persist_state=KEEP)
    try:
        lens = ch05.parse_valid_lens(text, b, n_k)
    except ch05.BadLengths as err:
        st.warning(tr("ch05.lens.bad", message=tr(f"ch05.lens.bad_{err.code}", **err.fields)))
        return
    seen = valid_lens_view(b, n_q, n_k, h, heads, tuple(lens))
    st.markdown(tr("ch05.lens.shown", lens=seen["input"], shape=seen["input_shape"], heads=heads,
                   repeated=seen["repeated"], repeated_shape=seen["repeated_shape"]))
    st.metric(tr("ch05.lens.zeros", shape=seen["weights_shape"]), seen["zero_weights"])


def params_section(h, heads):
    """Parameter counts of the multi-head layer and of one head of the same width."""
    prose("ch05.heading_params", "ch05.params_body")
    if heads is None:  # the tracer already said what is wrong with the head count
        return
    table, total = params_view(current_lang(), h, heads)
    st.dataframe(table, hide_index=True)
    st.markdown(tr("ch05.params_equal", total=total, h=h))


def heads_section():
    """Self-attention of a learner's sentence: one heatmap per head and how the heads differ."""
    prose("ch05.heading_heads", "ch05.heads_body")
    text = st.text_input(tr("ch05.sentence_label"), ch05.SENTENCE, key="ch05_sentence", persist_state=KEEP)
    cols = st.columns(3)
    scale = cols[0].slider(tr("ch05.scale_label"), 0.5, 4.0, 2.0, step=0.5, key="ch05_scale", persist_state=KEEP)
    num_heads = cols[1].select_slider(tr("ch05.num_heads_label"), (1, 2, 4, 8), 4, key="ch05_num_heads",
                                      persist_state=KEEP)
    seed = cols[2].number_input(tr("ch05.seed_label"), 0, 9999, 0, key="ch05_seed", persist_state=KEEP)
    try:
        tokens = tuple(ch05.tokenize(text))
    except ch05.BadSentence as err:
        st.error(tr(f"ch05.sentence_{err.code}", count=err.count, max=ch05.MAX_TOKENS))
        return
    head = st.radio(tr("ch05.head_label"), range(num_heads), key="ch05_head", horizontal=True,
                    format_func=lambda i: str(i + 1), persist_state=KEEP)  # heads numbered from 1, as in the tables
    view = heads_view(current_lang(), tokens, HEAD_HIDDENS, num_heads, scale, seed, head)
    left, right = st.columns([3, 2]) if num_heads <= 4 else (st.container(), st.container())  # 8 heads: full width
    show_chart(left, view["spec"])
    right.markdown(tr("ch05.top_caption"))
    right.dataframe(view["top"], hide_index=True)
    right.markdown(tr("ch05.diff_caption"))
    right.dataframe(view["diff"], hide_index=True)
    st.markdown(tr("ch05.heads_after"))


st.title(tr("ch05.title"))
st.markdown(tr("ch05.intro"))
prose("ch05.heading_why", "ch05.why_body", "ch05.formula_head", "ch05.why_middle", "ch05.formula_output",
      "ch05.why_after")


@st.fragment
def sizes_experiment():
    """The tracer and the parameter count it sizes: a move reruns these two, not the heatmaps below."""
    width, head_count = tracer_section()
    params_section(width, head_count)


sizes_experiment()
st.fragment(heads_section)()  # a move here redraws its heatmaps only
heads_side_by_side("ch05_trained")
chapter_footer("ex05")
