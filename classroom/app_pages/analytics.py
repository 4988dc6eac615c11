"""Class analytics (TA and instructor): pass rates, attempts to pass, the mistakes the class made."""

import streamlit as st

from classroom.web import access, similarity_view, views, web
from classroom.data import exercise_table
from course.app.ui import tr

user = web.page_user("analytics")
web.sidebar_identity(user)
st.title(tr("classroom.analytics_title"))
st.caption(tr("classroom.analytics_intro"))
frame = access.class_frame(web.store(), user.id)
views.summary_table(frame)
ex_id = st.selectbox(tr("classroom.choose"), exercise_table.EXERCISE_IDS, key="class_analytics_ex",
                     format_func=views.exercise_label(), index=exercise_table.EXERCISE_IDS.index("ex03"))
views.mistake_chart(user.id, frame, ex_id)
similarity_view.flags_section(user.id)
