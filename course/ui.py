"""Small Streamlit helpers shared by every page: language and translated text.

Imported by pages only (it imports Streamlit); the logic it relies on lives in
the Streamlit-free modules course.i18n and course.progress.
"""

import streamlit as st

from course.i18n import LANGS, lang_from_locale, t

LANG_KEY = "app_lang"


def current_lang():
    """The learner's chosen language; the browser's locale until they choose."""
    lang = st.session_state.get(LANG_KEY)
    if lang in LANGS:
        return lang
    try:
        locale = st.context.locale
    except Exception:  # outside a browser session (bare mode, old Streamlit)
        locale = None
    return lang_from_locale(locale)


def tr(key, **fields):
    """The text for `key` in the current language."""
    return t(key, current_lang(), **fields)
