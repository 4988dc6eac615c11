"""Class mode in the app: the class database, who is signed in, and page access.

Class mode is on when a database is configured (ATTENTION_LAB_CLASS_DB or
`[class] db` in .streamlit/secrets.toml). Sign-in: `st.login` when `[auth]` is
configured, else one-time links (`?token=...`). The app keeps only a session
token (in the session and the `session` query parameter, so a reload keeps
you signed in); the user and role come from the database on every run, and
every page and action goes through classroom.access.
"""

import streamlit as st

from course.app.ui import tr

from . import access, selfstudy, signin
from .db import Store, url_from_environment

SESSION_KEY = "class_session"  # the session token (not a widget); never a user id or role


def _secrets():
    try:
        return st.secrets.to_dict()
    except Exception:  # no secrets file
        return {}


def class_url():
    """The class database URL, or None in self-study mode."""
    return url_from_environment(_secrets())


def enabled():
    """Is the app running for a class?"""
    return class_url() is not None


@st.cache_resource
def _store(url):
    return Store(url)


def store():
    """The class store (one engine per server process)."""
    return _store(class_url())


def auth_configured():
    """Is an OpenID Connect provider configured for st.login?"""
    return "auth" in _secrets()


def current():
    """Resolve the signed-in user for this run -> signin.SignIn (the address bar is left alone here)."""
    if auth_configured() and getattr(st.user, "is_logged_in", False):
        return signin.resolve(store(), oidc_email=st.user.get("email"))
    kept = st.session_state.get(SESSION_KEY)
    if kept:
        result = signin.resolve(store(), session_token=kept)
        if result.user is not None:
            return result
    params = st.query_params
    if params.get("token"):
        result = signin.resolve(store(), link_token=params["token"])
        if result.session_token:
            st.session_state[SESSION_KEY] = result.session_token
        return result
    result = signin.resolve(store(), session_token=params.get("session"))
    if result.user is not None:
        st.session_state[SESSION_KEY] = params["session"]
    return result


def tidy_address():
    """Swap a used link token in the address bar for the session token (a reload stays signed in).

    Called from the page, after st.navigation: changing the query parameters
    before it made Streamlit report the requested page as not found.
    """
    params = st.query_params
    token = st.session_state.get(SESSION_KEY)
    if "token" in params:
        del params["token"]
    if token and params.get("session") != token:
        params["session"] = token


def sign_in_page(result):
    """What someone not signed in sees: the provider's button, or how links work."""
    st.title(tr("classroom.signin_title"))
    if result.problem == "not_on_roster":
        st.warning(tr("classroom.not_on_roster", email=st.user.get("email", "")))
    elif result.problem in ("link_invalid", "session_expired"):
        st.warning(tr(f"classroom.{result.problem}"))
    if auth_configured():
        st.button(tr("classroom.signin_with_provider"), key="class_login", on_click=st.login, type="primary")
        if getattr(st.user, "is_logged_in", False):
            st.button(tr("classroom.sign_out"), key="class_logout", on_click=st.logout)
    else:
        st.info(tr("classroom.signin_link_help"))


def signed_in_user():
    """The signed-in user; otherwise the sign-in page is shown and the script stops."""
    result = current()
    tidy_address()
    if result.user is None:
        sign_in_page(result)
        st.stop()
    return result.user


def page_user(action):
    """The signed-in user if their role may do `action` (see classroom.access); else stop."""
    user = signed_in_user()
    try:
        return access.require(store(), user.id, action)
    except access.AccessDenied as denied:
        st.error(tr("classroom.denied", reason=str(denied)))
        st.stop()


def sign_out():
    """Revoke this browser's session."""
    from . import store as store_ops

    store_ops.sign_out(store(), st.session_state.pop(SESSION_KEY, None))
    st.query_params.pop("session", None)
    if auth_configured() and getattr(st.user, "is_logged_in", False):
        st.logout()


def sidebar_identity(user):
    """'Signed in as ...' and a sign-out button in the sidebar."""
    st.sidebar.markdown(tr("classroom.signed_in_as", name=user.name or user.email,
                           role=tr(f"classroom.role_{user.role}")))
    st.sidebar.button(tr("classroom.sign_out"), key="class_sign_out", on_click=sign_out)
