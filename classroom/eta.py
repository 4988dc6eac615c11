"""How long a queued submission waits: a forecast from the claim order, the grading times measured so far and
the live workers.

The forecast replays the queue's own rules (classroom/queue.py) on estimated durations: each live worker
takes the next job in claim order as soon as it is free (a busy one once its job's expected time has run
out), submissions before regrades, except that a queued regrade goes first once REGRADE_AGE_S has passed
without one (the aging rule). A job's expected time is the mean grading time (claim to verdict) of the
last HISTORY graded jobs of its exercise and kind of work (submission or regrade), else of the other kind,
else DEFAULT_JOB_S. The mean, not the median: a queue's wait is a sum of grading times, and the occasional
slow job (a hang that runs into its time limit) is part of it. A worker's first job, which also starts its
warm sandbox server, is left out.
No live worker: no forecast (the page says no grader is running).
"""

import heapq
import statistics
from typing import NamedTuple

from sqlalchemy import case, func, select

from course.common.i18n import t

from .models import Job, Submission

HISTORY = 30  # graded jobs per exercise and kind of work whose mean is its expected time
DEFAULT_JOB_S = 5.0  # expected grading time of an exercise with no graded job yet


class Pending(NamedTuple):
    """A job that will be claimed: its key, batch (0 submission, 1 regrade) and expected seconds."""

    key: object
    batch: int
    seconds: float


def expected_s(durations, exercise_id, batch):
    """Expected grading seconds of a job: its exercise's mean for this batch, else the other batch's, else the
    default."""
    for key in ((exercise_id, batch), (exercise_id, 1 - batch)):
        if key in durations:
            return durations[key]
    return DEFAULT_JOB_S


def remaining_s(expected, elapsed):
    """Expected seconds left of a job in flight (none once its expected time has passed)."""
    return max(expected - elapsed, 0.0)


def mean_s(pending, batch):
    """The mean expected seconds of the pending jobs of one batch (DEFAULT_JOB_S without one)."""
    values = [job.seconds for job in pending if job.batch == batch]
    return statistics.fmean(values) if values else DEFAULT_JOB_S


def behind_s(times, jobs_between, pending, workers):
    """The start of a regrade behind the jobs replayed (times): once the last of them finishes, jobs_between more
    regrades of their mean time, shared by the workers."""
    last = max((finish for _, finish in times.values()), default=0.0)
    return last + max(jobs_between, 0) * mean_s(pending, 1) / workers


def schedule(pending, in_flight, workers, regrade_due_in=None, age_s=60.0):
    """Replay the claims -> {key: (start s, finish s)} from now, or None without a live worker.

    pending: Pending jobs in claim order with no regrade due (submissions first); in_flight: the expected
    seconds left of each job being graded; regrade_due_in: seconds until a queued regrade is due (None: the
    rule does not apply), after which each claimed regrade restarts the age_s clock.
    """
    if workers <= 0:
        return None
    free = sorted(in_flight)[:workers] + [0.0] * max(workers - len(in_flight), 0)  # when each worker is free
    heapq.heapify(free)
    submits = [job for job in pending if job.batch == 0][::-1]  # stacks: the next claim at the end
    regrades = [job for job in pending if job.batch == 1][::-1]
    due = float("inf") if regrade_due_in is None else regrade_due_in
    times = {}
    while submits or regrades:
        now = heapq.heappop(free)
        if regrades and (not submits or now >= due):
            job = regrades.pop()
            due = now + age_s
        else:
            job = submits.pop()
        times[job.key] = (now, now + job.seconds)
        heapq.heappush(free, now + job.seconds)
    return times


def durations(session, history=HISTORY):
    """{(exercise id, batch): mean seconds from claim to verdict of its last `history` graded jobs}."""
    batch = case((Job.reason == "regrade", 1), else_=0)
    turn = func.row_number().over(partition_by=Job.worker_id, order_by=Job.id).label("turn")
    warm = (select(Submission.exercise_id, batch.label("batch"), Job.id, Job.started_at, Job.finished_at, turn)
            .join(Submission, Submission.id == Job.submission_id)
            .where(Job.state == "done", Job.started_at.is_not(None), Job.finished_at.is_not(None))).subquery()
    place = func.row_number().over(partition_by=(warm.c.exercise_id, warm.c.batch), order_by=warm.c.id.desc())
    recent = (select(warm.c.exercise_id, warm.c.batch, warm.c.started_at, warm.c.finished_at, place.label("n"))
              .where(warm.c.turn > 1)).subquery()  # a worker's first job starts its warm server: not typical
    rows = session.execute(select(recent.c.exercise_id, recent.c.batch, recent.c.started_at, recent.c.finished_at)
                           .where(recent.c.n <= history)).all()
    seen = {}
    for exercise_id, batch_, started, finished in rows:
        seen.setdefault((exercise_id, batch_), []).append((finished - started).total_seconds())
    return {key: statistics.fmean(values) for key, values in seen.items()}


ROUND_S = 5  # waits under a minute are shown to the nearest ROUND_S seconds


def about(seconds, lang):
    """A wait in words: 'a few seconds', 'about 40 s', 'about 3 min', 'about 2 h'."""
    if seconds < 10:
        return t("classroom.eta_seconds_few", lang)
    if ROUND_S * round(seconds / ROUND_S) < 60:
        return t("classroom.eta_seconds", lang, n=max(10, ROUND_S * round(seconds / ROUND_S)))
    if seconds < 3600:
        return t("classroom.eta_minutes", lang, n=max(1, round(seconds / 60)))
    return t("classroom.eta_hours", lang, n=round(seconds / 3600))


def sentence(position, start_s, finish_s, lang):
    """The wait a page or the command line shows: position, time to start, time to feedback."""
    if start_s is None:
        return t("classroom.eta_no_worker", lang)
    if position is None:  # being graded
        return t("classroom.eta_running", lang, finish=about(finish_s, lang))
    return t("classroom.eta_queued", lang, position=position, start=about(start_s, lang),
             finish=about(finish_s, lang))
