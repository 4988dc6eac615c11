"""The grading queue: claim a job under a lease, renew it, finish it exactly once.

A claim sets the job to `running` with `lease_until = now + lease` and bumps
its `attempts`; (job id, worker id, attempts) is the claim's fencing token.
A worker renews its lease while it grades; a job whose lease ran out (its
worker died) is claimable again. Finishing checks the fencing token in the
same transaction that stores the result, so a worker that lost its claim
cannot store a second verdict. Postgres claims with FOR UPDATE SKIP LOCKED;
SQLite serialises writers (BEGIN IMMEDIATE, see classroom/data/db.py).

Jobs of one learner run in dependency order: a job waits while an earlier
job of the same learner for an exercise it builds on is unfinished.

Claim order: interactive work first. New submissions (reason "submit") are
claimed before regrade jobs; within each class of work the order is round-robin
by learner (`claim_order`): every learner's first turn, oldest first, then every
learner's second, and so on; so one learner's 30 queued jobs at a deadline delay
the others by one job each at most. A job's turn is fixed when it is queued and
counts the jobs its learner was served lately (classroom/data/turns.py), so the round
robin holds while workers finish jobs.

A submission that runs past its exercise's set-aside time is set aside (`set_aside`): its worker stops its first
run at that time (classroom/line/worker.py; ten times its reference's run: classroom/line/reference_times.py), and the
job is queued again to run with the whole time limit after every submission not set aside (SET_ASIDE, the
second batch of the claim order). So an endless loop holds a worker for its exercise's normal time (2 s in the
bench) before the class's other submissions, not the whole limit (20 s), and slow but correct code still gets its
verdict. Regrades run with the whole limit at once: the wait forecast knows from their newest verdict whether they
hang.

A job whose sandbox fails under it (the warm server dies mid-run or cannot start: the grading infrastructure, not
the learner's code) is queued again in its place (`sandbox_failed`), up to SANDBOX_TRIES runs; only the last one
stores an error verdict saying so. The learner does not submit again, against their hourly limit, for it.

Regrades never starve (aging rule, `regrade_due`): while regrade jobs are queued
and no regrade job has been claimed for REGRADE_AGE_S seconds (counted from the
oldest queued regrade when none has started yet), the next claim takes a regrade
first. So a regrade advances by at least one job per REGRADE_AGE_S under any
stream of submissions, and at full speed whenever no submission waits.

A claim reads only what it needs, whatever the size of a regrade: the first submissions in claim order (few,
and their window is small), and for a regrade the first CANDIDATES queued regrades by (turn, id), read from the
(reason, state, turn, id) index (`_first_regrades`); the whole regrade is ordered only when none of those can be
claimed (each waits for a dependency).
"""

from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import and_, case, delete, func, or_, select, union_all, update

from course.common.i18n import t

from ..data import exercise_table, turns, verdicts
from ..data.models import REGRADE, SET_ASIDE, SUBMIT, ExerciseRule, Job, Submission, Worker, utcnow
from ..data.settings import expected_grader_version, extensions_by_key, late_penalty
from ..data.submissions import store_verdict

LEASE_S = 60.0  # a claim lasts this long unless renewed (workers renew every LEASE_S / 4)
MAX_ATTEMPTS = 3  # a job whose worker died this many times is given up with an error verdict
SANDBOX_TRIES = 3  # runs of a job whose sandbox fails under it, before its error verdict (`sandbox_failed`)
CANDIDATES = 32  # jobs examined per claim
FORGET_S = 3600.0  # `status` stops listing a dead worker this long after its last heartbeat
REGRADE_AGE_S = 60.0  # a queued regrade waits at most about this long for a claim (see regrade_due)


@dataclass
class Claim:
    """A claimed job and what grading it needs."""

    job_id: int
    worker_id: str
    attempt: int  # fencing token, with job_id and worker_id
    submission_id: int
    user_id: int
    exercise_id: str
    source: str
    kind: str
    filename: str
    penalty: float
    claimed_at: object
    lang: str = "en"  # the submission's feedback language
    variant: int = 0  # the submission's stored exercise variant (grader/variants.py)
    may_set_aside: bool = False  # a submission's first run: set aside if it passes its exercise's set-aside time


class VersionMismatch(RuntimeError):
    """A worker whose grader version is not the one the class expects (recorded by `python -m classroom upgrade`):
    it claims no job, since its verdicts would come from another grader than the class's."""

    def __init__(self, worker_version, expected):
        self.worker_version, self.expected = worker_version, expected
        super().__init__(
            f"this worker runs grader version {worker_version}, the class expects {expected} (recorded by "
            "`python -m classroom upgrade`): it claims no job, and queued jobs wait for a worker of the class's "
            "version. To fix: bring this machine's checkout to the class's version and restart this worker "
            "(`python -m classroom worker`); or, if this worker's version is the new one, run `python -m classroom "
            "upgrade` from its checkout")


def version_refusal(session, grader_version):
    """The VersionMismatch of a worker running `grader_version` in this class, or None when it may claim (the class
    expects that version, or none: a class never upgraded)."""
    expected = expected_grader_version(session)
    return None if expected in (None, grader_version) else VersionMismatch(grader_version, expected)


def _claimable(now):
    return or_(Job.state == "queued", and_(Job.state == "running", Job.lease_until < now))


def _waits_for_dependency(session, job, submission):
    """Is an earlier job of this learner, for an exercise this one builds on, unfinished?"""
    needs = exercise_table.needs(submission.exercise_id)
    if not needs:
        return False
    earlier = session.scalar(
        select(func.count(Job.id)).join(Submission, Submission.id == Job.submission_id).where(
            Submission.user_id == submission.user_id, Submission.exercise_id.in_(needs),
            Job.id < job.id, Job.state.in_(("queued", "running"))))
    return earlier > 0


def claim_order(regrades=None):
    """A subquery of the unfinished jobs (job_id, submission_id, user_id, state, lease_until, batch, turn,
    exercise_id, started_at), where batch is SUBMIT for a submission's job, SET_ASIDE for a submission set aside
    (`set_aside`) and REGRADE for a regrade (classroom/data/models.py), and turn is the job's place in its learner's round
    robin within that batch, fixed when it was queued (classroom/data/turns.py): order with `ordering` to claim.
    regrades: True for the regrade jobs only, False for the others only (a smaller window), None for all."""
    batch = case((Job.reason == "regrade", REGRADE), (Job.full_time, SET_ASIDE), else_=SUBMIT).label("batch")
    turn = Job.turn.label("turn")
    query = (select(Job.id.label("job_id"), Job.submission_id, Submission.user_id, Job.state, Job.lease_until,
                    batch, turn, Submission.exercise_id, Job.started_at)
             .join(Submission, Submission.id == Job.submission_id)
             .where(Job.state.in_(("queued", "running"))))
    if regrades is not None:
        query = query.where(Job.reason == "regrade" if regrades else Job.reason != "regrade")
    return query.subquery("unfinished")


def ordering(order):
    """The claim order of a claim_order() subquery: submissions, those set aside, then regrades (the batches'
    numbers are in that order), each round-robin by learner. Over every batch this is the order `claim_in` follows
    while no regrade is due (regrade_due); `claim_in` itself asks for the regrades and the others separately."""
    return (order.c.batch, order.c.turn, order.c.job_id)


def regrade_due(session, now, age_s=REGRADE_AGE_S):
    """Should the next claim take a regrade first? Yes when one is queued and no regrade was claimed for age_s."""
    due_in = regrade_due_in(session, now, age_s)
    return due_in is not None and due_in <= 0


def regrade_due_in(session, now, age_s=REGRADE_AGE_S):
    """Seconds until a queued regrade is due (regrade_due; 0 or less: due now), or None when none is queued.

    Two index reads (ix_jobs_reason_state_created, ix_jobs_reason_started), each one row: every claim asks.
    """
    oldest = session.scalar(select(Job.created_at).where(Job.reason == "regrade", Job.state == "queued")
                            .order_by(Job.created_at).limit(1))
    if oldest is None:
        return None
    last = session.scalar(select(Job.started_at).where(Job.reason == "regrade", Job.started_at.is_not(None))
                          .order_by(Job.started_at.desc()).limit(1))
    since = max(oldest, last) if last is not None else oldest
    return age_s - (now - since).total_seconds()


def claim_in(session, worker_id, lease_s=LEASE_S, max_attempts=MAX_ATTEMPTS, now=None):
    """Claim the next claimable job (submissions first, round-robin by learner: claim_order) inside the caller's transaction
    -> Claim or None.

    Jobs that have run out of attempts are closed with an error verdict on the way.
    """
    now = now or utcnow()
    # Read the candidates without locks, then lock one row at a time: locking all of them
    # would hide every candidate from the other workers until this transaction ends.
    regrades_first = regrade_due(session, now)
    for regrades in (True, False) if regrades_first else (False, True):
        for finding in (_first_regrades, _candidates) if regrades else (_candidates,):
            claimed = _claim_first(session, finding(session, regrades, now), worker_id, lease_s, max_attempts, now)
            if claimed is not None:
                return claimed
    return None


def _candidates(session, regrades, now, limit=CANDIDATES):
    """The first claimable jobs of one class of work (regrades or not) in claim order (claim_order)."""
    order = claim_order(regrades)
    return session.scalars(
        select(order.c.job_id).where(or_(order.c.state == "queued",
                                         and_(order.c.state == "running", order.c.lease_until < now)))
        .order_by(*ordering(order)).limit(limit)).all()


def first_regrades(session, now, limit):
    """The first `limit` claimable regrades in claim order (turn, then id) -> [(turn, job id)]: the queued ones read
    from the (reason, state, turn, id) index, merged with the running ones whose lease lapsed (few)."""
    queued = (select(Job.turn, Job.id).where(Job.reason == "regrade", Job.state == "queued")
              .order_by(Job.turn, Job.id).limit(limit).subquery())
    lapsed = select(Job.turn, Job.id).where(Job.reason == "regrade", Job.state == "running", Job.lease_until < now)
    both = union_all(select(queued.c.turn, queued.c.id), lapsed).subquery()  # one statement
    return [tuple(row) for row in session.execute(select(both.c.turn, both.c.id)
                                                  .order_by(both.c.turn, both.c.id).limit(limit))]


def _first_regrades(session, _regrades, now, limit=CANDIDATES):
    """The first claimable regrades in claim order, read cheaply (first_regrades); when none of them can be claimed,
    `_candidates` orders the whole regrade."""
    return [job_id for _, job_id in first_regrades(session, now, limit)]


def _claim_first(session, candidates, worker_id, lease_s, max_attempts, now):
    """Claim the first of `candidates` that is still claimable and waits for no dependency -> Claim or None."""
    postgres = session.get_bind().dialect.name == "postgresql"
    for job_id in candidates:
        query = select(Job).where(Job.id == job_id, _claimable(now)).execution_options(populate_existing=True)
        if postgres:
            query = query.with_for_update(skip_locked=True)
        job = session.scalars(query).first()
        if job is None:  # claimed meanwhile, or locked by a worker claiming it now
            continue
        submission = session.get(Submission, job.submission_id)
        # the runs that set a job aside or whose sandbox failed (queued again: sandbox_failed) did not die
        if job.attempts >= max_attempts + job.full_time + job.sandbox_failures:
            _give_up(session, job, submission, now)
            continue
        if _waits_for_dependency(session, job, submission):
            continue
        job.state, job.worker_id, job.started_at = "running", worker_id, now
        job.lease_until = now + timedelta(seconds=lease_s)
        job.attempts += 1
        submission.status = "grading"
        submission.attempts += 1
        session.execute(update(Worker).where(Worker.id == worker_id).values(current_job_id=job.id, last_seen=now))
        return Claim(job.id, worker_id, job.attempts, submission.id, submission.user_id,
                     submission.exercise_id, submission.source, submission.kind, submission.filename,
                     submission.penalty, now, submission.lang or "en", submission.variant or 0,
                     job.reason != "regrade" and not job.full_time)
    return None


def claim(store, worker_id, lease_s=LEASE_S, max_attempts=MAX_ATTEMPTS, clock=utcnow, grader_version=None):
    """Claim the oldest claimable job in a transaction of its own -> Claim or None (clock: now, naive UTC).

    grader_version: the worker's (classroom/data/verdicts.py grader_version): raises VersionMismatch, claiming nothing,
    when the class expects another, read in the same transaction as the claim (None: not checked)."""
    with store.session() as session:
        if grader_version is not None and (refused := version_refusal(session, grader_version)) is not None:
            raise refused
        return claim_in(session, worker_id, lease_s, max_attempts, now=clock())


def _give_up(session, job, submission, now):
    """Close a job whose workers kept dying: an error verdict the learner can read, in their language."""
    lang = submission.lang or "en"
    job.state, job.finished_at, job.lease_until = "error", now, None
    job.error = t("classroom.grading_gave_up", "en", attempts=job.attempts)  # for the operator
    submission.status = "error"
    message = t("classroom.grading_gave_up", lang, attempts=job.attempts)
    store_verdict(session, submission.user_id, submission.exercise_id, now,  # the LMS's copy made due too
                  submission_id=submission.id, job_id=job.id,
                  **verdicts.error_verdict(submission.exercise_id, submission.id, message, lang))


def renew(store, claim_, lease_s=LEASE_S, clock=utcnow):
    """Extend a claim's lease -> False when the claim is no longer this worker's."""
    now = clock()
    with store.session() as session:
        renewed = session.execute(
            update(Job).where(Job.id == claim_.job_id, Job.worker_id == claim_.worker_id,
                              Job.attempts == claim_.attempt, Job.state == "running")
            .values(lease_until=now + timedelta(seconds=lease_s))).rowcount
        session.execute(update(Worker).where(Worker.id == claim_.worker_id).values(last_seen=now))
    return renewed == 1


def finish(store, claim_, verdict, clock=utcnow):
    """Store a verdict (dict of Result fields) if the claim still holds -> True, else False."""
    now = clock()
    with store.session() as session:
        held = session.execute(
            update(Job).where(Job.id == claim_.job_id, Job.worker_id == claim_.worker_id,
                              Job.attempts == claim_.attempt, Job.state == "running")
            .values(state="done", finished_at=now, lease_until=None)).rowcount
        if held != 1:
            return False
        # the lateness as it stands now: an extension granted or cleared while the job ran changed the submission's
        # penalty (classroom/data/adjustments.py, which locks the submission's row as this does) since the claim read it
        penalty = session.scalar(select(Submission.penalty).where(Submission.id == claim_.submission_id)
                                 .with_for_update())
        if penalty != claim_.penalty:
            verdict = dict(verdict, score=verdicts.penalised(verdict["raw_score"], penalty))
        store_verdict(session, claim_.user_id, claim_.exercise_id, now,  # LMS passback made due, same commit
                      submission_id=claim_.submission_id, job_id=claim_.job_id,
                      grading_s=(now - claim_.claimed_at).total_seconds(), **verdict)
        # The submission shows its newest job's state (a regrade queued meanwhile keeps it queued).
        newest = session.scalar(select(func.max(Job.id)).where(Job.submission_id == claim_.submission_id))
        if newest == claim_.job_id:
            session.execute(update(Submission).where(Submission.id == claim_.submission_id)
                            .values(status="done"))
        session.execute(update(Worker).where(Worker.id == claim_.worker_id)
                        .values(jobs_done=Worker.jobs_done + 1, current_job_id=None, last_seen=now))
    return True


def set_aside(store, claim_, clock=utcnow):
    """Queue a claimed submission again, to run with the whole time limit after the submissions not set aside
    (its first run passed its exercise's normal time), if the claim still holds -> True, else False. No verdict is
    stored: the learner's page shows it queued again."""
    now = clock()
    with store.session() as session:
        held = session.execute(
            update(Job).where(Job.id == claim_.job_id, Job.worker_id == claim_.worker_id,
                              Job.attempts == claim_.attempt, Job.state == "running")
            .values(state="queued", full_time=True, worker_id=None, lease_until=None, started_at=None,
                    set_aside_by=claim_.worker_id, set_aside_at=now,
                    turn=turns.next_turn(session, claim_.user_id, SET_ASIDE, now))).rowcount
        if held != 1:
            return False
        session.execute(update(Submission).where(Submission.id == claim_.submission_id).values(status="queued"))
        session.execute(update(Worker).where(Worker.id == claim_.worker_id)
                        .values(current_job_id=None, last_seen=now))
    return True


def sandbox_failed(store, claim_, why, tries=SANDBOX_TRIES, clock=utcnow):
    """Count a run whose sandbox failed under a claimed job (the warm server died or could not start: not the
    learner's doing) if the claim still holds -> "queued" (queued again in its place, to be graded again; the
    learner's page shows it queued), "last" (that was its `tries`-th: the worker stores its error verdict with this
    claim) or None (the claim was lost). `why` is kept in the job's error for the operator."""
    now = clock()
    with store.session() as session:
        job = session.scalars(select(Job).where(Job.id == claim_.job_id, Job.worker_id == claim_.worker_id,
                                                Job.attempts == claim_.attempt, Job.state == "running")
                              .with_for_update().execution_options(populate_existing=True)).first()
        if job is None:
            return None
        job.sandbox_failures += 1
        job.error = f"sandbox failure {job.sandbox_failures} of {tries}: {why}"[:2000]
        if job.sandbox_failures >= tries:
            return "last"
        job.state, job.worker_id, job.lease_until, job.started_at = "queued", None, None, None
        session.execute(update(Submission).where(Submission.id == claim_.submission_id).values(status="queued"))
        session.execute(update(Worker).where(Worker.id == claim_.worker_id).values(current_job_id=None, last_seen=now))
    return "queued"


def enqueue_regrade(store, submission_ids=None, clock=utcnow):
    """Queue a regrade job for the given submissions (default: every submission) -> job count.

    Lateness is decided again under the exercises' current deadlines and the learners' extensions (a regrade
    never refuses work); a score override (classroom/data/adjustments.py) is not a verdict and stays. Each
    learner's regrades take their next turns (classroom/data/turns.py), in submission order.
    """
    now = clock()
    with store.session() as session:
        query = select(Submission).order_by(Submission.id)
        if submission_ids is not None:
            query = query.where(Submission.id.in_(list(submission_ids)))
        rules = {r.exercise_id: r for r in session.scalars(select(ExerciseRule))}
        extended = extensions_by_key(session)  # each learner's own deadlines (classroom/data/adjustments.py)
        next_turn = turns.next_turns(session, REGRADE, now)
        count = 0
        for submission in session.scalars(query):
            submission.late, submission.penalty = late_penalty(
                rules.get(submission.exercise_id), submission.created_at,
                extended.get((submission.user_id, submission.exercise_id)))
            turn = next_turn.setdefault(submission.user_id, 1)
            next_turn[submission.user_id] = turn + 1
            session.add(Job(submission_id=submission.id, reason="regrade", created_at=now, turn=turn))
            submission.status = "queued"
            count += 1
    return count


def register_worker(store, worker_id, host, pid, sandbox, lease_s=LEASE_S, clock=utcnow, grader_version=""):
    """Record a worker's start and the grader version it runs (for `status`), forgetting workers dead for longer
    than FORGET_S."""
    now = clock()
    with store.session() as session:
        session.execute(delete(Worker).where(Worker.last_seen < now - timedelta(seconds=FORGET_S)))
        session.merge(Worker(id=worker_id, host=host, pid=pid, sandbox=sandbox, started_at=now,
                             last_seen=now, jobs_done=0, current_job_id=None, lease_s=lease_s,
                             grader_version=grader_version))


def heartbeat(store, worker_id, clock=utcnow):
    """An idle worker says it is alive (a grading one does so with every lease renewal)."""
    with store.session() as session:
        session.execute(update(Worker).where(Worker.id == worker_id).values(last_seen=clock()))


def unregister_worker(store, worker_id):
    """A worker that stopped cleanly leaves `status`."""
    with store.session() as session:
        session.execute(delete(Worker).where(Worker.id == worker_id))


def _alive(worker, now):
    """Has this worker been heard from within its lease?"""
    return (now - worker.last_seen).total_seconds() <= (worker.lease_s or LEASE_S)


def live_workers(session, now):
    """How many workers have been heard from within their lease."""
    return sum(_alive(w, now) for w in session.scalars(select(Worker)))


def queue_status(store, clock=utcnow):
    """Counts of jobs by state, expired leases, the workers seen in the last FORGET_S (alive or dead; each with its
    grader version, "" if it started before workers said) and the grader version the class expects (None: none
    recorded) -> dict."""
    now = clock()
    with store.session() as session:
        counts = dict(session.execute(select(Job.state, func.count(Job.id)).group_by(Job.state)).all())
        expired = session.scalar(select(func.count(Job.id)).where(Job.state == "running", Job.lease_until < now))
        oldest = session.scalar(select(func.min(Job.created_at)).where(Job.state == "queued"))
        workers = [
            {"id": w.id, "host": w.host, "pid": w.pid, "sandbox": w.sandbox, "jobs_done": w.jobs_done,
             "current_job": w.current_job_id, "seen_s_ago": round((now - w.last_seen).total_seconds(), 1),
             "alive": _alive(w, now), "lease_s": w.lease_s, "grader_version": w.grader_version}
            for w in session.scalars(select(Worker).where(Worker.last_seen >= now - timedelta(seconds=FORGET_S))
                                     .order_by(Worker.last_seen.desc()))
        ]
        expected = expected_grader_version(session)
    return {
        "jobs": {state: counts.get(state, 0) for state in ("queued", "running", "done", "error")},
        "expired_leases": expired,
        "oldest_queued_s": round((now - oldest).total_seconds(), 1) if oldest else None,
        "workers": workers,
        "grader_version": expected,
    }
