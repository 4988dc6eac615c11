"""The class store: SQLAlchemy 2 models. Schema changes go through classroom/migrations.

All times are naive UTC datetimes (`utcnow()`), written by the application so
that SQLite and Postgres behave alike.
"""

from datetime import UTC, datetime

from sqlalchemy import JSON, Boolean, DateTime, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

ROLES = ("learner", "ta", "instructor")
SUBMISSION_STATES = ("queued", "grading", "done", "error")  # a submission's latest job, for learners
JOB_STATES = ("queued", "running", "done", "error")
KINDS = (".py", ".ipynb")
LATE_POLICIES = ("accept", "close")  # accept with a penalty inside a window, or refuse after the deadline


def utcnow():
    """Now as a naive UTC datetime (the store's time convention)."""
    return datetime.now(UTC).replace(tzinfo=None)


class Base(DeclarativeBase):
    pass


class User(Base):
    __tablename__ = "users"
    id: Mapped[int] = mapped_column(primary_key=True)
    email: Mapped[str] = mapped_column(String(320), unique=True)  # stored lower-case
    name: Mapped[str] = mapped_column(String(200), default="")
    role: Mapped[str] = mapped_column(String(16))  # one of ROLES
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    removed_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)  # off the roster: no sign-in


class SignInToken(Base):
    """A one-time sign-in link: only the sha256 of its random token is stored."""

    __tablename__ = "sign_in_tokens"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime)
    used_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)


class LoginSession(Base):
    """A signed-in browser: the sha256 of its session token, with an expiry."""

    __tablename__ = "sessions"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)


class Submission(Base):
    __tablename__ = "submissions"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    exercise_id: Mapped[str] = mapped_column(String(16), index=True)
    source: Mapped[str] = mapped_column(Text)  # the .py text, or the notebook's JSON text
    kind: Mapped[str] = mapped_column(String(8))  # one of KINDS
    filename: Mapped[str] = mapped_column(String(255), default="")
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    status: Mapped[str] = mapped_column(String(16), default="queued")  # one of SUBMISSION_STATES
    attempts: Mapped[int] = mapped_column(Integer, default=0)  # grading attempts (a dead worker's count)
    late: Mapped[bool] = mapped_column(Boolean, default=False)
    penalty: Mapped[float] = mapped_column(Float, default=0.0)  # fraction of the score removed for lateness
    lang: Mapped[str] = mapped_column(String(8), default="en", server_default="en")  # the learner's feedback language
    user: Mapped[User] = relationship()


class Job(Base):
    """One grading of one submission; a worker holds it by a lease it renews."""

    __tablename__ = "jobs"
    __table_args__ = (Index("ix_jobs_state_id", "state", "id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id"), index=True)
    reason: Mapped[str] = mapped_column(String(16), default="submit")  # submit | regrade
    state: Mapped[str] = mapped_column(String(16), default="queued")  # one of JOB_STATES
    worker_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    lease_until: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)  # also the fencing token of a claim
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    error: Mapped[str] = mapped_column(Text, default="")
    submission: Mapped[Submission] = relationship()


class Result(Base):
    """The verdict of one job, from the grader's JSON report (version 1)."""

    __tablename__ = "results"
    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id"), index=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id"), unique=True)  # graded once per job
    status: Mapped[str] = mapped_column(String(16))  # the grader's status (exercise_index.GRADER_STATUSES)
    passed: Mapped[bool] = mapped_column(Boolean)
    raw_score: Mapped[float] = mapped_column(Float)  # the grader's score
    score: Mapped[float] = mapped_column(Float)  # after the late penalty
    summary: Mapped[str] = mapped_column(Text, default="")
    checks: Mapped[list] = mapped_column(JSON, default=list)  # the report's per-check dicts
    mistake_ids: Mapped[list] = mapped_column(JSON, default=list)  # mistakes recognised (known, or "auto:..." found)
    report: Mapped[dict] = mapped_column(JSON, default=dict)  # the whole version-1 report
    sandbox: Mapped[str] = mapped_column(String(16), default="")  # strict | process
    grader_version: Mapped[str] = mapped_column(String(64), default="")
    run_s: Mapped[float] = mapped_column(Float, default=0.0)  # the sandboxed run
    grading_s: Mapped[float] = mapped_column(Float, default=0.0)  # claim to verdict
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class Note(Base):
    """A learner's self-study note for one page (the Notes page in class mode); empty notes are deleted."""

    __tablename__ = "notes"
    __table_args__ = (UniqueConstraint("user_id", "page_key", name="uq_notes_user_page"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    page_key: Mapped[str] = mapped_column(String(64))  # a chapter key such as 'ch01'
    text: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class ExerciseRule(Base):
    """Deadline and late policy of one exercise (no row: no deadline)."""

    __tablename__ = "exercise_rules"
    exercise_id: Mapped[str] = mapped_column(String(16), primary_key=True)
    deadline: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    late_policy: Mapped[str] = mapped_column(String(16), default="accept")  # one of LATE_POLICIES
    late_window_h: Mapped[float] = mapped_column(Float, default=0.0)  # accepted this long after the deadline
    late_penalty: Mapped[float] = mapped_column(Float, default=0.0)  # fraction of the score removed


class Setting(Base):
    """Class-wide settings, e.g. the rate limits (see classroom/store.py DEFAULT_SETTINGS)."""

    __tablename__ = "settings"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(String(200))


class Worker(Base):
    """A grading worker's heartbeat, for `status`."""

    __tablename__ = "workers"
    id: Mapped[str] = mapped_column(String(200), primary_key=True)
    host: Mapped[str] = mapped_column(String(200), default="")
    pid: Mapped[int] = mapped_column(Integer, default=0)
    sandbox: Mapped[str] = mapped_column(String(16), default="")
    started_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    last_seen: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    jobs_done: Mapped[int] = mapped_column(Integer, default=0)
    current_job_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    lease_s: Mapped[float] = mapped_column(Float, default=60.0, server_default="60")  # dead when unseen longer
