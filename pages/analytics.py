"""Class analytics (TA and instructor): pass rates, attempts to pass, the mistakes the class made."""

import streamlit as st

from classroom import access, exercises
from course.app import class_mode, class_views
from course.app.ui import tr

user = class_mode.page_user("analytics")
class_mode.sidebar_identity(user)
st.title(tr("classroom.analytics_title"))
st.caption(tr("classroom.analytics_intro"))
frame = access.class_frame(class_mode.store(), user.id)
class_views.summary_table(frame)
ex_id = st.selectbox(tr("classroom.choose"), exercises.EXERCISE_IDS, key="class_analytics_ex",
                     format_func=class_views.exercise_label(), index=exercises.EXERCISE_IDS.index("ex03"))
class_views.mistake_chart(user.id, frame, ex_id)
