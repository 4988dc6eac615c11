"""Who is signed in, from what the browser brings: an OpenID Connect email, a link token, a session token.

The app keeps only a session token (and Streamlit's own OIDC cookie); the user
and role are read from the database on every run, so nothing the browser
sends can raise a role.
"""

from dataclasses import dataclass

from sqlalchemy import select

from ..data.roster import user_by_email
from ..data.sessions import hash_token, redeem_sign_in_token, user_for_session
from ..data.models import SignInToken, User, utcnow


@dataclass
class SignIn:
    user: object = None  # the User, or None
    session_token: str | None = None  # a session token to keep (a link was just used)
    problem: str | None = None  # signed_out | link_invalid | session_expired | not_on_roster | email_unverified


def resolve(store, oidc_email=None, link_token=None, session_token=None, email_verified=False):
    """The signed-in user from the strongest evidence given -> SignIn.

    An OpenID Connect email counts only when the provider says it verified it
    (`email_verified` true): anyone can put someone else's address on an account.
    """
    if oidc_email:
        if email_verified is not True:
            return SignIn(problem="email_unverified")
        user = user_by_email(store, oidc_email)
        return SignIn(user=user) if user and user.removed_at is None else SignIn(problem="not_on_roster")
    if link_token:
        token = redeem_sign_in_token(store, link_token)
        if token is None:
            return SignIn(problem="link_invalid")
        return SignIn(user=user_for_session(store, token), session_token=token)
    if session_token:
        user = user_for_session(store, session_token)
        return SignIn(user=user) if user else SignIn(problem="session_expired")
    return SignIn(problem="signed_out")


def link_owner(store, link_token):
    """The roster user a one-time link would sign in (still unused, unrevoked, unexpired), without using it ->
    User or None."""
    if not link_token:
        return None
    with store.session() as session:
        link = session.scalar(select(SignInToken).where(SignInToken.token_hash == hash_token(link_token)))
        if link is None or link.used_at is not None or link.revoked_at is not None or link.expires_at <= utcnow():
            return None
        user = session.get(User, link.user_id)
        return user if user.removed_at is None else None
