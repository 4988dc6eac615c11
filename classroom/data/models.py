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
# the batches of the claim order, numbered in that order (classroom/line/queue.py claim_order): new submissions, then
# submissions set aside, then regrades. Computed from a job's reason and full_time when it is read, never stored.
SUBMIT, SET_ASIDE, REGRADE = 0, 1, 2
KINDS = (".py", ".ipynb")
LATE_POLICIES = ("accept", "close")  # accept with a penalty inside a window, or refuse after the deadline
ADJUSTMENTS = ("extension", "override")  # what staff grant one learner for one exercise (classroom/data/adjustments.py)
ADJUSTMENT_ACTIONS = ("grant", "change", "clear")  # the audit log's actions


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
    # the learner's exercise variant (grader/variants.py), from their VariantAssignment when submitted: graded on
    # it, regraded on it, exported; never read from the submitted file
    variant: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    user: Mapped[User] = relationship()


class VariantAssignment(Base):
    """A learner's exercise variant, assigned once (first view or first submission) and kept."""

    __tablename__ = "variant_assignments"
    __table_args__ = (UniqueConstraint("user_id", "exercise_id", name="uq_variant_assignments_user_exercise"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    exercise_id: Mapped[str] = mapped_column(String(16))
    variant: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class Job(Base):
    """One grading of one submission; a worker holds it by a lease it renews."""

    __tablename__ = "jobs"
    __table_args__ = (Index("ix_jobs_state_id", "state", "id"),
                      Index("ix_jobs_reason_state_created", "reason", "state", "created_at"),  # the oldest queued regrade
                      Index("ix_jobs_reason_started", "reason", "started_at"),  # the newest regrade claimed
                      Index("ix_jobs_set_aside_at", "set_aside_at"),  # the newest runs set aside
                      Index("ix_jobs_reason_state_turn", "reason", "state", "turn", "id"))  # the first regrades to claim
    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id"), index=True)
    reason: Mapped[str] = mapped_column(String(16), default="submit")  # submit | regrade
    state: Mapped[str] = mapped_column(String(16), default="queued")  # one of JOB_STATES
    worker_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    lease_until: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)  # also the fencing token of a claim
    # set aside: a submission's first run passed its exercise's normal time (classroom/line/queue.py `set_aside`); it
    # runs again with the whole time limit, after the other submissions
    full_time: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")
    set_aside_by: Mapped[str | None] = mapped_column(String(200), nullable=True)  # the worker whose run it stopped
    set_aside_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)  # ... when (its run's end)
    # runs whose sandbox failed under them (the warm server died, or could not start): the job was queued again
    # (classroom/line/queue.py `sandbox_failed`), or at queue.SANDBOX_TRIES closed with an error verdict
    sandbox_failures: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # its place in its learner's turn within its batch (classroom/line/queue.py claim_order), fixed when it is queued
    turn: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
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


class LabRun(Base):
    """A training-lab run started on the app server (classroom/data/lab_runs.py): it holds one of the class's lab run
    places until it finishes, or at the latest until `ends_by` (a tab closed while it trained)."""

    __tablename__ = "lab_runs"
    __table_args__ = (Index("ix_lab_runs_finished_ends", "finished_at", "ends_by"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    started_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    ends_by: Mapped[datetime] = mapped_column(DateTime)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)


class ExerciseRule(Base):
    """Deadline and late policy of one exercise (no row: no deadline)."""

    __tablename__ = "exercise_rules"
    exercise_id: Mapped[str] = mapped_column(String(16), primary_key=True)
    deadline: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    late_policy: Mapped[str] = mapped_column(String(16), default="accept")  # one of LATE_POLICIES
    late_window_h: Mapped[float] = mapped_column(Float, default=0.0)  # accepted this long after the deadline
    late_penalty: Mapped[float] = mapped_column(Float, default=0.0)  # fraction of the score removed


class Extension(Base):
    """One learner's later deadline for one exercise (classroom/data/adjustments.py): their submissions up to `until`
    count as on time, and the late window, if any, runs from it (settings.deadline_for)."""

    __tablename__ = "extensions"
    __table_args__ = (UniqueConstraint("user_id", "exercise_id", name="uq_extensions_user_exercise"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    exercise_id: Mapped[str] = mapped_column(String(16))
    until: Mapped[datetime] = mapped_column(DateTime)
    reason: Mapped[str] = mapped_column(Text)
    granted_by: Mapped[str] = mapped_column(String(320))  # a staff email, or the command line's user@host
    granted_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class ScoreOverride(Base):
    """A score staff set for one learner's exercise (classroom/data/adjustments.py): it replaces the computed best score
    in the gradebook, its export and the LMS (which_counts.score_that_counts) until it is cleared; regrades leave it."""

    __tablename__ = "score_overrides"
    __table_args__ = (UniqueConstraint("user_id", "exercise_id", name="uq_score_overrides_user_exercise"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    exercise_id: Mapped[str] = mapped_column(String(16))
    score: Mapped[float] = mapped_column(Float)  # 0..1, like a verdict's
    reason: Mapped[str] = mapped_column(Text)
    set_by: Mapped[str] = mapped_column(String(320))
    set_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class AdjustmentLog(Base):
    """The audit trail of extensions and overrides: one row per grant, change or clear, never updated or deleted."""

    __tablename__ = "adjustment_log"
    __table_args__ = (Index("ix_adjustment_log_user_exercise", "user_id", "exercise_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    actor: Mapped[str] = mapped_column(String(320))  # who did it: a staff email, or the command line's user@host
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))  # no cascade: the trail outlives nothing it names
    exercise_id: Mapped[str] = mapped_column(String(16))
    kind: Mapped[str] = mapped_column(String(16))  # one of ADJUSTMENTS
    action: Mapped[str] = mapped_column(String(16))  # one of ADJUSTMENT_ACTIONS
    before: Mapped[str] = mapped_column(String(64), default="")  # the deadline (ISO, UTC) or score it had; "": none
    after: Mapped[str] = mapped_column(String(64), default="")  # ... and has now; "": cleared
    reason: Mapped[str] = mapped_column(Text, default="")


class Setting(Base):
    """Class-wide settings, e.g. the rate limits (see classroom/data/settings.py DEFAULT_SETTINGS)."""

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
    # the grader it runs (classroom/data/verdicts.py grader_version); "": started before workers said (migration 0013)
    grader_version: Mapped[str] = mapped_column(String(64), default="", server_default="")


# ---- LMS (LTI 1.3): classroom/lti/ ---------------------------------------------------------------


class LtiPlatform(Base):
    """An LMS that may launch the tool (one registration: issuer + client id) and the deployments it allows."""

    __tablename__ = "lti_platforms"
    __table_args__ = (UniqueConstraint("issuer", "client_id", name="uq_lti_platforms_issuer_client"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    issuer: Mapped[str] = mapped_column(String(255))
    client_id: Mapped[str] = mapped_column(String(255))
    auth_login_url: Mapped[str] = mapped_column(Text)  # the platform's OIDC authorization endpoint
    auth_token_url: Mapped[str] = mapped_column(Text)  # its OAuth2 token endpoint (AGS, NRPS)
    key_set_url: Mapped[str] = mapped_column(Text)  # its JWKS (the id_token's signing keys)
    auth_audience: Mapped[str | None] = mapped_column(Text, nullable=True)  # token endpoint audience if not its URL
    deployment_ids: Mapped[list] = mapped_column(JSON, default=list)
    auto_add_learners: Mapped[bool] = mapped_column(Boolean, default=False)  # a launching learner joins the roster
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class LtiToolKey(Base):
    """The tool's RSA key pair: it signs the tool's token requests; its public half is served at /lti/jwks."""

    __tablename__ = "lti_tool_keys"
    id: Mapped[int] = mapped_column(primary_key=True)
    kid: Mapped[str] = mapped_column(String(64), unique=True)
    private_pem: Mapped[str] = mapped_column(Text)
    public_jwk: Mapped[dict] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class LtiLaunchState(Base):
    """One OIDC login in flight: its state (hashed) and nonce, consumed by the one launch that uses them."""

    __tablename__ = "lti_launch_states"
    id: Mapped[int] = mapped_column(primary_key=True)
    state_hash: Mapped[str] = mapped_column(String(64), unique=True)
    nonce: Mapped[str] = mapped_column(String(128), unique=True)
    platform_id: Mapped[int] = mapped_column(ForeignKey("lti_platforms.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime, index=True)
    used_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)


class LtiContext(Base):
    """A course of an LMS that launched the tool, with its AGS and NRPS service URLs from the last launch."""

    __tablename__ = "lti_contexts"
    __table_args__ = (UniqueConstraint("platform_id", "context_id", name="uq_lti_contexts_platform_context"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    platform_id: Mapped[int] = mapped_column(ForeignKey("lti_platforms.id", ondelete="CASCADE"), index=True)
    context_id: Mapped[str] = mapped_column(String(255))
    title: Mapped[str] = mapped_column(String(255), default="")
    deployment_id: Mapped[str] = mapped_column(String(255), default="")
    lineitems_url: Mapped[str | None] = mapped_column(Text, nullable=True)  # AGS line item container
    ags_scopes: Mapped[list] = mapped_column(JSON, default=list)
    memberships_url: Mapped[str | None] = mapped_column(Text, nullable=True)  # NRPS
    updated_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class LtiMember(Base):
    """A roster member as the LMS knows them in one course: its user id (`sub`) there."""

    __tablename__ = "lti_members"
    __table_args__ = (UniqueConstraint("context_pk", "user_id", name="uq_lti_members_context_user"),
                      UniqueConstraint("context_pk", "sub", name="uq_lti_members_context_sub"))
    id: Mapped[int] = mapped_column(primary_key=True)
    context_pk: Mapped[int] = mapped_column(ForeignKey("lti_contexts.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    sub: Mapped[str] = mapped_column(String(255))


class LtiLineItem(Base):
    """The LMS line item (gradebook column) of one exercise in one course, found or created once."""

    __tablename__ = "lti_line_items"
    __table_args__ = (UniqueConstraint("context_pk", "exercise_id", name="uq_lti_line_items_context_exercise"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    context_pk: Mapped[int] = mapped_column(ForeignKey("lti_contexts.id", ondelete="CASCADE"))
    exercise_id: Mapped[str] = mapped_column(String(16))
    url: Mapped[str] = mapped_column(Text)


class LtiScore(Base):
    """The passback outbox: one learner x exercise x course; `version` grows with each verdict that may change
    the best score, and the row is `due` until a push of its newest version succeeded."""

    __tablename__ = "lti_scores"
    __table_args__ = (UniqueConstraint("context_pk", "user_id", "exercise_id", name="uq_lti_scores_member_exercise"),
                      Index("ix_lti_scores_due_next_try", "due", "next_try_at"))
    id: Mapped[int] = mapped_column(primary_key=True)
    context_pk: Mapped[int] = mapped_column(ForeignKey("lti_contexts.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    exercise_id: Mapped[str] = mapped_column(String(16))
    version: Mapped[int] = mapped_column(Integer, default=1)
    pushed_version: Mapped[int] = mapped_column(Integer, default=0)
    due: Mapped[bool] = mapped_column(Boolean, default=True)
    next_try_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    tries: Mapped[int] = mapped_column(Integer, default=0)  # failed pushes since the last success
    last_error: Mapped[str] = mapped_column(Text, default="")
    pushed_score: Mapped[float | None] = mapped_column(Float, nullable=True)  # what the LMS holds (0..1)
    pushed_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)  # the score's timestamp sent
