"""Chapter 8: history and paper map: the 2014-2017 timeline, score functions, papers, code map."""

import streamlit as st

from course.common import pages_index
from course.app.chart_view import show_chart
from course.app.ui import chapter_footer, current_lang, labeler, page_cache, prose, tr
from course.lessons import ch08

KEEP = "session"  # persist_state: widget values survive page switches

timeline_spec = page_cache(ch08.timeline_spec, max_entries=4)
score_table = page_cache(ch08.score_table, max_entries=256)
local_view = page_cache(ch08.local_view, max_entries=128)
local_claims = page_cache(ch08.local_claims)


def timeline_section(lang):
    """The milestones on a year axis, as a table, and each one's change in the information path."""
    prose("ch08.timeline.heading", "ch08.timeline.intro")
    show_chart(st, timeline_spec(lang), width="stretch")
    st.table(ch08.timeline_frame(lang), hide_index=True)
    for year, key, papers in ch08.TIMELINE:
        with st.expander(f"{year} · {tr(f'ch08.timeline.{key}.name')}"):
            st.markdown(tr(f"ch08.timeline.{key}.detail"))
            st.caption(" · ".join(f"[{ch08.cite(p)}]({ch08.BY_KEY[p].url})" for p in papers))
    st.info(tr("ch08.timeline.caveat"), icon=":material/history_edu:")


def scores_section(lang):
    """The score-function evolution table with parameter counts for the chosen sizes."""
    prose("ch08.scores.heading", "ch08.scores.intro")
    left, right = st.columns(2)
    d = left.slider(tr("ch08.scores.d"), 1, 512, 64, key="ch08_d", persist_state=KEEP)
    hidden = right.slider(tr("ch08.scores.h"), 1, 512, 64, key="ch08_h", persist_state=KEEP)
    st.table(score_table(lang, d, hidden), hide_index=True)
    st.markdown(tr("ch08.scores.after"))


def local_section(lang):
    """Sliding-window and graph masks: one layer's weights, and what stacked layers have read."""
    prose("ch08.local.heading", "ch08.local.intro")
    kind = st.radio(tr("ch08.local.kind"), ch08.MASK_KINDS, key="ch08_local_kind", horizontal=True,
                    format_func=labeler("ch08.local.kind_{}"), persist_state=KEEP)
    left, mid, right = st.columns(3, vertical_alignment="bottom")
    half_width = left.slider(tr("ch08.local.half_width"), 0, 4, 1, key="ch08_local_d", persist_state=KEEP,
                             disabled=kind == "graph")
    layers = mid.slider(tr("ch08.local.layers"), 1, 8, 2, key="ch08_local_layers", persist_state=KEEP)
    causal = right.toggle(tr("ch08.local.causal"), key="ch08_local_causal", persist_state=KEEP, disabled=kind == "graph")
    view = local_view(lang, kind, half_width, causal, layers)
    stats = view["stats"]
    m1, m2, m3 = st.columns(3)
    m1.metric(tr("ch08.local.kept"), f"{stats['kept']} / {stats['total']}")
    m2.metric(tr("ch08.local.read", layers=layers), f"{stats['read']} / {stats['n']}")
    m3.metric(tr("ch08.local.settle"), stats["settle"])
    if not stats["all"]:
        st.caption(tr("ch08.local.never_all"))
    c1, c2 = st.columns(2)
    show_chart(c1, view["weights"], width="stretch")
    show_chart(c2, view["reach"], width="stretch")
    st.markdown(tr("ch08.local.after", **local_claims()))


def papers_section():
    """The four papers, each with one concrete reading task and a 'done' box."""
    prose("ch08.papers.heading", "ch08.papers.intro")
    done = 0
    for paper in ch08.PAPERS:
        with st.container(border=True):
            st.markdown(f"**{paper.title}**  \n{paper.authors} ({paper.year}) · [arXiv:{paper.arxiv}]({paper.url})")
            st.markdown(tr(f"ch08.papers.{paper.key}"))
            done += st.checkbox(tr("ch08.papers.done_label"), key=f"ch08_read_{paper.key}", persist_state=KEEP)
    st.progress(done / len(ch08.PAPERS), text=tr("ch08.papers.done", done=done, total=len(ch08.PAPERS)))


def code_section(lang):
    """Which file of this repository implements what."""
    prose("ch08.code.heading", "ch08.code.intro")
    st.table(ch08.code_map_frame(lang), hide_index=True)
    st.markdown(tr("ch08.code.after"))


lang = current_lang()
st.title(tr("ch08.title"))
st.markdown(tr("ch08.intro"))
timeline_section(lang)
scores_section(lang)
local_section(lang)
papers_section()
code_section(lang)
chapter_footer("ex08")
st.divider()
st.page_link(pages_index.get("ch09").path, label=tr("ch08.next"), icon=":material/fact_check:")
