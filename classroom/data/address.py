"""Where the class database is, and so whether the app runs for a class: the standard library only.

app.py asks this before it imports anything else of class mode, so a learner's self-study install
(requirements.txt, without SQLAlchemy and the rest of requirements-class.txt) runs the app. Imports nothing of
the project.
"""

import os

ENV_VAR = "ATTENTION_LAB_CLASS_DB"


def url_from_environment(secrets=None):
    """The class database URL from ATTENTION_LAB_CLASS_DB or `[class] db` in secrets, or None."""
    url = os.environ.get(ENV_VAR, "").strip()
    if url:
        return url
    try:
        return (secrets or {}).get("class", {}).get("db") or None
    except Exception:  # st.secrets without a secrets file
        return None


def app_secrets():
    """The app's secrets (.streamlit/secrets.toml) as a dict; {} without a secrets file."""
    import streamlit as st  # the app's side only: the workers and the command line never call this

    try:
        return st.secrets.to_dict()
    except Exception:  # no secrets file
        return {}


def app_class_url():
    """The class database URL the app runs with (the environment, then the app's secrets), or None: self-study."""
    return url_from_environment(app_secrets())
