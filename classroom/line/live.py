"""The live queue state every open Practice page follows, read once per interval for all of them.

A page follows its learner's newest submission: queued (position N), grading,
or finished. Instead of each page asking the database (and re-reading its
history) on every poll, the store keeps one snapshot (Store.kept) of the waiting
line (classroom/line/line.py: the unfinished jobs a wait needs, in claim order, with
their positions), plus the number of live workers and the measured grading times
that the wait forecast (classroom/line/eta.py) needs, and refreshes it at most every
MAX_AGE_S: 50 pages polling every POLL_S cost five small queries per MAX_AGE_S
(the regrade clock, the submissions' jobs, the running regrades, the first
regrades, the workers), not 250; a regrade adds two (the first regrades' rows,
and the newest verdicts of their submissions: classroom/line/eta.py `rerun`),
and a 20,000-job regrade a count and a few more windows of ids (see
classroom/line/line.py). A submission missing from the snapshot has no unfinished job (or, during
a large regrade, is looked up once per snapshot): its verdict is stored, and only
then does its page read its history again.
"""

import time
from dataclasses import dataclass, replace

from sqlalchemy import select

from . import eta, grading_times, line, queue
from ..data.models import Job, Submission, utcnow

MAX_AGE_S = 0.25  # a snapshot older than this is read again
POLL_S = 0.5  # how often a page looks: a change is seen within POLL_S + MAX_AGE_S = 0.75 s, drawn within 1 s


@dataclass(frozen=True)
class LiveState:
    """One followed submission, as the page shows it."""

    state: str  # "queued", "running" or "finished"
    position: int | None = None  # among the queued jobs, in claim order, counting from 1
    delayed: bool = False  # waits on a dead or absent worker, or its worker's lease lapsed
    start_s: float | None = None  # forecast (classroom/line/eta.py) from the snapshot's reading: seconds to its claim
    finish_s: float | None = None  # ... and to its verdict; both None without a live worker
    set_aside: bool = False  # queued again after its first run passed its exercise's normal time (queue.set_aside)


_FINISHED = LiveState("finished")


class Snapshot:
    """{submission id: (user id, LiveState)} of every unfinished submission in the waiting line (classroom/line/line.py:
    every submission's job and the first regrades, with the live workers, the regrade clock and, every
    DURATIONS_MAX_AGE_S, the measured grading times); the wait forecast is computed on the first question about
    a queued or running submission. A regrade behind the line read is looked up when a page asks for it."""

    def __init__(self, store, clock=time.monotonic, now=None):
        now = now or utcnow()
        with store.session() as session:
            self.line = line.read(session, now)
            self.workers = queue.live_workers(session, now)
            found = measured(store, session)
            regrades = [row[1] for row in self.line.rows if row[5] == eta.REGRADE]
            last_s = grading_times.last_verdicts_s(session, regrades)
            self.durations, self.overhead_s, self.idle_s = found.durations, found.overhead_s, found.idle_s
        self.store, self.read_at, self.regrade_due_in = store, clock(), self.line.regrade_due_in
        self.states, self.pending, self.left, self._times, self._behind = {}, [], {}, None, {}
        self.hangs_in_flight = 0.0  # the hang shares of the jobs in flight (eta.schedule)
        newest, expected = {}, {}
        for job_id, submission_id, user_id, state, lease_until, batch, exercise_id, started_at in self.line.rows:
            lapsed = state == "running" and lease_until is not None and lease_until < now
            if (exercise_id, batch) not in expected:
                expected[exercise_id, batch] = eta.timing(self.durations, exercise_id, batch)
            timing = expected[exercise_id, batch]
            if batch == eta.REGRADE:  # a regrade: its code's newest verdict says whether it hangs
                timing = eta.rerun(timing, last_s.get(submission_id))
            elif batch == eta.SET_ASIDE:  # it ran past its normal time once: as a hang
                timing = eta.rerun(timing, eta.LIMIT_S)
            else:  # a first run: set aside at its normal time
                timing = eta.first_run(timing)
            if state == "queued" or lapsed:  # claimable: the forecast replays it
                self.pending.append(eta.pending(job_id, batch, timing))
            else:  # in flight: past its normal time, probably a hang (eta.remaining_s)
                elapsed = (now - started_at).total_seconds()
                self.left[job_id] = eta.remaining_s(timing, elapsed)
                self.hangs_in_flight += eta.share_in_flight(timing, elapsed)
            if job_id < newest.get(submission_id, 0):  # a submission shows its newest job
                continue
            newest[submission_id] = job_id
            live = LiveState("queued", self.line.positions[job_id], self.workers == 0,
                             set_aside=batch == eta.SET_ASIDE) if state == "queued" else \
                LiveState("running", None, lapsed, set_aside=batch == eta.SET_ASIDE)
            self.states[submission_id] = (user_id, live, job_id)

    def times(self):
        """{job id: (start s, finish s)} from the snapshot's reading, or None without a live worker."""
        if self._times is None:
            self._times = eta.schedule(self.pending, list(self.left.values()), self.workers, self.regrade_due_in,
                                       queue.REGRADE_AGE_S, self.overhead_s, self.idle_s,
                                       self.hangs_in_flight) or {}
        return self._times if self.workers else None

    def _entry(self, submission_id):
        """(user id, LiveState, job id) of an unfinished submission, or None; a regrade behind the line read is
        looked up once per snapshot."""
        if submission_id in self.states or not self.line.regrades_unread():
            return self.states.get(submission_id)
        if submission_id not in self._behind:
            self._behind[submission_id] = self._look_up(submission_id)
        return self._behind[submission_id]

    def _look_up(self, submission_id):
        """(user id, LiveState, job id) of a submission whose newest job is a queued regrade behind the line read."""
        with self.store.session() as session:
            found = session.execute(select(Job.id, Job.state, Submission.user_id)
                                    .join(Submission, Submission.id == Job.submission_id)
                                    .where(Job.submission_id == submission_id)
                                    .order_by(Job.id.desc()).limit(1)).first()
            position = found and found[1] == "queued" and self.line.position_of(session, found[0])
        if not position:
            return None
        return found[2], LiveState("queued", position, self.workers == 0), found[0]

    def get(self, submission_id):
        """The LiveState of any submission, with its forecast (finished when it has no unfinished job)."""
        entry = self._entry(submission_id)
        if entry is None:
            return _FINISHED
        _, state, job_id = entry
        times = self.times()
        if times is None:
            return state
        if job_id in times:  # queued, or its lease lapsed: claimed again in turn
            return replace(state, start_s=times[job_id][0], finish_s=times[job_id][1])
        if job_id not in self.left:  # a regrade behind the line read
            start = eta.behind_s(times, state.position - len(self.line.positions) - 1, self.pending, self.workers)
            return replace(state, start_s=start, finish_s=start + eta.mean_s(self.pending, eta.REGRADE))
        return replace(state, start_s=0.0, finish_s=self.left[job_id])  # being graded

    def of(self, user_id, submission_id):
        """The state of one of user_id's submissions (finished when it has no unfinished job, or is not theirs)."""
        entry = self._entry(submission_id)
        return self.get(submission_id) if entry is not None and entry[0] == user_id else _FINISHED


DURATIONS_MAX_AGE_S = 2.0  # measured grading times are read again at most this often (one limited read, ~5 ms:
# at 10 s, a fresh class that graded a 50-job burst in 7 s on an idle machine kept forecasting its next burst
# from no history at all, 25 times too long)
DURATIONS_KEPT = "live_durations"  # this module's entry in Store.kept: (time.monotonic() read, its Measured)


def measured(store, session):
    """The store's measured grading times, overhead and idle start (grading_times.measured), read again when older
    than DURATIONS_MAX_AGE_S (the snapshot, and a worker for the time it sets a submission aside)."""
    entry = store.kept(DURATIONS_KEPT)
    with entry.lock:
        read_at, found = entry.value or (None, None)
        if read_at is None or time.monotonic() - read_at > DURATIONS_MAX_AGE_S:
            found = grading_times.measured(session)
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
