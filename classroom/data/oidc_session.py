"""Server-side sessions for OpenID Connect sign-ins: Streamlit's own cookie alone never signs anyone in.

Streamlit keeps the provider's identity in a signed cookie for 30 days and
cannot revoke it. Each sign-in (one ID token: issuer, subject, issue time) gets
a LoginSession row here instead, keyed by an HMAC of those claims under the
app's cookie secret; the class's session lifetime runs from the token's issue
time, and signing out revokes the row, so a replayed cookie signs nobody in. After a restore
(classroom/data/backup.py) the settings row NOT_BEFORE holds its time: an ID token issued before it opens no
session (the restored database may lack the row that revoked it).
"""

import hashlib
import hmac
from datetime import UTC, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from .sessions import hash_token
from .settings import get_settings
from .models import LoginSession, Setting, utcnow

NOT_BEFORE = "sessions_not_before"  # the settings row (not a class setting): no session for sign-ins issued before


def session_key(secret, claims):
    """The session token of one ID token's sign-in, or None when the claims carry no issue time."""
    issued = claims.get("iat")
    if not isinstance(issued, (int, float)) or not secret:
        return None
    message = f"{claims.get('iss', '')}|{claims.get('sub', '')}|{int(issued)}".encode()
    return "oidc-" + hmac.new(str(secret).encode(), message, hashlib.sha256).hexdigest()


def _issued_at(claims):
    return datetime.fromtimestamp(int(claims["iat"]), UTC).replace(tzinfo=None)  # the store keeps naive UTC


def is_live(store, user_id, key, claims):
    """Open this sign-in's session on first sight; is it still live (not revoked, not past its lifetime)?"""
    digest = hash_token(key)
    hours = get_settings(store)["session_hours"]  # read first: SQLite allows one writer at a time
    with store.session() as session:
        row = session.scalar(select(LoginSession).where(LoginSession.token_hash == digest))
        if row is None:
            issued = _issued_at(claims)
            not_before = session.get(Setting, NOT_BEFORE)
            if not_before is not None and issued < datetime.fromisoformat(not_before.value):
                return False
            row = LoginSession(user_id=user_id, token_hash=digest, created_at=issued,
                               expires_at=issued + timedelta(hours=hours))
            try:
                with session.begin_nested():
                    session.add(row)
            except IntegrityError:  # another run of the same browser opened it first
                row = session.scalar(select(LoginSession).where(LoginSession.token_hash == digest))
        return row.user_id == user_id and row.revoked_at is None and row.expires_at > utcnow()
