"""Sign-in resolution: OIDC email against the roster, one-time links, sessions."""

from classroom.web import signin
from classroom.data.sessions import create_sign_in_link


def test_oidc_email_must_be_on_the_roster(class_store):
    assert signin.resolve(class_store, oidc_email="Ann@Class.test", email_verified=True).user.email == "ann@class.test"
    assert signin.resolve(class_store, oidc_email="stranger@else.where", email_verified=True).problem == "not_on_roster"


def test_a_link_signs_in_once_and_leaves_a_session(class_store):
    link, _ = create_sign_in_link(class_store, "bob@class.test")
    token = link.split("token=")[1]
    first = signin.resolve(class_store, link_token=token)
    assert first.user.email == "bob@class.test" and first.session_token
    assert signin.resolve(class_store, link_token=token).problem == "link_invalid"
    assert signin.resolve(class_store, session_token=first.session_token).user.email == "bob@class.test"
    assert signin.resolve(class_store, session_token="forged").problem == "session_expired"
    assert signin.resolve(class_store).problem == "signed_out"
