"""Practice in class mode: submit to the class queue, follow it, read feedback and history (no solutions)."""

import streamlit as st

from classroom.web import views, web
from course.app.ui import tr

user = web.signed_in_user()
web.sidebar_identity(user)
st.title(tr("classroom.practice_title"))
st.markdown(tr("classroom.practice_intro"))
views.submit_form(user)
views.live_state(user.id)
st.subheader(tr("classroom.history_title"))
views.history(user.id)
