"""The LMS outbox's write side: a stored score makes its learner x exercise due in each LMS course.

Every stored verdict (submissions.store_verdict: a submission graded, a job given up, a regrade) and every extension
or override granted or cleared (adjustments.py) bumps the outbox row of its learner x exercise in each LMS course
that learner belongs to, in its own transaction, so no change is ever lost. The rows live here, with the data,
so the queue and the adjustments make them due without importing the LMS side: classroom/lti/outbox.py reads
the due rows and records what it pushed.
"""

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from .models import LtiContext, LtiMember, LtiScore, utcnow


def passback_courses(session, user_id):
    """The ids of the LMS courses (with a gradebook service) this user belongs to."""
    return list(session.scalars(
        select(LtiMember.context_pk).join(LtiContext, LtiContext.id == LtiMember.context_pk)
        .where(LtiMember.user_id == user_id, LtiContext.lineitems_url.is_not(None))))


def mark_changed(session, user_id, exercise_id, now=None):
    """Make this learner x exercise due in each of their LMS courses (inside the caller's transaction)."""
    now = now or utcnow()
    for context_pk in passback_courses(session, user_id):
        where = (LtiScore.context_pk == context_pk, LtiScore.user_id == user_id, LtiScore.exercise_id == exercise_id)
        bump = update(LtiScore).where(*where).values(version=LtiScore.version + 1, due=True)
        if session.execute(bump).rowcount:
            continue
        try:
            with session.begin_nested():
                session.add(LtiScore(context_pk=context_pk, user_id=user_id, exercise_id=exercise_id,
                                     next_try_at=now))
        except IntegrityError:  # another verdict made the row first
            session.execute(bump)
