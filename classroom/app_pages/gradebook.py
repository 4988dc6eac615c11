"""Gradebook (class mode, TA and instructor): learners x exercises, a learner's submissions, regrade."""

import streamlit as st

from classroom.web import access, views, web
from classroom.data.roster import user_by_email
from course.app.ui import tr

user = web.page_user("gradebook")
web.sidebar_identity(user)
st.title(tr("classroom.gradebook_title"))
st.caption(tr("classroom.gradebook_intro"))
book = views.gradebook_table(user.id)
views.adjustments_table(user.id)

if not book.empty:
    st.subheader(tr("classroom.learner"))
    email = st.selectbox(tr("classroom.learner"), book["email"].tolist(), key="class_gradebook_learner",
                         label_visibility="collapsed")
    learner = user_by_email(web.store(), email)
    views.history(user.id, owner_id=learner.id, key="class_gradebook")

if access.allowed(user.role, "regrade") and st.button(tr("classroom.regrade_all"), key="class_gradebook_regrade"):
    count = access.regrade(web.store(), user.id)
    st.success(tr("classroom.regrade_queued", count=count))
