"""The class session cookie set by the server: HttpOnly (no script on the page can read it), SameSite=Strict,
Secure behind https.

A Streamlit script cannot answer an HTTP request, and a cookie written by the
page's JavaScript can always be read by JavaScript. So class mode runs as an
st.App (class_app.py at the project root) with one route of its own,
/class/session: a tab that has just been signed in by a link hands the server
a one-time handoff code (never the session token itself) in a same-origin
POST, and the answer sets the cookie; DELETE expires it (signing out). The
codes live in this process's memory for HANDOFF_S seconds: the script and the
route run in the same server process.

Started as `streamlit run app.py` instead (development), the route is not
there (`served()` is false) and classroom.web.web falls back to a cookie written
by the page, which is not HttpOnly.
"""

import hashlib
import os
import secrets
import threading
import time
from urllib.parse import urlsplit

from starlette.responses import Response
from starlette.routing import Route

PATH = "/class/session"
COOKIE = "attention_lab_session"  # this browser's session token (a link sign-in)
HANDOFF_S = 120.0  # a handoff code not used by then is forgotten
_handoffs = {}  # sha256 of a code -> (session token, cookie max-age s, monotonic expiry)
_lock = threading.Lock()
SERVED_VAR = "ATTENTION_LAB_SESSION_ROUTE"  # set in this process by routes(): the route is there


def _served_mark():
    """The value routes() leaves in SERVED_VAR: the route and this process's id. A process started from this one
    (a `streamlit run app.py` a test starts, a lab run) inherits the variable but not the route."""
    return f"{PATH}@{os.getpid()}"


def served():
    """Does this server answer PATH (started through class_app.py, in this very process)?"""
    return os.environ.get(SERVED_VAR) == _served_mark()


def _digest(code):
    return hashlib.sha256(str(code).encode()).hexdigest()


def new_handoff(session_token, max_age_s):
    """A one-time code the page trades for the cookie of `session_token` -> the code."""
    code = secrets.token_urlsafe(32)
    now = time.monotonic()
    with _lock:
        for key in [key for key, (_, _, expires) in _handoffs.items() if expires <= now]:
            del _handoffs[key]
        _handoffs[_digest(code)] = (session_token, int(max_age_s), now + HANDOFF_S)
    return code


def pending(code):
    """Is the handoff code still unused (and unexpired)?"""
    with _lock:
        entry = _handoffs.get(_digest(code))
    return entry is not None and entry[2] > time.monotonic()


def take_handoff(code):
    """Use a handoff code (once, before it expires) -> (session token, max-age s) or None."""
    with _lock:
        entry = _handoffs.pop(_digest(code), None)
    if entry is None or entry[2] <= time.monotonic():
        return None
    return entry[0], entry[1]


def _same_origin(request):
    """Was the request sent by a page of this site (its Origin is this host; a browser sends it with a POST)?"""
    origin = request.headers.get("origin")
    host = request.headers.get("x-forwarded-host") or request.headers.get("host")
    return bool(origin) and urlsplit(origin).netloc == host and request.headers.get("sec-fetch-site",
                                                                                     "same-origin") == "same-origin"


def _secure(request):
    return request.url.scheme == "https" or request.headers.get("x-forwarded-proto", "") == "https"


async def session_endpoint(request):
    """POST a handoff code: 204 with the HttpOnly session cookie; DELETE: 204 expiring it; 403 from another
    site, 400 for a code unknown, used or expired."""
    if not _same_origin(request):
        return Response("requests from other sites are refused", status_code=403)
    answer = Response(status_code=204)
    if request.method == "DELETE":
        answer.delete_cookie(COOKIE, path="/", secure=_secure(request), httponly=True, samesite="strict")
        return answer
    taken = take_handoff((await request.body())[:200].decode("ascii", "replace").strip())
    if taken is None:
        return Response("this handoff code is unknown, used or expired: reload the page", status_code=400)
    token, max_age = taken
    answer.set_cookie(COOKIE, token, max_age=max_age, path="/", secure=_secure(request), httponly=True,
                      samesite="strict")
    return answer


def routes():
    """The routes class_app.py adds to Streamlit's (and from then on served() is true)."""
    os.environ[SERVED_VAR] = _served_mark()
    return [Route(PATH, session_endpoint, methods=["POST", "DELETE"])]
