"""Roles and access: every role x action, checked on the server from the database's role."""

import pytest
from sqlalchemy import update

from classroom.web import access
from classroom.data.sessions import user_for_session
from classroom.data.models import User
from tests.classroom_support import INSTRUCTOR, add_graded, session_token, user_id

ROLE_EMAIL = {"learner": "ann@class.test", "ta": "ta@class.test", "instructor": INSTRUCTOR}
# action -> roles that may do it (written out here, independently of access.PERMISSIONS)
EXPECTED = {
    "submit": {"learner", "ta", "instructor"},
    "own_history": {"learner", "ta", "instructor"},
    "read_other": {"ta", "instructor"},
    "history_of_other": {"ta", "instructor"},
    "gradebook": {"ta", "instructor"},
    "analytics": {"ta", "instructor"},
    "regrade": {"ta", "instructor"},
}


def _do(store, actor_id, action, tmp_path, bob_submission, bob_id):
    """Perform one action as the actor."""
    if action == "submit":
        return access.submit(store, actor_id, "ex00", "x = 1\n", "ex00_paths.py")
    if action == "own_history":
        return access.history(store, actor_id)
    if action == "read_other":
        return access.submission_detail(store, actor_id, bob_submission)
    if action == "history_of_other":
        return access.history(store, actor_id, user_id=bob_id)
    if action == "gradebook":
        return access.gradebook(store, actor_id)
    if action == "analytics":
        return access.class_frame(store, actor_id)
    if action == "regrade":
        return access.regrade(store, actor_id, [bob_submission])
    raise AssertionError(action)


@pytest.mark.parametrize("role", ["learner", "ta", "instructor"])
@pytest.mark.parametrize("action", sorted(EXPECTED))
def test_role_action_matrix(class_store, tmp_path, role, action):
    bob_submission = add_graded(class_store, "bob@class.test", "ex03", 0.5, "failed", ["dot_no_scale"])
    actor_id = user_id(class_store, ROLE_EMAIL[role])
    bob_id = user_id(class_store, "bob@class.test")
    if role in EXPECTED[action]:
        _do(class_store, actor_id, action, tmp_path, bob_submission, bob_id)
    else:
        with pytest.raises(access.AccessDenied):
            _do(class_store, actor_id, action, tmp_path, bob_submission, bob_id)


def test_a_learner_never_reads_another_learners_submission(class_store):
    mine = add_graded(class_store, "ann@class.test", "ex01", 1.0, "passed")
    theirs = add_graded(class_store, "bob@class.test", "ex01", 0.5, "failed")
    ann = user_id(class_store, "ann@class.test")
    assert access.submission_detail(class_store, ann, mine)["email"] == "ann@class.test"
    with pytest.raises(access.AccessDenied) as denied:
        access.submission_detail(class_store, ann, theirs)
    with pytest.raises(access.AccessDenied) as missing:
        access.submission_detail(class_store, ann, theirs + 100)
    assert str(denied.value).replace(str(theirs), "N") == str(missing.value).replace(str(theirs + 100), "N")
    assert set(access.history(class_store, ann)["email"]) == {"ann@class.test"}


def test_the_role_is_read_from_the_database_on_every_call(class_store):
    ta = user_id(class_store, "ta@class.test")
    access.gradebook(class_store, ta)
    with class_store.session() as session:  # the instructor demotes the TA
        session.execute(update(User).where(User.id == ta).values(role="learner"))
    with pytest.raises(access.AccessDenied):
        access.gradebook(class_store, ta)


def test_unknown_or_missing_actors_are_refused(class_store):
    for actor_id in (None, 999999):
        with pytest.raises(access.AccessDenied, match="sign in first"):
            access.history(class_store, actor_id)


def test_a_session_token_maps_to_its_own_user_only(class_store):
    ann = user_id(class_store, "ann@class.test")
    token = session_token(class_store, ann)
    assert user_for_session(class_store, token).id == ann
    assert user_for_session(class_store, token[:-1] + ("A" if token[-1] != "A" else "B")) is None
