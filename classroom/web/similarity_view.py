"""The Analytics page's similarity section (TAs and instructors): flagged pairs, their evidence, the code side by side.

Reads only through classroom.web.access with the signed-in user's id (a learner gets AccessDenied).
"""

import pandas as pd
import streamlit as st

from course.app.ui import current_lang, tr

from . import access, views, web
from .feedback import mistake_labels


def _percent(value):
    """A share as a whole percentage."""
    return f"{100 * value:.0f}%"


def trace_sentence(shared, lang):
    """One rare trace two learners share, as a sentence in the page's language."""
    trace = shared.trace
    if trace.kind == "mistake":
        label = mistake_labels(trace.ex_id, lang, {trace.detail}).get(trace.detail, trace.detail)
        return tr("classroom.trace_mistake", ex_id=trace.ex_id, label=label, holders=shared.holders,
                  learners=shared.learners)
    return tr("classroom.trace_values", ex_id=trace.ex_id, check=trace.detail, holders=shared.holders,
              learners=shared.learners)


def flags_table(flags):
    """The flagged pairs as a table (names and emails as plain cells)."""
    return pd.DataFrame({
        tr("classroom.col_exercise"): [f.ex_id for f in flags],
        tr("classroom.col_first"): [f"{f.first.name} <{f.first.email}>" for f in flags],
        tr("classroom.col_second"): [f"{f.second.name} <{f.second.email}>" for f in flags],
        tr("classroom.col_similarity"): [_percent(f.score) for f in flags],
        tr("classroom.col_threshold"): [_percent(f.threshold.value) for f in flags],
        tr("classroom.col_evidence"): [len(f.shared) for f in flags],
    })


def thresholds_table(thresholds):
    """Each exercise's threshold and the null it came from."""
    rows = list(thresholds.values())
    return pd.DataFrame({
        tr("classroom.col_exercise"): [t.ex_id for t in rows],
        tr("classroom.col_threshold"): [_percent(t.value) for t in rows],
        tr("classroom.col_center"): [_percent(t.center) for t in rows],
        tr("classroom.col_null_pairs"): [t.reference_pairs + t.class_pairs for t in rows],
    })


def side_by_side(user_id, flag):
    """The two submissions of a flagged pair in two columns, each under its learner's name (plain text)."""
    store = web.store()
    for column, side in zip(st.columns(2), (flag.first, flag.second)):
        detail = access.submission_detail(store, user_id, side.submission_id)
        with column:
            st.text(tr("classroom.similarity_side", name=side.name, email=side.email, id=side.submission_id))
            views.show_code(detail["source"], "python" if detail["kind"] == ".py" else "json")


def flags_section(user_id):
    """Flagged pairs with their score, threshold and shared rare traces; a chosen pair's code side by side."""
    lang = current_lang()
    st.subheader(tr("classroom.similarity_title"))
    st.caption(tr("classroom.similarity_intro"))
    if not st.toggle(tr("classroom.similarity_run"), key="class_analytics_similarity_on"):
        return  # comparing every pair costs seconds to a minute in a large class: only when asked, not on every visit
    with st.spinner(tr("classroom.similarity_computing")):
        flags, thresholds = access.similarity_flags(web.store(), user_id)
    if not flags:
        st.caption(tr("classroom.similarity_none"))
    else:
        st.dataframe(flags_table(flags), hide_index=True, key="class_analytics_similarity_table")
        pick = st.selectbox(tr("classroom.similarity_pick"), range(len(flags)), key="class_analytics_similarity_pick",
                            format_func=lambda i: f"{flags[i].ex_id} · {flags[i].first.email} · "
                                                  f"{flags[i].second.email} · {_percent(flags[i].score)}")
        flag = flags[pick]
        threshold = flag.threshold
        st.markdown(tr("classroom.similarity_score", share=_percent(flag.score), ex_id=flag.ex_id,
                       threshold=_percent(threshold.value), quantile=f"{threshold.quantile:g}",
                       reference=threshold.reference_pairs, own=threshold.class_pairs,
                       center=_percent(threshold.center)))
        for shared in flag.shared:
            st.markdown("- " + trace_sentence(shared, lang))
        if not flag.shared:
            st.caption(tr("classroom.similarity_no_traces"))
        side_by_side(user_id, flag)
    with st.expander(tr("classroom.similarity_thresholds"), key="class_analytics_similarity_thresholds"):
        st.table(thresholds_table(thresholds))
