"""How long an exercise's reference solution runs on this worker: what the set-aside time is measured on
(classroom/line/worker.py `set_aside_after`).

A submission's first run is stopped and set aside (classroom/line/queue.py `set_aside`) once it runs past its exercise's
set-aside time (`set_aside_s`): REFERENCE_FACTOR times the reference's own run, at least eta.SET_ASIDE_FLOOR_S.
The reference is the project's (solutions/), graded by the worker that needs the time, in its own sandbox mode and
warm server with a job's limits (classroom/line/grading.py `job_limits`): the same run, on the same machine, that the
time stops. Learners' jobs never enter it: the time was once learnt from their claim-to-verdict times (the longest,
at least 4 x the median), and five correct submissions that slept 15 s raised it from 1.6 s to 15.3 s, past the
20 s limit once measured again (off), so that the next infinite loop held its worker for the whole limit.

The time is kept with the store (Store.kept) per exercise and sandbox mode, and measured again after MAX_AGE_S, so
that it follows the machine's load (a worker's grader version is the one it started with). The references ran
0.05-0.3 s in the strict sandbox on an idle machine (ex04 the longest): REFERENCE_FACTOR 10 leaves a learner's
correct file ten times the reference's time before its first run is set aside (it is graded later with the whole
limit, not failed), and holds a worker on an infinite loop for 0.5-3 s.
"""

import time
from pathlib import Path

from grader.core import Submission, grade_submissions

from ..data import exercise_table
from . import grading
from .eta import SET_ASIDE_FLOOR_S

REFERENCE_FACTOR = 10.0  # a first run is set aside past this many times its exercise's reference run
MAX_AGE_S = 120.0  # a reference time is measured again once older than this (one reference run, 0.05-0.3 s)
KEPT = "reference_times"  # this module's entry in Store.kept: {(exercise id, mode): (time.monotonic(), seconds)}
SOLUTIONS = Path(__file__).resolve().parents[2] / "solutions"


def reference_source(ex_id):
    """The text of an exercise's reference solution."""
    return (SOLUTIONS / exercise_table.get(ex_id).filename).read_text(encoding="utf-8")


def run_reference(ex_id, mode):
    """Seconds the reference of ex_id runs in this process's sandbox of `mode` (Result.run_s: the sandboxed run the
    time limit counts), with its dependencies' references; None when it does not pass (the grader cannot grade)."""
    dependencies = {dep: reference_source(dep) for dep in exercise_table.needs(ex_id)}
    submission = Submission(ex_id, reference_source(ex_id), exercise_table.get(ex_id).filename, None,
                            dependencies=dependencies)
    [result] = grade_submissions([submission], grading.job_limits(), sandbox=mode, references_for_dependencies=False)
    return result.duration_s if result.status == "passed" else None


def reference_s(store, ex_id, mode, log=None, clock=time.monotonic, run=None):
    """Seconds ex_id's reference runs on this worker in `mode` (run_reference), measured at its first need and again
    once older than MAX_AGE_S, kept with the store; None when it could not be measured (logged). run: what measures
    it (by default run_reference)."""
    entry = store.kept(KEPT)
    with entry.lock:
        found = entry.value = entry.value or {}
        measured_at, seconds = found.get((ex_id, mode), (None, None))
        if measured_at is None or clock() - measured_at > MAX_AGE_S:
            try:
                seconds = (run or run_reference)(ex_id, mode)
            except Exception as err:  # the sandbox failed: no set-aside time until it is measured again
                seconds = None
                if log:
                    log(f"could not time the reference of {ex_id} ({type(err).__name__}: {err}); its first runs get "
                        "the whole limit")
            found[(ex_id, mode)] = (clock(), seconds)
            if log and seconds is not None:
                log(f"reference of {ex_id} ran {seconds:.3f} s: first runs set aside past {set_aside_s(seconds):.2f} s")
        return seconds


def set_aside_s(reference_s, limit_s=None):
    """Seconds a submission's first run may take before it is set aside, from its exercise's reference run
    (reference_s): REFERENCE_FACTOR times that, at least SET_ASIDE_FLOOR_S; None without a reference time or
    when that is not below limit_s (the run has the whole limit)."""
    if reference_s is None:
        return None
    seconds = max(REFERENCE_FACTOR * reference_s, SET_ASIDE_FLOOR_S)
    return seconds if limit_s is None or seconds < limit_s else None
