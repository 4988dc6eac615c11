"""The passback outbox: which learner x exercise scores the LMS courses still have to receive.

Every stored verdict (a submission graded, a regrade, a late penalty applied by
one) bumps the row of its learner x exercise in each LMS course that learner
belongs to, in the verdict's own transaction, so no change is ever lost: the data wing
does that (classroom/data/lms_outbox.py, through submissions.store_verdict), so the queue never imports the LMS. A row
is `due` until a push of its newest version succeeded; the score pushed is read
when it is pushed, by the gradebook's rule (classroom.data.which_counts.counted_scores: the
best over the verdicts which_counts.ATTEMPTED counts, or the score staff set in its
place), so it is always the committed score. An extension or override granted or
cleared (classroom/data/adjustments.py) bumps the row in its own transaction too. This module reads the due
rows, records what was pushed, and makes a new member's scores due (`mark_member`).
"""

from datetime import timedelta

from sqlalchemy import bindparam, select, update

from ..data.models import LtiScore, ScoreOverride, Submission, utcnow
from ..data.which_counts import counted_scores


def mark_member(session, user_id, context_pk, now=None):
    """Make every exercise this learner has submitted, or has a score override of, due in one course (they just
    joined it)."""
    exercise_ids = set(session.scalars(select(Submission.exercise_id).where(Submission.user_id == user_id)))
    exercise_ids |= set(session.scalars(select(ScoreOverride.exercise_id).where(ScoreOverride.user_id == user_id)))
    known = set(session.scalars(select(LtiScore.exercise_id).where(LtiScore.context_pk == context_pk,
                                                                    LtiScore.user_id == user_id)))
    for exercise_id in sorted(exercise_ids - known):
        session.add(LtiScore(context_pk=context_pk, user_id=user_id, exercise_id=exercise_id,
                             next_try_at=now or utcnow()))


def due_rows(session, now, limit=1000):
    """Up to `limit` due outbox rows whose retry time has come, oldest retry first."""
    return list(session.scalars(select(LtiScore).where(LtiScore.due.is_(True), LtiScore.next_try_at <= now)
                                .order_by(LtiScore.next_try_at, LtiScore.id).limit(limit)))


def best_scores(session, user_ids):
    """{(user id, exercise id): the score that counts} of these users, as the gradebook has it (no entry: nothing
    attempted nor overridden; which_counts.counted_scores)."""
    return counted_scores(session, user_ids)


def record_pushed(session, pushes):
    """Pushes that succeeded, [(row id, version, score, timestamp)]: each row is done unless a newer verdict
    came meanwhile (one statement for them all)."""
    if not pushes:
        return
    table = LtiScore.__table__
    statement = update(table).where(table.c.id == bindparam("row_id")).values(
        pushed_version=bindparam("sent_version"), pushed_score=bindparam("score"), pushed_at=bindparam("stamp"),
        tries=0, last_error="", due=table.c.version != bindparam("sent_version"))
    session.connection().execute(statement, [dict(row_id=row_id, sent_version=version, score=score, stamp=stamp)
                                             for row_id, version, score, stamp in pushes])


def record_failed(session, row_id, message, now, tries):
    """A push failed: keep the row due, retry after a backoff (2, 4, 8 ... s, at most 5 min)."""
    wait = min(2 ** min(tries + 1, 9), 300)
    session.execute(update(LtiScore).where(LtiScore.id == row_id).values(
        tries=tries + 1, last_error=message[:2000], next_try_at=now + timedelta(seconds=wait)))
