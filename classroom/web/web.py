"""Class mode in the app: the class database, who is signed in, and page access.

Class mode is on when a database is configured (ATTENTION_LAB_CLASS_DB or
`[class] db` in .streamlit/secrets.toml). Sign-in: `st.login` when `[auth]` is
configured, else one-time links (`?token=...`). A used link leaves the address
bar at once; its session token lives in this tab's session state and in a
SameSite=Strict cookie of this browser (so a reload or a new tab stays signed
in; an address copied elsewhere carries nothing), set HttpOnly (and Secure
behind https) by the server's route (classroom.web.session_cookie, class_app.py).
A link opened while someone else is signed in asks before it switches. Under st.login a server-side
session row (classroom.data.oidc_session) decides whether Streamlit's cookie still
counts. Either way signing out revokes the session in the database. The user
and role come from the database on every run, and every page and action goes
through classroom.web.access.

A class database that cannot be read or written (read-only, full, unreadable,
Postgres stopped) ends the page with a message in the learner's language and
no server detail (the detail goes to the server's log): see PageStore.
"""

import contextvars
import logging
import threading
from contextlib import contextmanager

import streamlit as st
from sqlalchemy.exc import DBAPIError

from course.app.ui import tr

from . import access, session_cookie, signin
from ..data import oidc_session
from ..data.roster import instructor_name
from ..data.sessions import sign_out as store_sign_out
from ..data.settings import get_settings
from ..data.address import app_class_url, app_secrets
from ..data.db import SchemaError, Store

SESSION_KEY = "class_session"  # the session token (not a widget); never a user id or role
COOKIE = session_cookie.COOKIE  # this browser's session token (a link sign-in): HttpOnly, see session_cookie
COOKIE_PENDING = "class_cookie_pending"  # the session token this tab writes into the cookie (on each run)
COOKIE_CLEAR = "class_cookie_clear"  # the page must still expire the cookie (signed out)
SIGNED_OUT = "class_signed_out"  # this tab signed out: its (stale) cookie no longer counts
HANDOFF = "class_cookie_handoff"  # (session token, the one-time code the page posts for its HttpOnly cookie)
LINK_PENDING = "class_link_pending"  # a link of someone else opened while signed in: used only when confirmed
LINK_FAILED = "class_link_failed"  # the confirmed link no longer worked


def class_url():
    """The class database URL, or None in self-study mode."""
    return app_class_url()


_UNAVAILABLE_SAYS = contextvars.ContextVar("class_unavailable_says", default="classroom.db_unavailable_read")
log = logging.getLogger(__name__)


def database_unavailable(err):
    """Say that the class database cannot be used now (what, that nothing is lost, what to do); stop the run."""
    log.warning("class database unavailable: %s", err)  # the server's log: the instructor's detail
    st.error(tr(_UNAVAILABLE_SAYS.get()), icon=":material/cloud_off:")
    st.stop()


@contextmanager
def unavailable_says(key):
    """Within the block a database fault is worded by the text `key` (e.g. a refused submit)."""
    token = _UNAVAILABLE_SAYS.set(key)
    try:
        yield
    finally:
        _UNAVAILABLE_SAYS.reset(token)


class PageStore(Store):
    """The app's Store: a transaction the database refuses ends the page with database_unavailable()."""

    @contextmanager
    def session(self):
        try:
            with super().session() as session:
                yield session
        except DBAPIError as err:
            database_unavailable(err)


def _load_feedback_words():
    """Import what words a verdict (the grader's report module; it loads torch, ~1.5 s) ahead of the first
    verdict this server shows, which would otherwise wait for it."""
    import grader.report  # noqa: F401


@st.cache_resource
def _store(url):
    store = PageStore(url)  # an exception is not cached: the next run tries again
    threading.Thread(target=_load_feedback_words, name="load-feedback-words", daemon=True).start()
    return store


def store():
    """The class store (one engine per server process); a database that cannot be opened ends the page."""
    try:
        return _store(class_url())
    except (DBAPIError, SchemaError) as err:
        database_unavailable(err)


def auth_configured():
    """Is an OpenID Connect provider configured for st.login?"""
    return "auth" in app_secrets()


def _oidc_current():
    """Under st.login: the roster decides the role, a server-side session row decides whether it still counts."""
    user = st.user
    result = signin.resolve(store(), oidc_email=user.get("email"), email_verified=user.get("email_verified"))
    if result.user is None:
        return result
    key = oidc_session.session_key(app_secrets().get("auth", {}).get("cookie_secret"), user.to_dict())
    if key is None or not oidc_session.is_live(store(), result.user.id, key, user.to_dict()):
        return signin.SignIn(problem="session_expired")  # signed out, past the lifetime, or revoked
    st.session_state[SESSION_KEY] = key
    return result


def _live_session():
    """The session this tab holds, else this browser's session cookie -> signin.SignIn (user None when neither
    is live; a dead one's problem)."""
    kept, expired = st.session_state.get(SESSION_KEY), None
    if kept:
        expired = signin.resolve(store(), session_token=kept)
        if expired.user is not None:
            return expired
        st.session_state.pop(SESSION_KEY)
        st.session_state.pop(COOKIE_PENDING, None)  # a dead session is never written back into the cookie
    cookie = None if st.session_state.get(SIGNED_OUT) else st.context.cookies.get(COOKIE)
    if isinstance(cookie, str) and cookie:  # (AppTest has no browser: no cookies)
        result = signin.resolve(store(), session_token=cookie)
        if result.user is not None:
            st.session_state[SESSION_KEY] = cookie
        return result
    return expired or signin.SignIn(problem="signed_out")


def _use_link(token):
    """Sign this tab (and, through the cookie, this browser) in with a one-time link -> signin.SignIn."""
    result = signin.resolve(store(), link_token=token)
    if result.session_token:
        st.session_state[SESSION_KEY] = st.session_state[COOKIE_PENDING] = result.session_token
        st.session_state.pop(SIGNED_OUT, None)
    return result


def current():
    """Resolve the signed-in user for this run -> signin.SignIn (the address bar is left alone here).

    Evidence, strongest first: the provider's identity (st.login), the session
    this tab holds, this browser's session cookie, a one-time link in the
    address bar. A link never replaces a live session of someone else by
    itself (login CSRF: a link sent by another learner): it waits in
    LINK_PENDING until the signed-in person confirms (switch_page). A `session`
    in the address bar counts for nothing: a copied URL signs nobody in.
    """
    if auth_configured() and getattr(st.user, "is_logged_in", False):
        return _oidc_current()
    live = _live_session()
    token = st.query_params.get("token")
    if not token:
        return live
    if live.user is not None:
        owner = signin.link_owner(store(), token)
        if owner is None or owner.id == live.user.id:  # a dead link, or one of their own: they stay signed in
            if owner is not None:
                _use_link(token)
            return live
        st.session_state[LINK_PENDING] = token
        return live
    return _use_link(token)


def _switch_to_link():
    """The signed-in person chose to sign in with the link they opened: their session in this browser ends."""
    token = st.session_state.pop(LINK_PENDING, None)
    previous = st.session_state.get(SESSION_KEY)
    result = _use_link(token)
    if result.session_token:
        store_sign_out(store(), previous)
    else:
        st.session_state[LINK_FAILED] = True


def _keep_session():
    st.session_state.pop(LINK_PENDING, None)


def switch_page(user):
    """A link of someone else was opened while `user` is signed in: ask before switching (and stop the run);
    nothing when the link is no longer usable."""
    other = signin.link_owner(store(), st.session_state.get(LINK_PENDING))
    if other is None:
        st.session_state.pop(LINK_PENDING, None)
        return
    st.title(tr("classroom.switch_title"))
    st.markdown(tr("classroom.switch_signed_in_as"))
    st.text(_identity(user))  # plain text: a roster name or address is never Markdown
    st.markdown(tr("classroom.switch_link_for"))
    st.text(_identity(other))
    st.warning(tr("classroom.switch_question"))
    left, right = st.columns(2)
    left.button(tr("classroom.switch_stay"), key="class_switch_stay", on_click=_keep_session, type="primary")
    right.button(tr("classroom.switch_go"), key="class_switch_go", on_click=_switch_to_link)
    st.stop()


def _identity(user):
    return f"{user.name} <{user.email}>" if user.name else user.email


def _cookie_script(value, max_age):  # without the route (`streamlit run app.py`): a cookie any script can read
    secure = "; Secure" if str(st.context.url or "").startswith("https:") else ""
    st.html(f"<script>document.cookie = '{COOKIE}={value}; Path=/; Max-Age={max_age}; SameSite=Strict{secure}';"
            "</script>", unsafe_allow_javascript=True)


def tidy_address():
    """Take a used link token (and any old `session`) out of the address bar; keep the session in a cookie.

    Called from the page, after st.navigation: changing the query parameters
    before it made Streamlit report the requested page as not found.
    """
    params = st.query_params
    for name in ("token", "session"):
        if name in params:
            del params[name]
    pending = st.session_state.get(COOKIE_PENDING)
    if pending:  # sent on every run of this tab: a run that switches pages (a link to "/") never reaches the browser
        _send_cookie(pending)
    if st.session_state.pop(COOKIE_CLEAR, False):
        if session_cookie.served():
            _page_script(f"fetch('{session_cookie.PATH}', {{method: 'DELETE', credentials: 'same-origin'}});")
        else:
            _cookie_script("", 0)


def _page_script(code):
    st.html(f"<script>{code}</script>", unsafe_allow_javascript=True)


def _send_cookie(token):
    """Have the browser keep this tab's session token in its cookie: set HttpOnly by the server's route (a
    one-time handoff code posted by the page, until the route took it), else written by the page."""
    max_age = 3600 * get_settings(store())["session_hours"]
    if not session_cookie.served():
        _cookie_script(token, max_age)
        return
    sent_for, code = st.session_state.get(HANDOFF, (None, None))
    if sent_for == token and not session_cookie.pending(code):
        st.session_state.pop(COOKIE_PENDING, None)  # the route took it: the cookie was set
        return
    if sent_for != token:
        code = session_cookie.new_handoff(token, max_age)
        st.session_state[HANDOFF] = (token, code)
    _page_script(f"fetch('{session_cookie.PATH}', {{method: 'POST', body: '{code}', credentials: 'same-origin'}});")


def sign_in_page(result):
    """What someone not signed in sees: the provider's button, or how links work."""
    st.title(tr("classroom.signin_title"))
    if result.problem == "not_on_roster":
        st.warning(tr("classroom.not_on_roster"))
        st.text(st.user.get("email", ""))  # plain text: an address is never Markdown
    elif result.problem == "session_expired" and getattr(st.user, "is_logged_in", False):
        st.warning(tr("classroom.session_ended_provider"))
    elif result.problem in ("link_invalid", "session_expired", "email_unverified"):
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
    if result.user is not None and st.session_state.get(LINK_PENDING):
        switch_page(result.user)
    if st.session_state.pop(LINK_FAILED, False):
        st.warning(tr("classroom.link_invalid"))
    if result.user is None:
        sign_in_page(result)
        st.stop()
    return result.user


def page_user(action):
    """The signed-in user if their role may do `action` (see classroom.web.access); else stop."""
    user = signed_in_user()
    try:
        return access.require(store(), user.id, action)
    except access.AccessDenied as denied:
        st.error(tr("classroom.denied", reason=str(denied)))
        st.stop()


def sign_out():
    """Revoke this browser's session."""
    store_sign_out(store(), st.session_state.pop(SESSION_KEY, None))
    st.session_state.pop(COOKIE_PENDING, None)
    st.session_state[SIGNED_OUT] = st.session_state[COOKIE_CLEAR] = True
    if auth_configured() and getattr(st.user, "is_logged_in", False):
        st.logout()


def sidebar_identity(user):
    """'Signed in as ...' and a sign-out button in the sidebar."""
    st.sidebar.caption(tr("classroom.signed_in_as", role=tr(f"classroom.role_{user.role}")))
    st.sidebar.text(user.name or user.email)  # plain text: a roster name is never Markdown
    instructor = instructor_name(store())
    if instructor and user.role != "instructor":  # who teaches the class (init --name)
        st.sidebar.caption(tr("classroom.instructor_label"))
        st.sidebar.text(instructor)
    st.sidebar.button(tr("classroom.sign_out"), key="class_sign_out", on_click=sign_out)
