"""pylti1p3's request, cookie and session interfaces over a Starlette request and the class database.

pylti1p3 validates the id_token (signature against the platform's JWKS,
issuer, audience, deployment, expiry, message type). Its default session
store keeps nonces in a web framework's session and never forgets them; here
each OIDC login's state (hashed) and nonce go into `lti_launch_states`, and a
launch consumes its row once, before its expiry, or is refused.
"""

import hashlib
from datetime import timedelta

from pylti1p3.cookie import CookieService
from pylti1p3.message_launch import MessageLaunch
from pylti1p3.oidc_login import OIDCLogin
from pylti1p3.redirect import Redirect
from pylti1p3.request import Request
from pylti1p3.session import SessionService
from sqlalchemy import delete, select, update
from starlette.responses import RedirectResponse

from ..data.models import LtiLaunchState, utcnow

STATE_MINUTES = 10  # an OIDC login must come back as a launch this soon


def digest(text):
    """sha256 hex of a state (only hashes of states are stored)."""
    return hashlib.sha256(str(text).encode()).hexdigest()


class LtiRequest(Request):
    """A Starlette request's form and query parameters and cookies, read before validation."""

    def __init__(self, params, cookies, secure):
        self.params, self.cookies, self.secure = dict(params), dict(cookies), secure

    @property
    def session(self):
        return None

    def is_secure(self):
        return self.secure

    def get_param(self, key):
        return self.params.get(key)


class LtiCookies(CookieService):
    """The state cookie: read from the request, written onto the response by `apply`."""

    def __init__(self, request):
        self.request, self.outgoing = request, []

    def _name(self, name):
        return f"{self._cookie_prefix}-{name}"

    def get_cookie(self, name):
        return self.request.cookies.get(self._name(name))

    def set_cookie(self, name, value, exp=3600):
        self.outgoing.append((self._name(name), str(value), exp))

    def apply(self, response):
        """Set the collected cookies (SameSite=None over https: the launch is a cross-site form post)."""
        secure = self.request.is_secure()
        for name, value, exp in self.outgoing:
            response.set_cookie(name, value, max_age=exp, path="/lti", httponly=True, secure=secure,
                                samesite="none" if secure else "lax")
        return response


class StoreSessions(SessionService):
    """Launch states in the class database; `problem` says why check_nonce refused (a message key)."""

    def __init__(self, request, store):
        self.request, self.store = request, store
        self.pending_nonce, self.problem, self.platform_id = None, None, None

    def save_nonce(self, nonce):
        self.pending_nonce = nonce  # stored with its state by save_state_params, which the login calls next

    def save_state_params(self, state, params):
        now = utcnow()
        with self.store.session() as session:
            session.execute(delete(LtiLaunchState).where(LtiLaunchState.expires_at < now - timedelta(days=1)))
            session.add(LtiLaunchState(state_hash=digest(state), nonce=self.pending_nonce,
                                       platform_id=params["platform_id"], created_at=now,
                                       expires_at=now + timedelta(minutes=STATE_MINUTES)))

    def get_state_params(self, state):
        with self.store.session() as session:
            row = session.scalar(select(LtiLaunchState).where(LtiLaunchState.state_hash == digest(state)))
            return {"platform_id": row.platform_id} if row else {}

    def check_nonce(self, nonce):
        """Consume the login's state and nonce together, once, before they expire."""
        state_hash, now = digest(self.request.get_param("state") or ""), utcnow()
        with self.store.session() as session:
            used = session.execute(update(LtiLaunchState).where(
                LtiLaunchState.state_hash == state_hash, LtiLaunchState.nonce == nonce,
                LtiLaunchState.used_at.is_(None), LtiLaunchState.expires_at > now).values(used_at=now)).rowcount
            row = session.scalar(select(LtiLaunchState).where(LtiLaunchState.state_hash == state_hash))
        if used == 1:
            self.platform_id = row.platform_id
            return True
        if row is None or row.nonce != nonce:
            self.problem = "nonce_unknown"
        else:
            self.problem = "replayed" if row.used_at is not None else "state_expired"
        return False

    def check_state_is_valid(self, state, id_token_hash):
        return False  # a launch is never accepted twice (pylti1p3 would let the same id_token in again)

    def set_state_valid(self, state, id_token_hash):
        return None

    def save_launch_data(self, key, jwt_body):
        return None  # launches are not restored later: the app gets a sign-in link instead

    def get_launch_data(self, key):
        return None


class StarletteRedirect(Redirect):
    def __init__(self, location, cookies):
        self.location, self.cookies = location, cookies

    def do_redirect(self):
        return self.cookies.apply(RedirectResponse(self.location, status_code=302))

    do_js_redirect = do_redirect

    def set_redirect_url(self, location):
        self.location = location

    def get_redirect_url(self):
        return self.location


class StoreOIDCLogin(OIDCLogin):
    """pylti1p3's OIDC login answering with a Starlette redirect (and the state cookie)."""

    def get_redirect(self, url):
        return StarletteRedirect(url, self._cookie_service)


class StoreMessageLaunch(MessageLaunch):
    """pylti1p3's launch validation over LtiRequest."""

    def _get_request_param(self, key):
        return self._request.get_param(key)
