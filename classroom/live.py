"""The live queue state every open Practice page follows, read once per interval for all of them.

A page follows its learner's newest submission: queued (position N), grading,
or finished. Instead of each page asking the database (and re-reading its
history) on every poll, the app process keeps one snapshot of the unfinished
jobs, in claim order (queue.claim_order), plus the number of live workers,
and refreshes it at most every MAX_AGE_S: 50 pages polling every POLL_S cost
one small indexed query per MAX_AGE_S, not 50. A submission missing from the
snapshot has no unfinished job: its verdict is stored, and only then does its
page read its history again.
"""

import threading
import time
from dataclasses import dataclass

from sqlalchemy import select

from . import queue
from .models import utcnow

MAX_AGE_S = 0.25  # a snapshot older than this is read again
POLL_S = 0.5  # how often a page looks: a change is seen within POLL_S + MAX_AGE_S = 0.75 s, drawn within 1 s


@dataclass(frozen=True)
class LiveState:
    """One followed submission, as the page shows it."""

    state: str  # "queued", "running" or "finished"
    position: int | None = None  # among the queued jobs, in claim order, counting from 1
    delayed: bool = False  # waits on a dead or absent worker, or its worker's lease lapsed


_FINISHED = LiveState("finished")


class Snapshot:
    """{submission id: (user id, LiveState)} of every unfinished submission, read in one query."""

    def __init__(self, store, clock=time.monotonic):
        now = utcnow()
        order = queue.claim_order()
        with store.session() as session:
            rows = session.execute(select(order.c.submission_id, order.c.user_id, order.c.state, order.c.lease_until)
                                   .order_by(order.c.turn, order.c.job_id)).all()
            workers = queue.live_workers(session, now)
        self.read_at = clock()
        self.states, position = {}, 0
        for submission_id, user_id, state, lease_until in rows:  # a regrade's job comes after the first: newest wins
            if state == "queued":
                position += 1
                self.states[submission_id] = (user_id, LiveState("queued", position, workers == 0))
            else:
                lapsed = lease_until is not None and lease_until < now
                self.states[submission_id] = (user_id, LiveState("running", None, lapsed))

    def of(self, user_id, submission_id):
        """The state of one of user_id's submissions (finished when it has no unfinished job, or is not theirs)."""
        owner, state = self.states.get(submission_id, (user_id, _FINISHED))
        return state if owner == user_id else _FINISHED


_snapshots, _lock = {}, threading.Lock()  # id(store) -> Snapshot


def snapshot(store, max_age_s=None, read_after=None, clock=time.monotonic):
    """The shared snapshot of this store, read again when older than max_age_s or read before
    `read_after` (a clock() value, by default time.monotonic(): a submission acknowledged then is in it)."""
    max_age_s = MAX_AGE_S if max_age_s is None else max_age_s
    with _lock:
        current = _snapshots.get(id(store))
        if (current is None or clock() - current.read_at > max_age_s
                or (read_after is not None and current.read_at <= read_after)):
            current = _snapshots[id(store)] = Snapshot(store, clock)
        return current


def state_of(store, user_id, submission_id, submitted_at=None, clock=time.monotonic):
    """The LiveState of a submission of user_id's, acknowledged at clock() `submitted_at` (a page polls this)."""
    return snapshot(store, read_after=submitted_at, clock=clock).of(user_id, submission_id)
