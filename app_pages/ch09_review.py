"""Chapter 9: review: the course's main judgements as cards, and progress across the exercises."""

import streamlit as st

from course.common import pages_index
from course.app.learner import current
from course.app.ui import current_lang, page_cache, status_label, status_of, tr
from course.common import exercise_index
from course.lessons import ch09

KEEP = "session"  # persist_state: widget values survive page switches


def cards_section():
    """One card per judgement, each linking back to the chapters it comes from."""
    st.header(tr("ch09.cards.heading"))
    st.markdown(tr("ch09.cards.intro"))
    available = [page.key for page in pages_index.existing()]
    explained = 0
    for i, card in enumerate(ch09.CARDS):
        if i % 3 == 0:
            cols = st.columns(3)  # rows of three cards
        with cols[i % 3].container(border=True, height="stretch"):
            st.subheader(tr(f"ch09.cards.{card.key}.title"))
            st.markdown(tr(f"ch09.cards.{card.key}.body"))
            for key in ch09.card_links(card, available):
                entry = pages_index.get(key)
                st.page_link(entry.path, label=tr(entry.title_key), icon=entry.icon)
            explained += st.checkbox(tr("ch09.cards.explain"), key=f"ch09_card_{card.key}", persist_state=KEEP)
    st.progress(explained / len(ch09.CARDS),
                text=tr("ch09.cards.explained", done=explained, total=len(ch09.CARDS)))


interview_numbers = page_cache(ch09.interview_numbers)  # computed once


def interview_section():
    """Interview questions as cards: the question, a hidden answer with computed numbers, a tick."""
    st.header(tr("ch09.interview.heading"))
    st.markdown(tr("ch09.interview.intro"))
    available = [page.key for page in pages_index.existing()]
    numbers, known = interview_numbers(), 0
    for i, card in enumerate(ch09.INTERVIEW):
        if i % 2 == 0:
            cols = st.columns(2)
        with cols[i % 2].container(border=True, height="stretch"):
            st.subheader(tr(f"ch09.interview.{card.key}.question"))
            with st.expander(tr("ch09.interview.answer")):
                st.markdown(tr(f"ch09.interview.{card.key}.answer", **numbers))
            for key in ch09.card_links(card, available):
                entry = pages_index.get(key)
                st.page_link(entry.path, label=tr(entry.title_key), icon=entry.icon)
            known += st.checkbox(tr("ch09.interview.know"), key=f"ch09_interview_{card.key}", persist_state=KEEP)
    st.progress(known / len(ch09.INTERVIEW), text=tr("ch09.interview.known", done=known, total=len(ch09.INTERVIEW)))


def progress_section():
    """Every exercise's saved status and score, the counts, and what to do next."""
    st.header(tr("ch09.progress.heading"))
    st.markdown(tr("ch09.progress.intro"))
    results = current().results()
    statuses = {ex.id: status_of(ex.id, results) for ex in exercise_index.EXERCISES}
    counts = ch09.status_counts(statuses)
    total = len(statuses)
    st.progress(counts["passed"] / total, text=tr("app.progress", passed=counts["passed"], total=total))
    tiles = {status: n for status, n in counts.items() if n or status != "blocked"}  # blocked: class mode only
    for col, status in zip(st.columns(len(tiles)), tiles):
        col.metric(status_label(status), tiles[status])
    only_open = st.toggle(tr("ch09.progress.only_open"), key="ch09_only_open", persist_state=KEEP)
    table = ch09.progress_frame(statuses, results, current_lang(), only_open=only_open)  # cells: words, no icons
    score = tr("ch09.progress.col_score")
    st.dataframe(table, hide_index=True, column_config={
        score: st.column_config.ProgressColumn(score, min_value=0, max_value=100, format="%.0f%%")})
    upcoming = ch09.next_exercise(statuses)
    if upcoming is None:
        st.success(tr("ch09.progress.all_passed"))
        return
    st.markdown(tr("ch09.progress.next", ex_id=upcoming, title=tr(f"exercises.{upcoming}.title")))
    st.page_link(current().page("practice").path, label=tr("app.footer_link", ex_id=upcoming),
                 icon=":material/task_alt:", query_params={"ex": upcoming})


st.title(tr("ch09.title"))
st.markdown(tr("ch09.intro"))
cards_section()
interview_section()
progress_section()
st.markdown(tr("ch09.outro"))
