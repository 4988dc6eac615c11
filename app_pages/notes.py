"""Notes: one note per chapter, saved as the learner writes, exportable as Markdown.

The notes are the current Learner's (course.app.learner): a local file in
self-study, the class database per signed-in learner in class mode.
"""

import streamlit as st

from course.app import notes
from course.common import pages_index
from course.app.learner import current
from course.app.ui import current_lang, tr

CHAPTERS = pages_index.chapters()

learner = current()
learner.require_sign_in()
prefix = learner.notes_prefix


def widget_key(chapter):
    """The text area's key for a chapter's note."""
    return f"{prefix}{chapter.key}"


def save(chapter):
    """on_change: save this chapter's note at once."""
    learner.save_note(chapter.key, st.session_state[widget_key(chapter)])
    st.session_state["notes_last_saved"] = chapter.key


st.title(tr("notes.title"))
st.markdown(learner.notes_intro(current_lang()))

saved = learner.load_notes()
for chapter in CHAPTERS:  # each note under its chapter's own title (the sidebar's may be shorter)
    key = widget_key(chapter)
    if key not in st.session_state:  # first visit, or the widget was dropped on another page
        st.session_state[key] = saved.get(chapter.key, "")
    st.text_area(
        tr(f"{chapter.key}.title"), key=key, height=160, persist_state="session",
        on_change=save, args=(chapter,), placeholder=tr("notes.placeholder"),
    )
    stamp = learner.saved_at(chapter.key)
    if stamp:
        st.caption(tr("notes.saved_at", time=notes.readable_time(stamp, current_lang())))

titles = {chapter.key: tr(f"{chapter.key}.title") for chapter in CHAPTERS}  # each chapter's own title
markdown = notes.to_markdown(learner.load_notes(), titles, heading=tr("notes.export_heading"))
st.download_button(
    tr("notes.export"), markdown, file_name=f"attention-lab-notes-{current_lang()}.md",
    mime="text/markdown", key="notes_export", on_click="ignore", icon=":material/download:",
)
