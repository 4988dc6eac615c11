"""The live queue state every open Practice page follows, read once per interval for all of them.

A page follows its learner's newest submission: queued (position N), grading,
or finished. Instead of each page asking the database (and re-reading its
history) on every poll, the store keeps one snapshot (Store.kept) of the unfinished
jobs, in claim order (queue.claim_order, queue.ordering), plus the number of live
workers and the measured grading times that the wait forecast (classroom/eta.py)
needs, and refreshes it at most every MAX_AGE_S: 50 pages polling every POLL_S cost
three small queries per MAX_AGE_S (the jobs, the workers, the regrade clock), not 150. A submission missing from the
snapshot has no unfinished job: its verdict is stored, and only then does its
page read its history again.
"""

import time
from dataclasses import dataclass, replace

from sqlalchemy import select

from . import eta, queue
from .models import utcnow

MAX_AGE_S = 0.25  # a snapshot older than this is read again
POLL_S = 0.5  # how often a page looks: a change is seen within POLL_S + MAX_AGE_S = 0.75 s, drawn within 1 s


@dataclass(frozen=True)
class LiveState:
    """One followed submission, as the page shows it."""

    state: str  # "queued", "running" or "finished"
    position: int | None = None  # among the queued jobs, in claim order, counting from 1
    delayed: bool = False  # waits on a dead or absent worker, or its worker's lease lapsed
    start_s: float | None = None  # forecast (classroom/eta.py) from the snapshot's reading: seconds to its claim
    finish_s: float | None = None  # ... and to its verdict; both None without a live worker


_FINISHED = LiveState("finished")


class Snapshot:
    """{submission id: (user id, LiveState)} of every unfinished submission, read in one query (with the live
    workers, the regrade clock and, every DURATIONS_MAX_AGE_S, the measured grading times); the wait forecast
    is computed on the first question about a queued or running submission."""

    def __init__(self, store, clock=time.monotonic):
        now = utcnow()
        order = queue.claim_order()
        with store.session() as session:
            due_in = queue.regrade_due_in(session, now)
            rows = session.execute(
                select(order.c.submission_id, order.c.user_id, order.c.state, order.c.lease_until, order.c.job_id,
                       order.c.batch, order.c.exercise_id, order.c.started_at)
                .order_by(*queue.ordering(order, due_in is not None and due_in <= 0))).all()
            self.workers = queue.live_workers(session, now)
            self.durations = _durations(store, session)
        self.read_at, self.regrade_due_in = clock(), due_in
        self.states, self.pending, self.left, self._times = {}, [], {}, None
        position, newest, expected = 0, {}, {}
        for submission_id, user_id, state, lease_until, job_id, batch, exercise_id, started_at in rows:
            lapsed = state == "running" and lease_until is not None and lease_until < now
            if (exercise_id, batch) not in expected:
                expected[exercise_id, batch] = eta.expected_s(self.durations, exercise_id, batch)
            seconds = expected[exercise_id, batch]
            if state == "queued" or lapsed:  # claimable: the forecast replays it
                self.pending.append(eta.Pending(job_id, batch, seconds))
            else:
                self.left[job_id] = eta.remaining_s(seconds, (now - started_at).total_seconds())
            if state == "queued":
                position += 1
            if job_id < newest.get(submission_id, 0):  # a submission shows its newest job
                continue
            newest[submission_id] = job_id
            live = LiveState("queued", position, self.workers == 0) if state == "queued" else \
                LiveState("running", None, lapsed)
            self.states[submission_id] = (user_id, live, job_id)

    def times(self):
        """{job id: (start s, finish s)} from the snapshot's reading, or None without a live worker."""
        if self._times is None:
            self._times = eta.schedule(self.pending, list(self.left.values()), self.workers, self.regrade_due_in,
                                       queue.REGRADE_AGE_S) or {}
        return self._times if self.workers else None

    def get(self, submission_id):
        """The LiveState of any submission, with its forecast (finished when it has no unfinished job)."""
        if submission_id not in self.states:
            return _FINISHED
        _, state, job_id = self.states[submission_id]
        times = self.times()
        if times is None:
            return state
        if job_id in times:  # queued, or its lease lapsed: claimed again in turn
            return replace(state, start_s=times[job_id][0], finish_s=times[job_id][1])
        return replace(state, start_s=0.0, finish_s=self.left[job_id])  # being graded

    def of(self, user_id, submission_id):
        """The state of one of user_id's submissions (finished when it has no unfinished job, or is not theirs)."""
        owner = self.states.get(submission_id, (user_id,))[0]
        return self.get(submission_id) if owner == user_id else _FINISHED


DURATIONS_MAX_AGE_S = 10.0  # measured grading times are read again at most this often
DURATIONS_KEPT = "live_durations"  # this module's entry in Store.kept: (time.monotonic() read, durations)


def _durations(store, session):
    """The store's measured grading times (eta.durations), read again when older than DURATIONS_MAX_AGE_S."""
    entry = store.kept(DURATIONS_KEPT)
    with entry.lock:
        read_at, found = entry.value or (None, None)
        if read_at is None or time.monotonic() - read_at > DURATIONS_MAX_AGE_S:
            found = eta.durations(session)
            entry.value = (time.monotonic(), found)
        return found


KEPT = "live_snapshot"  # this module's entry in Store.kept: the store's newest Snapshot


def snapshot(store, max_age_s=None, read_after=None, clock=time.monotonic):
    """The shared snapshot of this store, read again when older than max_age_s or read before
    `read_after` (a clock() value, by default time.monotonic(): a submission acknowledged then is in it)."""
    max_age_s = MAX_AGE_S if max_age_s is None else max_age_s
    entry = store.kept(KEPT)
    with entry.lock:
        current = entry.value
        if (current is None or clock() - current.read_at > max_age_s
                or (read_after is not None and current.read_at <= read_after)):
            current = entry.value = Snapshot(store, clock)
        return current


def state_of(store, user_id, submission_id, submitted_at=None, clock=time.monotonic):
    """The LiveState of a submission of user_id's, acknowledged at clock() `submitted_at` (a page polls this)."""
    return snapshot(store, read_after=submitted_at, clock=clock).of(user_id, submission_id)
