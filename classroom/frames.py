"""Read the store into pandas frames for the gradebook, analytics and export."""

import pandas as pd
from sqlalchemy import select

from .models import Result, Submission, User
from .results import newest_result_ids

COLUMNS = ["submission_id", "user_id", "email", "name", "role", "exercise_id", "created_at", "late",
           "submission_status", "status", "passed", "score", "raw_score", "mistake_ids", "summary"]


def submissions_frame(store, user_id=None):
    """One row per submission with its newest result (status None while ungraded)."""
    newest = newest_result_ids()
    query = (
        select(Submission.id, Submission.user_id, User.email, User.name, User.role, Submission.exercise_id,
               Submission.created_at, Submission.late, Submission.status, Result.status, Result.passed,
               Result.score, Result.raw_score, Result.mistake_ids, Result.summary)
        .join(User, User.id == Submission.user_id)
        .outerjoin(newest, newest.c.submission_id == Submission.id)
        .outerjoin(Result, Result.id == newest.c.result_id)
        .order_by(Submission.id)
    )
    if user_id is not None:
        query = query.where(Submission.user_id == user_id)
    with store.session() as session:
        rows = session.execute(query).all()
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame["mistake_ids"] = frame["mistake_ids"].map(lambda ids: ids if isinstance(ids, list) else [])
    frame["passed"] = frame["passed"].astype("boolean").fillna(False).astype(bool)
    return frame


def learners(store):
    """(email, name) of every learner on the roster."""
    with store.session() as session:
        return [tuple(r) for r in session.execute(
            select(User.email, User.name).where(User.role == "learner").order_by(User.email))]
