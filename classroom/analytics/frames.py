"""Read the store into pandas frames for the gradebook, analytics and export."""

import json

import pandas as pd
from sqlalchemy import func, select, type_coerce
from sqlalchemy.types import NullType

from ..data.models import AdjustmentLog, Job, Result, Submission, User
from ..data.which_counts import newest_result_ids

PEOPLE = ("email", "name", "role")  # read from the roster on every call: a rename shows at once
COLUMNS = ["submission_id", "user_id", "email", "name", "role", "exercise_id", "created_at", "late",
           "submission_status", "status", "passed", "score", "raw_score", "mistake_ids", "summary", "variant"]


def _raw(column):
    """The column as the database driver returns it: the frame converts whole columns at once (SQLAlchemy's
    per-value conversion of dates, JSON and booleans was most of the time for 100,000 rows)."""
    return type_coerce(column, NullType())


def _id_list(value):
    """mistake_ids as stored: a JSON text (SQLite), a list (Postgres) or nothing."""
    if isinstance(value, str):
        value = json.loads(value)
    return value if isinstance(value, list) else []


def _plain_rows(store, query):
    """The query's rows as plain tuples straight from the driver's cursor (no Row objects: for 100,000
    rows these took longer than the query). Its only parameters are integers, written into the SQL."""
    sql = str(query.compile(dialect=store.engine.dialect, compile_kwargs={"literal_binds": True}))
    with store.session() as session:
        cursor = session.connection().connection.dbapi_connection.cursor()
        try:
            cursor.execute(sql)
            return cursor.fetchall()
        finally:
            cursor.close()


def submissions_frame(store, user_id=None):
    """One row per submission with its newest result (status None while ungraded)."""
    newest = newest_result_ids()
    query = (
        select(Submission.id, Submission.user_id, Submission.exercise_id,
               _raw(Submission.created_at), _raw(Submission.late), Submission.status, Result.status,
               _raw(Result.passed), Result.score, Result.raw_score, _raw(Result.mistake_ids), Result.summary,
               Submission.variant)
        .outerjoin(newest, newest.c.submission_id == Submission.id)
        .outerjoin(Result, Result.id == newest.c.result_id)
        .order_by(Submission.id)
    )
    if user_id is not None:
        query = query.where(Submission.user_id == user_id)
    frame = pd.DataFrame.from_records(_plain_rows(store, query), columns=[c for c in COLUMNS if c not in PEOPLE])
    frame["created_at"] = pd.to_datetime(frame["created_at"], format="ISO8601")
    frame["late"] = frame["late"].astype("boolean").fillna(False).astype(bool)
    stored = frame["mistake_ids"].to_numpy(dtype=object)  # plain objects: iterating pandas' Arrow strings cost ~0.2 s
    texts = {value: _id_list(value) for value in {v for v in stored if isinstance(v, str)}}
    frame["mistake_ids"] = [texts[v] if isinstance(v, str) else _id_list(v) for v in stored]
    frame["passed"] = frame["passed"].astype("boolean").fillna(False).astype(bool)
    return _with_people(frame, store)


def _with_people(frame, store):
    """The frame with each submitter's email, name and role, read now (from the roster, not per row), in COLUMNS order."""
    with store.session() as session:
        people = pd.DataFrame(session.execute(select(User.id, *(getattr(User, c) for c in PEOPLE))).all(),
                              columns=["user_id", *PEOPLE]).set_index("user_id")
    for column in PEOPLE:
        frame[column] = frame["user_id"].map(people[column])
    return frame[COLUMNS]


def learners(store):
    """(email, name) of every learner on the roster."""
    with store.session() as session:
        return [tuple(r) for r in session.execute(
            select(User.email, User.name).where(User.role == "learner").order_by(User.email))]


KEPT = "class_frame"  # this module's entry in Store.kept: (version, the class's submissions frame)


def _version(store):
    """What changes whenever the class frame's grading columns can: submissions added, verdicts stored, jobs
    queued (a regrade decides lateness again), extensions granted or cleared (they decide it again too, in place:
    each is logged, classroom/data/adjustments.py). A submission's queue status is not covered (only a learner's
    history shows it, from submissions_frame); names and roles are read afresh on every call."""
    with store.session() as session:
        return tuple(session.execute(select(
            select(func.max(Submission.id)).scalar_subquery(), select(func.count(Submission.id)).scalar_subquery(),
            select(func.max(Result.id)).scalar_subquery(), select(func.count(Result.id)).scalar_subquery(),
            select(func.max(Job.id)).scalar_subquery(), select(func.max(AdjustmentLog.id)).scalar_subquery())).one())


def class_frame(store):
    """submissions_frame(store) of the whole class, kept on the store (Store.kept) and read again only when
    _version changes (a gradebook page's every filter, pick or visit reused 100,000 rows instead of reading
    them, ~1 s)."""
    version = _version(store)
    entry = store.kept(KEPT)
    with entry.lock:
        if entry.value is None or entry.value[0] != version:
            entry.value = (version, submissions_frame(store))
        frame = entry.value[1]
    return _with_people(frame.copy(), store)
