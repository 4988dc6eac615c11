"""Sign-in links and sessions: creating and redeeming a link, the session a browser keeps, revoking them.

Every function here that takes the store is one transaction. Access rules are checked by the callers in
classroom/web/access.py; these functions trust their arguments.
"""

import hashlib
import secrets
from datetime import timedelta

from sqlalchemy import select, update



from .models import LoginSession, SignInToken, User, utcnow
from .settings import get_settings
from .text_rules import clean_email


def hash_token(token):
    """The stored form of a secret token (sha256 hex; the token itself holds 32 random bytes)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token():
    """A fresh url-safe secret token (32 random bytes)."""
    return secrets.token_urlsafe(32)


def create_sign_in_link(store, email, base_url="http://localhost:8501/"):
    """A one-time sign-in link for a user on the roster -> (url, expires_at); their older unused links stop working."""
    hours = get_settings(store)["link_hours"]
    token = new_token()
    now = utcnow()
    with store.session() as session:
        user = session.scalar(select(User).where(User.email == clean_email(email)))
        if user is None or user.removed_at is not None:
            raise LookupError(f"{email} is not on this class's roster")
        revoke_links_in(session, now, user.id)
        expires = now + timedelta(hours=hours)
        session.add(SignInToken(user_id=user.id, token_hash=hash_token(token), expires_at=expires))
    separator = "&" if "?" in base_url else "?"
    return f"{base_url}{separator}token={token}", expires


def redeem_sign_in_token(store, token):
    """Use a one-time token (once, before it expires) -> a new session token, or None."""
    now = utcnow()
    hours = get_settings(store)["session_hours"]
    with store.session() as session:
        link = session.scalar(select(SignInToken).where(SignInToken.token_hash == hash_token(token or "")))
        if link is None:
            return None
        used = session.execute(
            update(SignInToken)
            .where(SignInToken.id == link.id, SignInToken.used_at.is_(None), SignInToken.revoked_at.is_(None),
                   SignInToken.expires_at > now)
            .values(used_at=now)
        ).rowcount
        if used != 1 or session.get(User, link.user_id).removed_at is not None:
            return None
        return _new_session(session, link.user_id, now, hours)


def _new_session(session, user_id, now, hours):
    token = new_token()
    session.add(LoginSession(user_id=user_id, token_hash=hash_token(token),
                             expires_at=now + timedelta(hours=hours)))
    return token


def user_for_session(store, session_token):
    """The signed-in user of a live session token, or None (unknown, expired or revoked)."""
    if not session_token:
        return None
    with store.session() as session:
        row = session.scalar(select(LoginSession).where(LoginSession.token_hash == hash_token(session_token)))
        if row is None or row.revoked_at is not None or row.expires_at <= utcnow():
            return None
        user = session.get(User, row.user_id)
        return user if user.removed_at is None else None


def sign_out(store, session_token):
    """Revoke a session."""
    with store.session() as session:
        session.execute(update(LoginSession).where(LoginSession.token_hash == hash_token(session_token or ""))
                        .values(revoked_at=utcnow()))


def _user_ids(session, email):
    """[the id of the user with this email] (LookupError when unknown), or None for everyone."""
    if email is None:
        return None
    user_id = session.scalar(select(User.id).where(User.email == clean_email(email)))
    if user_id is None:
        raise LookupError(f"{email} is not on this class's roster")
    return [user_id]


def revoke_links_in(session, now, user_id=None):
    """Revoke the unused, unexpired links (of one user) -> how many."""
    query = update(SignInToken).where(SignInToken.used_at.is_(None), SignInToken.revoked_at.is_(None),
                                      SignInToken.expires_at > now)
    if user_id is not None:
        query = query.where(SignInToken.user_id == user_id)
    return session.execute(query.values(revoked_at=now)).rowcount


def revoke_sessions_in(session, now, user_id=None):
    """Revoke the live sessions (of one user) -> how many."""
    query = update(LoginSession).where(LoginSession.revoked_at.is_(None), LoginSession.expires_at > now)
    if user_id is not None:
        query = query.where(LoginSession.user_id == user_id)
    return session.execute(query.values(revoked_at=now)).rowcount


def revoke_links(store, email=None):
    """Revoke the unused sign-in links of one person (email) or of everyone (None) -> how many."""
    with store.session() as session:
        ids = _user_ids(session, email)
        return revoke_links_in(session, utcnow(), ids[0] if ids else None)


def revoke_sessions(store, email=None):
    """Sign out one person (email) or everyone (None) on every browser -> sessions revoked."""
    with store.session() as session:
        ids = _user_ids(session, email)
        return revoke_sessions_in(session, utcnow(), ids[0] if ids else None)
