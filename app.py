"""Attention Lab: the Streamlit entry point (routes only; lessons live in app_pages/).

Run with `streamlit run app.py`. The navigation comes from course/app/pages_index.py;
the language switch and the progress summary are rendered here so that they
appear, and keep their state, on every page.
"""

import streamlit as st

from classroom import web as class_web
from course.app import pages_index
from course.app.ui import language_switch, progress_summary, root_page, tr

st.set_page_config(page_title="Attention Lab", page_icon=":material/visibility:", layout="wide")

language_switch()
sections = {
    tr(f"nav.section_{section}"): [
        st.Page(entry.path, title=tr(entry.title_key), icon=entry.icon, url_path=entry.url_path)
        for entry in entries
    ]
    for section, entries in pages_index.by_section(pages_index.existing(class_mode=class_web.enabled())).items()
}
if class_web.enabled():  # a hosted class: the pages the signed-in role may open
    class_pages = class_web.visible_entries(pages_index.CLASS_PAGES)
    if class_pages:
        sections[tr("nav.section_class")] = [
            st.Page(e.path, title=tr(e.title_key), icon=e.icon, url_path=e.url_path) for e in class_pages
        ]
first_section = next(iter(sections.values()))
first_section.append(root_page(first_section[0]))  # "/" opens the first chapter at its own URL
page = st.navigation(sections, expanded=True)  # every entry shown, no "View more"
if not class_web.enabled():  # self-study: the local progress file
    progress_summary()
elif class_web.current().user is not None:  # a class: the signed-in learner's results in the database
    progress_summary(class_web.results_loader())
st.sidebar.caption(tr("app.tagline"))
page.run()
