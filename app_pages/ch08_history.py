"""Chapter 8: history and paper map: the 2014-2017 timeline, score functions, papers, code map."""

import streamlit as st

from course.app import pages_index
from course.app.chart_view import show_chart
from course.app.ui import current_lang, prose, tr
from course.lessons import ch08

KEEP = "session"  # persist_state: widget values survive page switches

timeline_spec = st.cache_data(max_entries=4)(ch08.timeline_spec)
score_table = st.cache_data(max_entries=256)(ch08.score_table)


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
papers_section()
code_section(lang)
st.divider()
st.page_link(pages_index.get("ch09").path, label=tr("ch08.next"), icon=":material/fact_check:")
