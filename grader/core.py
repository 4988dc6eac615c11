"""Grade exercises: reference in-process, learner in the sandbox, verdicts in grader/judge.py.

For each exercise the checks are built (seeded inputs and reference weights),
the reference results are computed from `solutions/` in this process while the
learner's file runs in the sandbox (grader/sandbox.py), then every check is
judged (grader/judge.py) and the results are collected in a Report
(grader/report.py).
"""

import importlib
import threading
from dataclasses import dataclass
from pathlib import Path

import torch

from course.common.exercise_index import EXERCISES
from course.common.exercise_index import get as get_exercise
from course.common.i18n import t

from . import checks as checks_registry
from . import notebook_submit
from .judge import PROCEDURES, clear_mutant_cache, judge_exercise
from .report import CheckResult, ExerciseResult, Report
from .sandbox import SandboxLimits, run_jobs


def reference_modules(name):
    """modules(name) for the references in solutions/."""
    return importlib.import_module(f"solutions.{name}")

def read_sources(target, ex_ids):
    """{ex_id: (source, display name[, label])} from a directory laid out like exercises/,
    a directory of notebooks or one .ipynb (see grader/notebook_submit.py)."""
    if notebook_submit.is_notebook_target(target):
        return notebook_submit.read_notebook_sources(target, ex_ids)
    sources = {}
    for ex_id in ex_ids:
        path = Path(target) / get_exercise(ex_id).filename
        try:
            sources[ex_id] = (path.read_text(encoding="utf-8"), str(path))
        except FileNotFoundError:
            sources[ex_id] = (None, str(path))
        except UnicodeDecodeError as err:
            sources[ex_id] = (None, f"{path} (not UTF-8 text: {err.reason} at byte {err.start})")
    return sources

@dataclass
class Submission:
    """One exercise's code to grade: its source (None if unreadable) and where it came from."""

    ex_id: str
    source: str | None
    name: str  # where the code came from, for messages: a path, "upload.py", ...
    label: str | None = None  # how to name its lines in messages (default: the file name),

def grade(target, ex_ids=None, limits=None, on_progress=None, sources=None, on_ran=None):
    """Grade the exercises `ex_ids` (default all) of a target directory -> Report.

    `sources` ({ex_id: (source text or None, display name)}) overrides reading
    the files from `target` (notebooks, uploads). `on_progress(done, total,
    ex_id, status)` is called as each exercise is judged, `on_ran(ex_id)` as
    each exercise's sandboxed run ends.
    """
    ex_ids = list(ex_ids or [ex.id for ex in EXERCISES])
    sources = sources if sources is not None else read_sources(target, ex_ids)
    submissions = [Submission(ex_id, *sources[ex_id]) for ex_id in ex_ids]
    exercises = grade_submissions(submissions, limits, on_progress, on_ran)
    return Report(str(Path(target).resolve()) if target else "", exercises)

def grade_submissions(submissions, limits=None, on_progress=None, on_ran=None):
    """Grade a list of Submissions in one sandbox run -> [ExerciseResult]."""
    limits = limits or SandboxLimits()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors: one thread is faster and leaves a core to the sandbox
    try:
        return _grade_submissions(submissions, limits, on_progress, on_ran)
    finally:
        torch.set_num_threads(threads)

def _grade_submissions(submissions, limits, on_progress, on_ran):
    built = {ex_id: checks_registry.for_exercise(ex_id).build() for ex_id in {s.ex_id for s in submissions}}
    jobs = {
        f"job{i}": (s.ex_id, s.source, s.name, get_exercise(s.ex_id).module,
                    [{"procedure": c.procedure, "spec": c.spec} for c in built[s.ex_id]])
        for i, s in enumerate(submissions) if s.source is not None
    }
    outcome = {}

    def ran(job_name):
        if on_ran:
            on_ran(jobs[job_name][0])

    def run_sandbox():
        try:
            outcome["results"] = run_jobs(jobs, limits, ran) if jobs else {}
        except BaseException as err:  # reported below, in the main thread
            outcome["error"] = err

    sandbox = threading.Thread(target=run_sandbox, daemon=True)
    sandbox.start()
    references = {ex_id: [_run_reference(c) for c in checks] for ex_id, checks in built.items()}
    sandbox.join()
    if "error" in outcome:
        raise outcome["error"]
    clear_mutant_cache()  # keyed on check objects, which are rebuilt for every run
    exercises = []
    for i, s in enumerate(submissions):
        if s.source is None:
            result = _missing_file(s.ex_id, s.name)
        else:
            job = outcome["results"][f"job{i}"]
            _relabel(job, get_exercise(s.ex_id).filename, s.label or Path(s.name).name)
            result = judge_exercise(s.ex_id, built[s.ex_id], references[s.ex_id], job, s.name, limits)
            result.duration_s = round(job.status.get("elapsed_s", 0.0), 3)  # the sandboxed run
        exercises.append(result)
        if on_progress:
            on_progress(i + 1, len(submissions), s.ex_id, result.status)
    clear_mutant_cache()
    return exercises

def _run_reference(check):
    """The reference's results for a check (torch RNG seeded like the child's)."""
    torch.manual_seed(1234)
    return PROCEDURES[check.procedure](reference_modules, check.spec)

def _missing_file(ex_id, name):
    """Result for an exercise whose file could not be read."""
    exercise = get_exercise(ex_id)
    if name.endswith(".py"):  # a missing or unreadable exercise file
        message = f"cannot read {name}: copy exercises/{exercise.filename} there, or pass --target"
    else:  # a notebook or upload; the name says what is wrong with it
        message = f"cannot grade {name}"
    return ExerciseResult(
        ex_id, t(f"exercises.{ex_id}.title", "en"), exercise.filename, "error", False, 0.0, 0.0,
        message, [CheckResult("file", False, message, kind="error")],
    )

def _relabel(job, staged_name, label):
    """Name the learner's own lines by their real source, not the staged file."""
    errors = [job.import_error] + [r["error"] for r in job.records if r and "error" in r]
    for error in errors:
        if error and error.get("where") and error["where"].get("file") == staged_name:
            error["where"]["file"] = label
