"""Attention Lab: the Streamlit entry point (routes only; lessons live in app_pages/).

Run with `streamlit run app.py`. Here, and only here, the mode is decided: a
class database makes the run's Learner classroom's, else it is self-study
(course/app/learner.py); the navigation is the Learner's. The language switch
and the progress summary are rendered here so that they appear, and keep their
state, on every page.
"""

import streamlit as st

from classroom.data.address import app_class_url
from course.app import learner
from course.app.ui import keyboard_aids, language_switch, progress_summary, root_page, tr, window_title

st.set_page_config(page_title="Attention Lab", page_icon="👁️", layout="wide")

if app_class_url() is None:
    learner.use(learner.SelfStudyLearner())
else:  # class mode: its requirements (requirements-class.txt) are imported only here
    from classroom.web import learner as class_learner

    learner.use(class_learner.signed_in())
language_switch()
sections = {
    tr(f"nav.section_{section}"): [
        st.Page(entry.path, title=tr(entry.title_key), icon=entry.icon, url_path=entry.url_path)
        for entry in entries
    ]
    for section, entries in learner.current().navigation().items()
}
first_section = next(iter(sections.values()))
first_section.append(root_page(first_section[0]))  # "/" opens the first chapter at its own URL
page = st.navigation(sections, expanded=True)  # every entry shown, no "View more"
st.set_page_config(page_title=window_title(page.title))  # each page's own title in the browser tab
keyboard_aids()
learner.current().page_opened()
progress_summary()
st.sidebar.caption(tr("app.tagline"))
page.run()
