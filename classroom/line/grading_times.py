"""What grading costs, measured on the class's graded jobs: the wait forecast's inputs (classroom/line/eta.py).

What a job costs (`Timing`, per exercise and kind of work, from its last HISTORY graded jobs):
- a hang is a job that ran to the sandbox's time limit (LIMIT_S, claim to verdict); in the bench
  (bench/classroom.py --explain) every such job was a hostile file (an infinite loop), and every other job took
  at most a few seconds (5.4 s at a load of 15 on 2 cores); its hang time is the mean of the hangs measured
  (else LIMIT_S), and its hang share the share of the jobs that hung;
- the typical time is the mean of the newest TYPICAL others, times the machine's pace; the normal time the
  longest of those, and at least HANG_FACTOR times their median, times the pace (past it a job in flight
  probably hangs, and the forecast takes a submission's first run to be set aside: classroom/line/eta.py);
- the pace follows the machine's speed, which on a shared machine changes by 40% from one burst to the next
  (a class-wide regrade, other work): the newest PACE_JOBS jobs that did not hang (`split`) are the pace's, and
  the typical times are measured on the jobs before them; the pace is the median of the newest jobs' times, each
  over its kind's typical time before them (`pace_of`). So the newest few jobs say how fast the machine grades
  now, the earlier ones what each exercise costs relative to the others. Until PACE_JOBS jobs came before them,
  and for a kind of work that has none before them, the pace is 1 and the typical time its newest jobs'.
  PACE_JOBS is 10: in the bench's bursts the speed changed by 0.6-1.6x from one burst to the next, and a pace of
  the newest 6 jobs was further from the next burst's speed than no pace in 2 of 4 bursts.
A worker's first job of each exercise is left out (`warm`): its first of all also starts the warm sandbox server,
and the first of an exercise loads what grading it needs. The typical and hang times of a kind of work are measured
on its finished jobs: a submission set aside counts once, by its run with the whole limit.

Between the jobs (`Measured`): the overhead, the mean time from a worker's verdict to its next claim while a job
was waiting (`overhead_of`: storing the verdict, the lease thread, the next claim's transaction), and an idle
worker's claim delay (`idle_of`: of the last IDLE_JOBS jobs that found their worker idle, the median time from
queued to claimed; the worker asks every IDLE_POLL_S, half a poll on average, the value before any is measured,
plus the claim's transaction, which waits for a burst's submissions on SQLite). A run set aside leaves no verdict
but a stamp (Job.set_aside_by, set_aside_at: `set_asides`), which ends its worker's gap as a verdict does; `status`
counts those runs (`set_aside_counts`).
What the measurements hold, from submission to the verdict's stamp (the time the bench and the learner's page
count): the claim delay of an idle worker (idle_s), each job from its claim (stamped when the claim's
transaction begins) to its verdict (stamped when the storing transaction begins: the strict sandbox's start, the
staging, the grading, all inside), and from that verdict to the worker's next claim (overhead_s: the commit, the
lease thread, the next claim). In the strict sandbox the jobs of the honesty test's bursts took 0.6-3 s, the
gaps between them 0.01-0.3 s (mean 0.03-0.2 s) and an idle worker's claim 0.0-1.1 s after the submission, at
loads of 13-23 on 2 cores. Left out: the storing transaction's commit after the stamp and the page's next poll
(within live.POLL_S + live.MAX_AGE_S).
The measurements are read together (`measured`), here only, from the last READ_JOBS graded jobs (an indexed,
limited read whatever the size of the class's history).
Imports: classroom.data.models and the grader's sandbox limits only.
"""

import bisect
import statistics
from typing import NamedTuple

from sqlalchemy import select

from grader.sandbox import SandboxLimits

from ..data.models import REGRADE, SUBMIT, Job, Result, Submission

HISTORY = 30  # graded jobs per exercise and kind of work whose hang share and hang time make its Timing
TYPICAL = 10  # ... and the newest jobs of those that did not hang, whose times make its typical and normal time
READ_JOBS = 1000  # the last graded jobs read for the measurements (newest first, through ix_jobs_state_id)
LIMIT_S = SandboxLimits().timeout_s  # the sandbox's time limit per job (classroom/line/grading.py grades with defaults)
HANG_FACTOR = 4.0  # a kind of work's normal time is at least this many times its median
DEFAULT_JOB_S = 5.0  # expected grading time of an exercise with no graded job yet
IDLE_POLL_S = 0.25  # a worker with nothing to do asks for a job this often (classroom/line/worker.py): its phase,
# which no forecast can know, is at most this much of a wait (a claim on an empty queue is one indexed read)
GAPS = 100  # the last back-to-back claims whose mean gap is the overhead
DEFAULT_OVERHEAD_S = 0.5  # verdict to next claim before any was measured (about what a worker on 2 cores takes)
PACE_JOBS = 10  # the newest graded jobs whose times, against their kind's earlier ones, give the machine's pace
IDLE_JOBS = 20  # the last jobs that found their worker idle, whose extra time gives an idle worker's start


def mean_with_hangs(seconds, hang_share, hang_s):
    """The mean seconds of a job that takes `seconds` unless it hangs (hang_share of the time), then hang_s."""
    return seconds + hang_share * (hang_s - seconds)


class Timing(NamedTuple):
    """What a job of one exercise and kind of work costs, measured (seconds from claim to verdict)."""

    typical_s: float  # the mean of the jobs that did not hang
    normal_s: float  # the longest of those, at least HANG_FACTOR x their median: past it a job in flight hangs and
    # the forecast sets aside a submission's first run (classroom/line/eta.py `hangs_after`, `set_aside_s`, each with its
    # floor; the workers set it aside at a time of the reference's: classroom/line/reference_times.py)
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


def last_verdicts_s(session, submission_ids):
    """{submission id: seconds its newest verdict took, claim to verdict (Result.grading_s)} of some submissions."""
    if not submission_ids:
        return {}
    rows = session.execute(select(Result.submission_id, Result.grading_s)
                           .where(Result.submission_id.in_(sorted(set(submission_ids)))).order_by(Result.id)).all()
    return dict(rows)  # the newest verdict of each comes last


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


def other_kind(kind):
    """The other kind of work than `kind` (SUBMIT or REGRADE; a submission set aside is a submission)."""
    return SUBMIT if kind == REGRADE else REGRADE


def _base(seen, key):
    """The grading times (not hangs) of a key, else of its exercise's other kind of work, else []."""
    for found in (seen.get(key), seen.get((key[0], other_kind(key[1])))):
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


def set_aside_runs(session, submission_ids=None):
    """[(submission id, run_s of its run with the whole limit, None until that is graded)] of the runs set aside
    (Job.set_aside_at), of some submissions or of all."""
    query = (select(Job.submission_id, Result.run_s).outerjoin(Result, Result.job_id == Job.id)
             .where(Job.set_aside_at.is_not(None)))
    if submission_ids is not None:
        query = query.where(Job.submission_id.in_(list(submission_ids)))
    return session.execute(query).all()


def set_aside_counts(session, limit_s=LIMIT_S):
    """{"runs": runs set aside so far, "graded": of those graded since, "not_endless": of those, the runs with the
    whole limit (limit_s: the grader's, as the workers run by default) that ended before it (slow code, not an
    infinite loop: set aside for nothing, its learner waited behind the others)}: `status` shows it, so that a
    class sees when its set-aside times (classroom/line/reference_times.py) are too short for its learners' code."""
    runs = set_aside_runs(session)
    graded = [run_s for _, run_s in runs if run_s is not None]
    return {"runs": len(runs), "graded": len(graded),
            "not_endless": sum(not ran_to(run_s, limit_s) for run_s in graded)}


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
