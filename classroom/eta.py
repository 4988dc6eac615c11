"""How long a queued submission waits: a forecast from the claim order, the grading times measured so far and
the live workers.

The forecast replays the queue's own rules (classroom/queue.py) on expected durations: each live worker
takes the next job in claim order as soon as it is free, submissions before regrades, except that a queued
regrade goes first once REGRADE_AGE_S has passed without one (the aging rule). A worker is free:
- busy: once its job's expected time left has run out, plus the measured overhead (`Measured.overhead_s`: the
  mean time from a worker's verdict to its next claim while a job was waiting: storing the verdict, the lease
  thread, the next claim's transaction), and again after each job it takes;
- idle: at its next claim, measured (`Measured.idle_s`, `idle_of`): of the last IDLE_JOBS jobs that found their
  worker idle, the median time from queued to claimed (the worker asks every IDLE_POLL_S: half a poll on
  average, the value before any is measured, plus the claim's transaction, which waits for the burst's
  submissions on SQLite).

What a job costs (`Timing`, per exercise and kind of work, from its last HISTORY graded jobs):
- a hang is a job that ran to the sandbox's time limit (LIMIT_S, claim to verdict); in the bench
  (bench/classroom.py --explain) every such job was a hostile file (an infinite loop), and every other job took
  at most a few seconds (5.4 s at a load of 15 on 2 cores); its hang time is the mean of the hangs measured
  (else LIMIT_S), and its hang share the share of the jobs that hung;
- the typical time is the mean of the newest TYPICAL others, times the machine's pace; the normal time the
  longest of those, and at least HANG_FACTOR times their median, times the pace. A job in flight probably hangs
  past its normal time and HANG_FLOOR_S (`hangs_after`: on an idle machine a worker's first job, 1.4 s claim to
  verdict, was past 4 x the 0.2 s of the others, and every forecast behind it waited for a hang: 18 times too
  long);
- the pace follows the machine's speed, which on a shared machine changes by 40% from one burst to the next
  (a class-wide regrade, other work): the newest PACE_JOBS jobs that did not hang (`split`) are the pace's, and
  the typical times are measured on the jobs before them; the pace is the median of the newest jobs' times, each
  over its kind's typical time before them (`pace_of`). So the newest few jobs say how fast the machine grades
  now, the earlier ones what each exercise costs relative to the others. Until PACE_JOBS jobs came before them,
  and for a kind of work that has none before them, the pace is 1 and the typical time its newest jobs'.
  PACE_JOBS is 10: in the bench's bursts the speed changed by 0.6-1.6x from one burst to the next, and a pace of
  the newest 6 jobs was further from the next burst's speed than no pace in 2 of 4 bursts;
- a forecast is the most likely wait, not the mean: a hang is rare and long, so the mean charges every job ahead
  a share of one, and a wait with no hang ahead (the most likely one) comes out several times too long (in the
  bench, 2 of 18 ex00 jobs ran 20 s and the others 0.2 s: each ex00 job ahead was charged 2.7 s, and the waits
  before the first hang were forecast 2-4 times too long). So a queued job costs the jobs behind it its typical
  time, and the replay places the hangs the jobs ahead most likely hold: each job claimed adds its hang share to
  the expected number of hangs so far (those in flight first), and the job at which the median of that number
  (a Poisson count: `likely_hangs`) reaches k is the k-th hang, and holds its worker for its hang time. Which
  jobs hang cannot be foreseen; how many most likely do can. A job's own feedback is forecast after its typical
  time (a learner's own hang would be a surprise whatever the forecast);
- a job in flight costs its typical time less the time it has run (its hang share counted among the expected
  hangs), until it probably hangs (`hangs_after`): then it runs to its hang time;
- a regrade runs code already graded: its submission's newest verdict says whether it hangs (`rerun`: a hang share
  of 1 if that one ran to the limit, else 0), where its exercise's hang share would count every regrade of an
  exercise with hostile submissions as a part of a likely hang;
- a submission's first run is stopped at its exercise's normal time (at least SET_ASIDE_FLOOR_S: `set_aside_s`)
  and the submission set aside (classroom/queue.py `set_aside`), to run with the whole limit after the
  submissions not set aside (batch 2): so its hang holds the worker for that set-aside time (`first_run`), and
  once set aside it costs its hang time (it ran past its normal time once: `rerun` as a hang). The typical and
  hang times of a kind of work are measured on its finished jobs: a submission set aside counts once, by its
  run with the whole limit.
A measurement missing falls back to the exercise's other kind of work, else to the mean over the exercises
measured, else to DEFAULT_JOB_S with no hang. A worker's first job of each exercise is left out: its first of
all also starts the warm sandbox server, and the first of an exercise loads what grading it needs.
The forecast a page shows is computed again from each live snapshot (classroom/live.py), so it follows the
queue as it moves: once a hang has run past its normal time, every forecast behind it includes it.
What the measurements hold, from submission to the verdict's stamp (the time the bench and the learner's page
count): the claim delay of an idle worker (idle_s), each job from its claim (stamped when the claim's
transaction begins) to its verdict (stamped when the storing transaction begins: the strict sandbox's start, the
staging, the grading, all inside), and from that verdict to the worker's next claim (overhead_s: the commit, the
lease thread, the next claim). In the strict sandbox the jobs of the honesty test's bursts took 0.6-3 s, the
gaps between them 0.01-0.3 s (mean 0.03-0.2 s) and an idle worker's claim 0.0-1.1 s after the submission, at
loads of 13-23 on 2 cores. Left out: the storing transaction's commit after the stamp and the page's next poll
(within live.POLL_S + live.MAX_AGE_S).
What it cannot foresee: which queued job will hang (in a burst of 50 with two infinite loops, a forecast made
before they start is off by about the 10 s a hang costs everyone behind it on two workers where the hang comes
earlier than placed, and by 16 s in one bench run where both ran at once), and a change of the
machine's speed after it was made (the pace follows one within PACE_JOBS jobs; a forecast shown at submission
still carries the speed of the jobs before it).

The measurements are read together (`measured`), here only, from the last READ_JOBS graded jobs (an indexed,
limited read whatever the size of the class's history).
No live worker: no forecast (the page says no grader is running).
"""

import bisect
import heapq
import math
import statistics
from typing import NamedTuple

from sqlalchemy import func, select

from course.common.i18n import t
from grader.sandbox import SandboxLimits

from .models import REGRADE, SET_ASIDE, SUBMIT, Job, Result, Submission  # noqa: F401 (SET_ASIDE: eta.SET_ASIDE)

HISTORY = 30  # graded jobs per exercise and kind of work whose hang share and hang time make its Timing
TYPICAL = 10  # ... and the newest jobs of those that did not hang, whose times make its typical and normal time
READ_JOBS = 1000  # the last graded jobs read for the measurements (newest first, through ix_jobs_state_id)
LIMIT_S = SandboxLimits().timeout_s  # the sandbox's time limit per job (classroom/grading.py grades with defaults)
HANG_FACTOR = 4.0  # a job in flight is past its normal time no sooner than this many times its median
HANG_FLOOR_S = 2.0  # ... and no sooner than this: a worker's first job (its sandbox's start, the exercise
# loaded: left out of the typical times) took 1.4 s claim to verdict where the others took 0.2 s on an idle machine
SET_ASIDE_FLOOR_S = 0.5  # a submission's first run is set aside past its normal time, and no sooner than this
# (set_aside_s). The time limit counts the run alone (its fork in the warm sandbox server to its exit), not the
# server's start, so a cold start needs no more; the floor is for the machine's scheduling on a loaded machine.
# Each hang's first run holds its worker this long, and where it falls in a burst cannot be foreseen: at 5 s, two
# infinite loops set aside at once held both workers for most of a 50-job burst (bench p95 6.2-9.4 s, against
# 5.2-6.1 s at 2 s); at 2 s, in bursts of jobs of 0.1 s, the waits behind them came out 1-2 s longer than forecast
DEFAULT_JOB_S = 5.0  # expected grading time of an exercise with no graded job yet
IDLE_POLL_S = 0.25  # a worker with nothing to do asks for a job this often (classroom/worker.py): its phase,
# which no forecast can know, is at most this much of a wait (a claim on an empty queue is one indexed read)
GAPS = 100  # the last back-to-back claims whose mean gap is the overhead
DEFAULT_OVERHEAD_S = 0.5  # verdict to next claim before any was measured (about what a worker on 2 cores takes)
PACE_JOBS = 10  # the newest graded jobs whose times, against their kind's earlier ones, give the machine's pace
IDLE_JOBS = 20  # the last jobs that found their worker idle, whose extra time gives an idle worker's start


class Timing(NamedTuple):
    """What a job of one exercise and kind of work costs, measured (seconds from claim to verdict)."""

    typical_s: float  # the mean of the jobs that did not hang
    normal_s: float  # the longest of those, at least HANG_FACTOR x their median: past it (and HANG_FLOOR_S), a job
    # in flight hangs (`hangs_after`), and a submission's first run is set aside (`set_aside_s`)
    hang_share: float  # the share of the jobs that ran to the time limit
    hang_s: float  # the mean time of those (LIMIT_S when none hung)

    def expected_s(self):
        """A job's mean seconds: the typical time plus its share of a hang."""
        return mean_with_hangs(self.typical_s, self.hang_share, self.hang_s)


DEFAULT = Timing(DEFAULT_JOB_S, HANG_FACTOR * DEFAULT_JOB_S, 0.0, LIMIT_S)


class Measured(NamedTuple):
    """What the forecast learns from the graded jobs (read together by `measured`)."""

    durations: dict  # {(exercise id, batch): Timing}
    overhead_s: float  # mean seconds from a worker's verdict to its next claim while a job was waiting
    idle_s: float = IDLE_POLL_S / 2  # seconds from a submission to an idle worker's claim (idle_of)


class Pending(NamedTuple):
    """A job that will be claimed: its key, batch (SUBMIT, REGRADE or SET_ASIDE), seconds (what it costs the jobs behind
    it unless it hangs: its typical time), its own seconds to a verdict (None: seconds), and its hang share and
    hang time."""

    key: object
    batch: int
    seconds: float
    own_s: float | None = None
    hang_share: float = 0.0
    hang_s: float = LIMIT_S

    def expected_s(self):
        """Its mean seconds: its time plus its share of a hang."""
        return mean_with_hangs(self.seconds, self.hang_share, self.hang_s)


def mean_with_hangs(seconds, hang_share, hang_s):
    """The mean seconds of a job that takes `seconds` unless it hangs (hang_share of the time), then hang_s."""
    return seconds + hang_share * (hang_s - seconds)


def pending(key, batch, timing_):
    """The Pending job of a queued job with this Timing."""
    return Pending(key, batch, timing_.typical_s, None, timing_.hang_share, timing_.hang_s)


def likely_hangs(expected):
    """The median number of hangs among jobs expected to hold `expected` of them: of a Poisson count of that mean,
    the least k whose cumulative probability reaches one half (0 below ln 2 = 0.69)."""
    if expected <= 0:
        return 0
    if expected > 50:  # the median of a large Poisson count: within 1/3 of its mean
        return int(expected + 1 / 3)
    k, term = 0, math.exp(-expected)
    total = term
    while total < 0.5:
        k += 1
        term *= expected / k
        total += term
    return k


def timing(durations, exercise_id, batch):
    """The Timing of a job: its exercise's for this batch's kind of work (a submission set aside is a submission),
    else the other kind's, else the mean of the exercises measured (the same workers), else DEFAULT."""
    kind = REGRADE if batch == REGRADE else SUBMIT
    for key in ((exercise_id, kind), (exercise_id, 1 - kind)):
        if key in durations:
            return durations[key]
    if not durations:
        return DEFAULT
    return Timing(*(statistics.fmean(column) for column in zip(*durations.values())))


def expected_s(durations, exercise_id, batch):
    """Expected grading seconds of a queued job (its Timing's expected time)."""
    return timing(durations, exercise_id, batch).expected_s()


def hangs_after(timing_):
    """Seconds past which a job in flight probably hangs: its normal time, at least HANG_FLOOR_S."""
    return max(timing_.normal_s, HANG_FLOOR_S)


def remaining_s(timing_, elapsed):
    """Seconds left of a job in flight for `elapsed` s: its typical time less that, or, once it probably hangs
    (`hangs_after`), until its hang time; none once that has passed too."""
    if elapsed > hangs_after(timing_):
        return max(timing_.hang_s - elapsed, 0.0)
    return max(timing_.typical_s - elapsed, 0.0)


def share_in_flight(timing_, elapsed):
    """The hang share a job in flight for `elapsed` s still carries: its own until it probably hangs, then none (its
    hang is in its time left)."""
    return 0.0 if elapsed > hangs_after(timing_) else timing_.hang_share


def set_aside_s(timing_):
    """Seconds a submission's first run may take before it is set aside (its worker stops it; classroom/worker.py):
    its normal time, at least SET_ASIDE_FLOOR_S; None when that is not below LIMIT_S (nothing measured yet: the
    run has the whole limit)."""
    seconds = max(timing_.normal_s, SET_ASIDE_FLOOR_S)
    return seconds if seconds < LIMIT_S else None


def first_run(timing_):
    """The Timing of a submission's first run: a hang holds its worker until it is set aside (set_aside_s)."""
    limit = set_aside_s(timing_)
    return timing_ if limit is None else timing_._replace(hang_s=min(timing_.hang_s, limit))


def rerun(timing_, last_s):
    """The Timing of a regrade whose submission's newest verdict took last_s seconds (None: none known): the same
    code runs again, so it hangs if that one ran to the limit (a hang share of 1), and does not if it did not."""
    if last_s is None:
        return timing_
    if last_s >= LIMIT_S:  # its own verdict comes after the hang too
        return Timing(timing_.hang_s, timing_.hang_s, 1.0, timing_.hang_s)
    return timing_._replace(hang_share=0.0)


def last_verdicts_s(session, submission_ids):
    """{submission id: seconds its newest verdict took, claim to verdict (Result.grading_s)} of some submissions."""
    if not submission_ids:
        return {}
    rows = session.execute(select(Result.submission_id, Result.grading_s)
                           .where(Result.submission_id.in_(sorted(set(submission_ids)))).order_by(Result.id)).all()
    return dict(rows)  # the newest verdict of each comes last


def mean_s(pending, batch):
    """The mean expected seconds (hang shares included: the mean of many) of the pending jobs of one batch
    (DEFAULT_JOB_S without one)."""
    values = [job.expected_s() for job in pending if job.batch == batch]
    return statistics.fmean(values) if values else DEFAULT_JOB_S


def behind_s(times, jobs_between, pending, workers):
    """The start of a regrade behind the jobs replayed (times): once the last of them finishes, jobs_between more
    regrades of their mean time, shared by the workers."""
    last = max((finish for _, finish in times.values()), default=0.0)
    return last + max(jobs_between, 0) * mean_s(pending, REGRADE) / workers


def schedule(pending, in_flight, workers, regrade_due_in=None, age_s=60.0, overhead_s=0.0, idle_s=0.0,
             hangs_in_flight=0.0):
    """Replay the claims -> {key: (start s, finish s)} from now, or None without a live worker.

    pending: Pending jobs in claim order with no regrade due (submissions first, then those set aside), each
    finishing after its own seconds and freeing its worker after its seconds, or after its hang time if it is
    where the likely number of hangs grows (`likely_hangs`); in_flight: the seconds left of each job being
    graded, and hangs_in_flight their hang shares; regrade_due_in: seconds until a queued regrade is due (None:
    the rule does not apply), after which each claimed regrade restarts the age_s clock; overhead_s: from a
    verdict to the worker's next claim; idle_s: until an idle worker's next poll.
    """
    if workers <= 0:
        return None
    busy = [left + overhead_s for left in sorted(in_flight)[:workers]]
    free = busy + [idle_s] * max(workers - len(in_flight), 0)  # when each worker claims next
    heapq.heapify(free)
    submits = [job for job in pending if job.batch != REGRADE][::-1]  # stacks: the next claim at the end
    regrades = [job for job in pending if job.batch == REGRADE][::-1]
    due = float("inf") if regrade_due_in is None else regrade_due_in
    times, expected = {}, hangs_in_flight
    placed = likely_hangs(expected)  # hangs already likely among the jobs in flight (their time left holds none)
    while submits or regrades:
        now = heapq.heappop(free)
        if regrades and (not submits or now >= due):
            job = regrades.pop()
            due = now + age_s
        else:
            job = submits.pop()
        times[job.key] = (now, now + (job.seconds if job.own_s is None else job.own_s))
        expected += job.hang_share
        busy = job.seconds
        if likely_hangs(expected) > placed:  # the likely number of hangs grows here: this one holds its worker
            placed, busy = placed + 1, max(job.hang_s, job.seconds)
        heapq.heappush(free, now + busy + overhead_s)
    return times


class Graded(NamedTuple):
    """One graded job as the measurements read it."""

    worker_id: str
    exercise_id: str
    batch: int
    created_at: object
    started_at: object
    finished_at: object

    def seconds(self):
        """Seconds from claim to verdict."""
        return (self.finished_at - self.started_at).total_seconds()


def recent(session, read=READ_JOBS):
    """The last `read` graded jobs, oldest first: newest ids through the (state, id) index, a limited read."""
    rows = session.execute(
        select(Job.worker_id, Submission.exercise_id, Job.reason, Job.created_at, Job.started_at, Job.finished_at)
        .join(Submission, Submission.id == Job.submission_id)
        .where(Job.state == "done").order_by(Job.id.desc()).limit(read)).all()
    return [Graded(worker, exercise_id, REGRADE if reason == "regrade" else SUBMIT, created, started, finished)
            for worker, exercise_id, reason, created, started, finished in reversed(rows)
            if started is not None and finished is not None]


def durations(session, history=HISTORY, read=READ_JOBS):
    """{(exercise id, batch): Timing of its last `history` graded jobs among the last `read`}."""
    return timings(recent(session, read), history)


def warm(graded):
    """The graded jobs (oldest first) less each worker's first of an exercise among them (a cold start: its first
    of all also starts the warm sandbox server, the first of an exercise loads what grading it needs)."""
    first, found = set(), []
    for job in graded:
        if (job.worker_id, job.exercise_id) in first:
            found.append(job)
        first.add((job.worker_id, job.exercise_id))
    return found


def _by_key(jobs):
    """{(exercise id, batch): [seconds, oldest first]} of some jobs."""
    seen = {}
    for job in jobs:
        seen.setdefault((job.exercise_id, job.batch), []).append(job.seconds())
    return seen


def _base(seen, key):
    """The grading times (not hangs) of a key, else of its exercise's other kind of work, else []."""
    for found in (seen.get(key), seen.get((key[0], 1 - key[1]))):
        normal = [value for value in found or [] if value < LIMIT_S]
        if normal:
            return normal
    return []


def split(graded, pace_jobs=PACE_JOBS):
    """(earlier, newest) of the warm graded jobs: newest, the last pace_jobs that did not hang, and earlier the
    jobs before them; newest is empty (no pace) until earlier holds at least pace_jobs jobs that did not hang."""
    jobs = warm(graded)
    normal = [i for i, job in enumerate(jobs) if job.seconds() < LIMIT_S]
    if len(normal) < 2 * pace_jobs:
        return jobs, []
    cut = normal[-pace_jobs]
    return jobs[:cut], [job for job in jobs[cut:] if job.seconds() < LIMIT_S]


def pace_of(earlier, newest, typical=TYPICAL):
    """The machine's pace now: the median of the newest jobs' times, each over the typical time its kind of work
    had in the earlier jobs (1.0 without newest jobs or a kind measured before them)."""
    seen = _by_key(earlier)
    ratios = []
    for job in newest:
        base = _base(seen, (job.exercise_id, job.batch))[-typical:]
        if base:
            ratios.append(job.seconds() / statistics.fmean(base))
    return statistics.median(ratios) if ratios else 1.0


def timings(graded, history=HISTORY, pace_jobs=PACE_JOBS):
    """{(exercise id, batch): Timing} of graded jobs (oldest first), cold starts left out (`warm`): the hang share
    and time from its last `history` jobs; the typical and normal time from its jobs before the newest (`split`),
    times the pace the newest show (`pace_of`), or from its newest alone when it has none before them."""
    earlier, newest = split(graded, pace_jobs)
    pace, before = pace_of(earlier, newest), _by_key(earlier)
    timed = {}
    for key, values in _by_key(warm(graded)).items():
        last = values[-history:]
        older = len(before.get(key, [])) - (len(values) - len(last))  # how many of `last` came before the newest
        base = [value for value in last[:max(older, 0)] if value < LIMIT_S]
        timed[key] = timing_of(last, base=base or None, pace=pace if base else 1.0)
    return timed


def timing_of(values, typical=TYPICAL, base=None, pace=1.0):
    """The Timing of some grading times (oldest first): the hang share and time from values, the typical and normal
    time from the newest `typical` of base (by default values) that did not hang, times pace."""
    hangs = [value for value in values if value >= LIMIT_S]
    normal = [value for value in (values if base is None else base) if value < LIMIT_S][-typical:] or [DEFAULT_JOB_S]
    return Timing(pace * statistics.fmean(normal),
                  pace * max(max(normal), HANG_FACTOR * statistics.median(normal)),
                  len(hangs) / len(values), statistics.fmean(hangs) if hangs else LIMIT_S)


class SetAside(NamedTuple):
    """A submission's first run stopped and set aside: its worker and when (the run leaves no verdict)."""

    worker_id: str
    at: object


def set_asides(session, read=READ_JOBS):
    """The last `read` runs set aside (through ix_jobs_set_aside_at, a limited read), oldest first."""
    rows = session.execute(select(Job.set_aside_by, Job.set_aside_at).where(Job.set_aside_at.is_not(None))
                           .order_by(Job.set_aside_at.desc()).limit(read)).all()
    return [SetAside(worker_id, at) for worker_id, at in reversed(rows)]


def ran_to(run_s, limit_s=LIMIT_S):
    """Did a sandboxed run of run_s seconds (Result.run_s, rounded to the ms) last its whole time limit?"""
    return run_s >= limit_s - 0.001


def set_aside_counts(session, limit_s=LIMIT_S):
    """{"runs": runs set aside so far, "graded": of those graded since, "not_endless": of those, the runs with the
    whole limit (limit_s: the grader's, as the workers run by default) that ended before it (slow code, not an
    infinite loop: set aside for nothing, its learner waited behind the others)}: `status` shows it, so that a
    class sees when its normal times are too short for its machine."""
    runs = session.scalar(select(func.count(Job.id)).where(Job.set_aside_at.is_not(None)))
    graded = session.scalars(select(Result.run_s).join(Job, Job.id == Result.job_id)
                             .where(Job.set_aside_at.is_not(None))).all()
    return {"runs": runs, "graded": len(graded), "not_endless": sum(not ran_to(run_s, limit_s) for run_s in graded)}


def overhead_s(session, gaps=GAPS, read=READ_JOBS):
    """Mean seconds from a worker's verdict (or a run it set aside) to its next claim, over its last `gaps` claims
    of a job that was already queued then, among the last `read` graded jobs (else DEFAULT_OVERHEAD_S)."""
    return overhead_of(recent(session, read), gaps, set_asides(session, read))


def _claims(graded, asides=()):
    """[(job, the end before its claim on its worker or None)] of graded jobs with a worker, in claim order: an end
    is a verdict, or a run set aside (a worker's time between a verdict and its next claim may hold one)."""
    ends = {}
    for job in graded:
        ends.setdefault(job.worker_id, []).append(job.finished_at)
    for aside in asides:
        ends.setdefault(aside.worker_id, []).append(aside.at)
    for times in ends.values():
        times.sort()
    found = []
    for job in sorted((job for job in graded if job.worker_id is not None), key=lambda job: job.started_at):
        times = ends[job.worker_id]
        before = bisect.bisect_right(times, job.started_at)
        found.append((job, times[before - 1] if before else None))
    return found


def overhead_of(graded, gaps=GAPS, asides=()):
    """overhead_s of graded jobs and the runs set aside among them."""
    seen = [(job.started_at - previous).total_seconds() for job, previous in _claims(graded, asides)
            if previous is not None and job.created_at <= previous][-gaps:]
    return statistics.fmean(max(gap, 0.0) for gap in seen) if seen else DEFAULT_OVERHEAD_S


def idle_of(graded, jobs=IDLE_JOBS, asides=()):
    """Seconds from a submission to an idle worker's claim: the median, over the last `jobs` jobs that found their
    worker idle (queued after its previous verdict or run set aside; not its first), of the time from queued to
    claimed (else IDLE_POLL_S / 2, half a poll)."""
    seen = [(job.started_at - job.created_at).total_seconds() for job, previous in _claims(graded, asides)
            if previous is not None and previous < job.created_at <= job.started_at][-jobs:]
    return statistics.median(seen) if seen else IDLE_POLL_S / 2


def measured(session, read=READ_JOBS):
    """The grading times, the overhead between claims and an idle worker's claim delay, as the forecast uses them,
    from one read of the last `read` graded jobs and runs set aside."""
    return measured_of(recent(session, read), set_asides(session, read))


def measured_of(graded, asides=()):
    """The Measured of some graded jobs (oldest first) and the runs set aside among them."""
    return Measured(timings(graded), overhead_of(graded, asides=asides), idle_of(graded, asides=asides))


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
