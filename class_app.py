"""Class mode's server: the Streamlit app (app.py) with the route that sets the HttpOnly session cookie.

    streamlit run class_app.py      # a class (ATTENTION_LAB_CLASS_DB set); self-study: streamlit run app.py

See classroom/web/session_cookie.py.
"""

import streamlit as st

from classroom.web import session_cookie

app = st.App("app.py", routes=session_cookie.routes())
