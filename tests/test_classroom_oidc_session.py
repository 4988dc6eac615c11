"""Server-side sessions of provider sign-ins: opened on first sight, revoked by sign-out, bounded by the lifetime."""

import time

from classroom.data import oidc_session
from classroom.data.sessions import sign_out
from classroom.data.settings import get_settings
from tests.classroom_support import user_id


def _claims(age_s=0, sub="ann"):
    return {"iss": "https://id.school.test", "sub": sub, "iat": int(time.time() - age_s), "email": "ann@class.test"}


def test_a_sign_in_stays_live_until_signed_out(class_store):
    ann, claims = user_id(class_store, "ann@class.test"), _claims()
    key = oidc_session.session_key("secret", claims)
    assert oidc_session.is_live(class_store, ann, key, claims)
    assert oidc_session.is_live(class_store, ann, key, claims)  # the next run finds the same session
    sign_out(class_store, key)
    assert not oidc_session.is_live(class_store, ann, key, claims)  # the same ID token, replayed
    again = _claims(age_s=-5)  # a new sign-in with the provider: a new issue time
    assert oidc_session.is_live(class_store, ann, oidc_session.session_key("secret", again), again)


def test_the_lifetime_runs_from_the_tokens_issue_time(class_store):
    ann = user_id(class_store, "ann@class.test")
    hours = get_settings(class_store)["session_hours"]
    old = _claims(age_s=hours * 3600 + 60)
    assert not oidc_session.is_live(class_store, ann, oidc_session.session_key("secret", old), old)


def test_the_key_depends_on_the_secret_and_needs_an_issue_time():
    claims = _claims()
    assert oidc_session.session_key("a", claims) != oidc_session.session_key("b", claims)
    assert oidc_session.session_key("a", claims) != oidc_session.session_key("a", _claims(sub="bob"))
    assert oidc_session.session_key("a", {"sub": "ann"}) is None
