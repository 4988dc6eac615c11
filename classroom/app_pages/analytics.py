"""Class analytics (TA and instructor): pass rates, attempts to pass, the mistakes the class made."""

import streamlit as st

from classroom import access, exercises, similarity_view, views, web
from course.app.ui import tr

user = web.page_user("analytics")
web.sidebar_identity(user)
st.title(tr("classroom.analytics_title"))
st.caption(tr("classroom.analytics_intro"))
frame = access.class_frame(web.store(), user.id)
views.summary_table(frame)
ex_id = st.selectbox(tr("classroom.choose"), exercises.EXERCISE_IDS, key="class_analytics_ex",
                     format_func=views.exercise_label(), index=exercises.EXERCISE_IDS.index("ex03"))
views.mistake_chart(user.id, frame, ex_id)
similarity_view.flags_section(user.id)
