"""The waiting line: the unfinished jobs in the order the workers will claim them, and each queued job's position.

One definition of a position, for the live snapshot every open page follows (classroom/line/live.py) and for
`position` (the command line and tests): the claim order (queue.claim_order), where a regrade that is due
(queue.regrade_due: none claimed for REGRADE_AGE_S) goes first once, then every submission's job (those set aside
after the others), then the other regrades; a job's position counts the queued jobs up to it, from 1 (a job
whose lease lapsed is claimable but has no position: it is being graded again).

A deadline's regrade can leave 20,000 regrade jobs queued while a page polls, so the line reads only what a wait
needs: every unfinished submission's job, the running regrades and the first REGRADES_READ claimable regrades
in claim order, read from the (reason, state, turn, id) index (`first_regrades`: a job's turn is fixed when it is
queued, classroom/data/turns.py); the rest are counted in SQL. A job behind those (rarely followed: a page follows the
submission just made) has its position counted in SQL when it is asked for (`Line.position_of`).
"""

from dataclasses import dataclass, field

from sqlalchemy import and_, func, literal, or_, select

from . import queue
from ..data.models import REGRADE, Job, Submission, utcnow

REGRADES_READ = 64  # claimable regrades read in claim order; at one regrade per REGRADE_AGE_S this covers an hour


def _columns(order):
    """The columns of a claim_order() subquery a line row holds (see Line.rows)."""
    return (order.c.job_id, order.c.submission_id, order.c.user_id, order.c.state, order.c.lease_until,
            order.c.batch, order.c.exercise_id, order.c.started_at)


@dataclass
class Line:
    """The unfinished jobs a wait needs, read at `now`, in claim order."""

    now: object
    rows: list  # (job_id, submission_id, user_id, state, lease_until, batch, exercise_id, started_at), claim order
    regrade_due_in: float | None  # seconds until a queued regrade is due (queue.regrade_due_in)
    regrades_claimable: int  # claimable regrades in all (the rows hold the first REGRADES_READ of them)
    positions: dict = field(default_factory=dict)  # {job id: position} of the queued jobs in rows

    def __post_init__(self):
        position = 0
        for row in self.rows:
            if row[3] == "queued":
                position += 1
                self.positions[row[0]] = position
        self.queued_submissions = sum(row[3] == "queued" and row[5] != REGRADE for row in self.rows)  # set aside too

    def regrades_unread(self):
        """Claimable regrades behind the rows read."""
        return self.regrades_claimable - sum(row[5] == REGRADE and self.claimable(row) for row in self.rows)

    def claimable(self, row):
        """Is this row's job claimable (queued, or running under a lapsed lease)?"""
        return row[3] == "queued" or (row[4] is not None and row[4] < self.now)

    def position_of(self, session, job_id):
        """The position of a queued job, counted in SQL when it is a regrade behind the rows read."""
        if job_id in self.positions:
            return self.positions[job_id]
        turn = session.scalar(select(Job.turn).where(Job.id == job_id, Job.reason == "regrade", Job.state == "queued"))
        if turn is None:  # not a queued regrade (claimed meanwhile)
            return None
        ahead = session.scalar(select(func.count(Job.id)).where(
            Job.reason == "regrade", Job.state == "queued", or_(Job.turn < turn, and_(Job.turn == turn, Job.id <= job_id))))
        return self.queued_submissions + ahead if ahead else None


def read(session, now=None, regrades_read=REGRADES_READ):
    """The waiting line at `now` (naive UTC): three small reads and a count, whatever the regrade's size."""
    now = now or utcnow()
    due_in = queue.regrade_due_in(session, now)
    submits = queue.claim_order(regrades=False)
    rows = list(session.execute(select(*_columns(submits)).order_by(*queue.ordering(submits))).all())
    running = [tuple(row) for row in session.execute(_regrades().where(Job.state == "running"))]
    first_rows, queued = first_regrades(session, now, regrades_read)
    if queued is None:  # not all read: counted
        queued = session.scalar(select(func.count(Job.id)).where(Job.state == "queued", Job.reason == "regrade"))
    claimable = queued + sum(row[4] is not None and row[4] < now for row in running)
    if first_rows and due_in is not None and due_in <= 0:  # the due regrade is claimed next, once
        rows = first_rows[:1] + rows + first_rows[1:]
    else:
        rows = rows + first_rows
    held = [row for row in running if row[4] is None or row[4] >= now]
    return Line(now, rows + held, due_in, claimable)


def _regrades():
    """The regrade jobs as line rows (see Line.rows), to be filtered."""
    return (select(Job.id, Job.submission_id, Submission.user_id, Job.state, Job.lease_until, literal(REGRADE),
                   Submission.exercise_id, Job.started_at)
            .join(Submission, Submission.id == Job.submission_id).where(Job.reason == "regrade"))


def first_regrades(session, now, read=REGRADES_READ):
    """The first `read` claimable regrades in claim order (queue.first_regrades: by turn, then id) as line rows
    -> (those rows, the number of queued regrades when all were read, else None)."""
    chosen = [job_id for _, job_id in queue.first_regrades(session, now, read)]
    rows = {row[0]: tuple(row) for row in session.execute(_regrades().where(Job.id.in_(chosen)))} if chosen else {}
    found = [rows[job_id] for job_id in chosen if job_id in rows]
    return found, sum(row[3] == "queued" for row in found) if len(chosen) < read else None


def position(store, submission_id, now=None):
    """(state, position from 1 or None) of a submission's newest job: "queued", "running", "done", "error",
    or (None, None) without a job."""
    with store.session() as session:
        job_id, state = session.execute(select(Job.id, Job.state).where(Job.submission_id == submission_id)
                                        .order_by(Job.id.desc()).limit(1)).first() or (None, None)
        if state != "queued":
            return state, None
        found = read(session, now).position_of(session, job_id)
        if found is None:  # claimed between the reads (Postgres reads each statement anew)
            return session.scalar(select(Job.state).where(Job.id == job_id)), None
        return "queued", found
