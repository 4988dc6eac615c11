"""How long a queued submission waits: a forecast from the claim order, the grading times measured so far and
the live workers.

The forecast replays the queue's own rules (classroom/line/queue.py) on expected durations: each live worker
takes the next job in claim order as soon as it is free, submissions before regrades, except that a queued
regrade goes first once REGRADE_AGE_S has passed without one (the aging rule). The order of the queued jobs holds
while jobs finish (a job's turn in the round robin is fixed when it is queued: classroom/data/turns.py), so the order
replayed is the order the workers claim. A worker is free:
- busy: once its job's expected time left has run out, plus the measured overhead (`Measured.overhead_s`: from a
  worker's verdict to its next claim), and again after each job it takes;
- idle: at its next claim, measured (`Measured.idle_s`: an idle worker's claim delay).

What a job costs is measured (classroom/line/grading_times.py: `Timing`, per exercise and kind of work: its typical
time at the machine's pace, its normal time, its hang share and hang time). From those:
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
  hangs), until it probably hangs (`hangs_after`: past its normal time and HANG_FLOOR_S; on an idle machine a
  worker's first job, 1.4 s claim to verdict, was past 4 x the 0.2 s of the others, and every forecast behind it
  waited for a hang: 18 times too long): then it runs to its hang time;
- a regrade runs code already graded: its submission's newest verdict says whether it hangs (`rerun`: a hang share
  of 1 if that one ran to the limit, else 0), where its exercise's hang share would count every regrade of an
  exercise with hostile submissions as a part of a likely hang;
- a submission's first run is stopped at its exercise's set-aside time (at least SET_ASIDE_FLOOR_S), which the
  worker measures on the reference (classroom/line/reference_times.py), and the submission set aside
  (classroom/line/queue.py `set_aside`), to run with the whole limit after the submissions not set aside (SET_ASIDE):
  so its hang holds the worker for that time, which the forecast, with no reference run of its own, takes to be
  its exercise's normal time (`set_aside_s`, `first_run`: a forecast only, the workers never read it), and
  once set aside it costs its hang time (it ran past its normal time once: `rerun` as a hang).
A measurement missing falls back to the exercise's other kind of work, else to the mean over the exercises
measured, else to DEFAULT_JOB_S with no hang.
The forecast a page shows is computed again from each live snapshot (classroom/line/live.py), so it follows the
queue as it moves: once a hang has run past its normal time, every forecast behind it includes it.
What it cannot foresee: which queued job will hang (in a burst of 50 with two infinite loops, a forecast made
before they start is off by about the 10 s a hang costs everyone behind it on two workers where the hang comes
earlier than placed, and by 16 s in one bench run where both ran at once), and a change of the
machine's speed after it was made (the pace follows one within grading_times.PACE_JOBS jobs; a forecast shown at
submission still carries the speed of the jobs before it).

The measurements are read together (grading_times.measured), from the last READ_JOBS graded jobs.
No live worker: no forecast (the page says no grader is running).
"""

import heapq
import math
import statistics
from typing import NamedTuple

from course.common.i18n import t

from .grading_times import DEFAULT, DEFAULT_JOB_S, LIMIT_S, Timing, mean_with_hangs, other_kind
from ..data.models import REGRADE, SET_ASIDE, SUBMIT  # noqa: F401 (SET_ASIDE: eta.SET_ASIDE)

HANG_FLOOR_S = 2.0  # a job in flight probably hangs past its normal time and no sooner than this (`hangs_after`): a
# worker's first job (its sandbox's start, the exercise loaded: left out of the typical times) took 1.4 s claim to
# verdict where the others took 0.2 s on an idle machine
SET_ASIDE_FLOOR_S = 0.5  # a submission's first run is set aside past its set-aside time, and no sooner than this
# (classroom/line/reference_times.py `set_aside_s`; the forecast's `set_aside_s`). The time limit counts the run alone
# (its fork in the warm sandbox server to its exit), not the server's start, so a cold start needs no more; the
# floor is for the machine's scheduling on a loaded machine.
# Each hang's first run holds its worker this long, and where it falls in a burst cannot be foreseen: at 5 s, two
# infinite loops set aside at once held both workers for most of a 50-job burst (bench p95 6.2-9.4 s, against
# 5.2-6.1 s at 2 s); at 2 s, in bursts of jobs of 0.1 s, the waits behind them came out 1-2 s longer than forecast


class Pending(NamedTuple):
    """A job that will be claimed: its key, batch (SUBMIT, SET_ASIDE or REGRADE), seconds (what it costs the jobs behind
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
    for key in ((exercise_id, kind), (exercise_id, other_kind(kind))):
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
    """The forecast's estimate of the seconds a submission's first run may take before it is set aside (its worker
    stops it at ten times its reference's run: classroom/line/reference_times.py): its normal time, at least
    SET_ASIDE_FLOOR_S; None when that is not below LIMIT_S (nothing measured yet: the whole limit)."""
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
