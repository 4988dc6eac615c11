"""How long a queued submission waits: a forecast from the claim order, the grading times measured so far and
the live workers.

The forecast replays the queue's own rules (classroom/queue.py) on estimated durations: each live worker
takes the next job in claim order as soon as it is free, submissions before regrades, except that a queued
regrade goes first once REGRADE_AGE_S has passed without one (the aging rule). A worker is free:
- busy: once its job's expected time has run out, plus the measured overhead (`Measured.overhead_s`: the mean
  time from a worker's verdict to its next claim while a job was waiting: storing the verdict, the lease
  thread, the next claim's transaction), and again after each job it takes;
- idle: at its next poll (a worker with nothing to do asks every IDLE_POLL_S), on average half a poll away.
A job's expected time is the typical grading time (claim to verdict) of the last HISTORY graded jobs of its
exercise and kind of work (submission or regrade), else of the other kind, else the mean over the exercises
measured, else DEFAULT_JOB_S. Typical: the mean of those within HANG_FACTOR times their median. A hang that runs
into its time limit (10-20 times a normal job) is rare and lies ahead of few of the forecasts; spread over
every job by a plain mean it made most forecasts a third too long in the bench (bench/classroom.py, part 1b),
while the median alone, which drops every slower job, made them a quarter too short. A worker's first job of
each exercise is left out: its first of all also starts the warm sandbox server, and the first of an exercise
loads what grading it needs (a second or more).
Both measurements are read together (`measured`), here only.
No live worker: no forecast (the page says no grader is running).
"""

import heapq
import statistics
from typing import NamedTuple

from sqlalchemy import case, func, select

from course.common.i18n import t

from .models import Job, Submission

HISTORY = 30  # graded jobs per exercise and kind of work whose typical time is its expected time
HANG_FACTOR = 4.0  # a grading time over this many times its exercise's median is a hang, left out of the mean
DEFAULT_JOB_S = 5.0  # expected grading time of an exercise with no graded job yet
IDLE_POLL_S = 1.0  # a worker with nothing to do asks for a job this often (classroom/worker.py)
GAPS = 100  # the last back-to-back claims whose mean gap is the overhead
DEFAULT_OVERHEAD_S = 0.5  # verdict to next claim before any was measured (about what a worker on 2 cores takes)


class Measured(NamedTuple):
    """What the forecast learns from the graded jobs (read together by `measured`)."""

    durations: dict  # {(exercise id, batch): typical seconds from claim to verdict}
    overhead_s: float  # mean seconds from a worker's verdict to its next claim while a job was waiting


class Pending(NamedTuple):
    """A job that will be claimed: its key, batch (0 submission, 1 regrade) and expected seconds."""

    key: object
    batch: int
    seconds: float


def expected_s(durations, exercise_id, batch):
    """Expected grading seconds of a job: its exercise's mean for this batch, else the other batch's, else the
    mean of the exercises measured (the same workers), else the default."""
    for key in ((exercise_id, batch), (exercise_id, 1 - batch)):
        if key in durations:
            return durations[key]
    return statistics.fmean(durations.values()) if durations else DEFAULT_JOB_S


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


def schedule(pending, in_flight, workers, regrade_due_in=None, age_s=60.0, overhead_s=0.0, idle_s=0.0):
    """Replay the claims -> {key: (start s, finish s)} from now, or None without a live worker.

    pending: Pending jobs in claim order with no regrade due (submissions first); in_flight: the expected
    seconds left of each job being graded; regrade_due_in: seconds until a queued regrade is due (None: the
    rule does not apply), after which each claimed regrade restarts the age_s clock; overhead_s: from a
    verdict to the worker's next claim; idle_s: until an idle worker's next poll.
    """
    if workers <= 0:
        return None
    busy = [left + overhead_s for left in sorted(in_flight)[:workers]]
    free = busy + [idle_s] * max(workers - len(in_flight), 0)  # when each worker claims next
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
        heapq.heappush(free, now + job.seconds + overhead_s)
    return times


def durations(session, history=HISTORY):
    """{(exercise id, batch): typical seconds from claim to verdict of its last `history` graded jobs}."""
    batch = case((Job.reason == "regrade", 1), else_=0)
    turn = func.row_number().over(partition_by=(Job.worker_id, Submission.exercise_id), order_by=Job.id).label("turn")
    warm = (select(Submission.exercise_id, batch.label("batch"), Job.id, Job.started_at, Job.finished_at, turn)
            .join(Submission, Submission.id == Job.submission_id)
            .where(Job.state == "done", Job.started_at.is_not(None), Job.finished_at.is_not(None))).subquery()
    place = func.row_number().over(partition_by=(warm.c.exercise_id, warm.c.batch), order_by=warm.c.id.desc())
    recent = (select(warm.c.exercise_id, warm.c.batch, warm.c.started_at, warm.c.finished_at, place.label("n"))
              .where(warm.c.turn > 1)).subquery()  # a worker's first job of an exercise: a cold start, not typical
    rows = session.execute(select(recent.c.exercise_id, recent.c.batch, recent.c.started_at, recent.c.finished_at)
                           .where(recent.c.n <= history)).all()
    seen = {}
    for exercise_id, batch_, started, finished in rows:
        seen.setdefault((exercise_id, batch_), []).append((finished - started).total_seconds())
    return {key: typical_s(values) for key, values in seen.items()}


def typical_s(values):
    """The mean of the grading times within HANG_FACTOR times their median (the hangs left out)."""
    limit = HANG_FACTOR * statistics.median(values)
    return statistics.fmean(value for value in values if value <= limit)


def overhead_s(session, gaps=GAPS):
    """Mean seconds from a worker's verdict to its next claim, over its last `gaps` claims of a job that was
    already queued at that verdict (else DEFAULT_OVERHEAD_S)."""
    previous = func.lag(Job.finished_at, type_=Job.finished_at.type).over(partition_by=Job.worker_id, order_by=Job.started_at)
    claims = (select(Job.id, Job.created_at, Job.started_at, previous.label("previous"))
              .where(Job.worker_id.is_not(None), Job.started_at.is_not(None))).subquery()
    rows = session.execute(select(claims.c.started_at, claims.c.previous)
                           .where(claims.c.previous.is_not(None), claims.c.created_at <= claims.c.previous)
                           .order_by(claims.c.id.desc()).limit(gaps)).all()
    seen = [(started - previous).total_seconds() for started, previous in rows]
    return statistics.fmean(max(gap, 0.0) for gap in seen) if seen else DEFAULT_OVERHEAD_S


def measured(session):
    """The grading times and the overhead between claims, as the forecast uses them."""
    return Measured(durations(session), overhead_s(session))


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
