"""Grade exercises: reference in-process, learner in the sandbox, verdicts here.

For each exercise the checks are built (seeded inputs and reference weights),
the reference results are computed from `solutions/` in this process, the
learner's file runs in the sandbox (grader/sandbox.py), and every check is
judged by comparing the two result dicts. A failing check is also run on the
known mistaken variants (grader/mistakes.py): a learner whose results match
one gets that mistake's hint.
"""

import importlib
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from course.exercise_index import EXERCISES, get as get_exercise
from course.i18n import t

from . import checks as checks_registry, notebook_submit
from .compare import compare_results, compare_values
from .harness.procedures import PROCEDURES
from .mistakes import mutant_modules
from .sandbox import SandboxLimits, run_jobs

REPORT_VERSION = 1
MAX_HINTED_CHECKS = 3  # mistake detection on the first few failing checks only


@dataclass
class CheckResult:
    name: str
    passed: bool
    message: str = ""
    hint: str | None = None
    call: str = ""
    kind: str = "ok"  # ok | mismatch | not_implemented | error | missing


@dataclass
class ExerciseResult:
    id: str
    title: str
    file: str
    status: str  # passed | failed | not_written | error
    passed: bool
    score: float
    duration_s: float
    summary: str
    checks: list = field(default_factory=list)
    output: str = ""

    def to_dict(self):
        return asdict(self)


@dataclass
class Report:
    target: str
    exercises: list

    @property
    def passed(self):
        return all(ex.passed for ex in self.exercises)

    def to_dict(self):
        return {
            "version": REPORT_VERSION,
            "target": self.target,
            "passed": self.passed,
            "exercises": [ex.to_dict() for ex in self.exercises],
        }


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
    # e.g. "ex03.ipynb, cell 4" for a notebook cell


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
    _MUTANT_CACHE.clear()  # keyed on check objects, which are rebuilt for every run
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
    _MUTANT_CACHE.clear()
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


def judge_exercise(ex_id, checks, references, job, learner_name, limits):
    """Turn one exercise's sandbox data into verdicts."""
    exercise = get_exercise(ex_id)
    results = []
    for check, reference, record in zip(checks, references, job.records):
        if job.import_error is not None:
            result = CheckResult(check.name, False, _import_message(job.import_error, learner_name),
                                 call=check.call, kind=_error_kind(job.import_error))
        else:
            result = judge_check(check, reference, record, job, limits)
        results.append(result)
    add_hints(ex_id, checks, references, job.records, results)
    passed = all(r.passed for r in results)
    failing = [r for r in results if not r.passed]
    if passed:
        status = "passed"
    elif all(r.kind == "not_implemented" for r in failing):
        status = "not_written"
    elif job.import_error is not None:
        status = "error"
    else:
        status = "failed"
    summary = _summary(status, results, failing)
    return ExerciseResult(
        ex_id, t(f"exercises.{ex_id}.title", "en"), exercise.filename, status, passed,
        round(sum(r.passed for r in results) / max(len(results), 1), 4), 0.0, summary, results,
        job.output[:2000],
    )


def _summary(status, results, failing):
    """One line for the table: how many passed, and the first problem."""
    count = f"{len(results) - len(failing)}/{len(results)} checks passed"
    if status == "passed":
        return count
    if status == "not_written":
        return "not written yet: " + failing[0].message.removeprefix("not written yet: ")
    return f"{count}; first problem: {failing[0].message}"


def judge_check(check, reference, record, job, limits):
    """The verdict on one check from the learner's record and the reference."""
    if record is None:
        return CheckResult(check.name, False, _missing_message(job, limits), call=check.call, kind="missing")
    if "error" in record:
        error = record["error"]
        return CheckResult(check.name, False, _error_message(error, limits.memory_mb), call=check.call,
                           kind=_error_kind(error))
    got = record["ok"]
    for prop in check.properties:
        message = prop(got, check.spec)
        if message:
            return CheckResult(check.name, False, message, call=check.call, kind="mismatch")
    if check.judge is not None:  # a check that words its own verdict (the demo stage)
        passed, message = check.judge(reference, got, check.spec)
        return CheckResult(check.name, passed, message, call=check.call, kind="ok" if passed else "mismatch")
    message = compare_results(reference, got, check.keys)
    if message:
        return CheckResult(check.name, False, message, call=check.call, kind="mismatch")
    return CheckResult(check.name, True, call=check.call)


def _observable_keys(reference):
    """The result keys a mistake is recognised by (values, not gradients)."""
    return [k for k in reference if not k.startswith(("grad.", "input_after.", "raised_"))]


def _agrees(mutant, got, keys):
    """Does the learner's result equal the mistaken variant's on these keys?"""
    return all(k in mutant and k in got and compare_values(k, mutant[k], got[k]) is None for k in keys)


_MUTANT_CACHE = {}  # (ex_id, mistake id, id(check)) -> results, for one grading run


def _mutant_results(ex_id, mistake, check):
    """The mistaken variant's results on a check, or None if it raises."""
    key = (ex_id, mistake.id, id(check))
    if key not in _MUTANT_CACHE:
        try:
            torch.manual_seed(1234)
            _MUTANT_CACHE[key] = PROCEDURES[check.procedure](mutant_modules(ex_id, mistake), check.spec)
        except Exception:
            _MUTANT_CACHE[key] = None
    return _MUTANT_CACHE[key]


def add_hints(ex_id, checks, references, records, results):
    """Attach the hint of the known mistake that best explains the learner's results.

    A mistake is a candidate when the learner's results equal the mistaken
    variant's on the first failing checks; among candidates, the one that also
    agrees with the learner on the most other checks wins.
    """
    failing = [i for i, r in enumerate(results) if r.kind == "mismatch"][:MAX_HINTED_CHECKS]
    if not failing:
        return
    best, best_score = None, -1
    for mistake in checks_registry.for_exercise(ex_id).MISTAKES:
        matched = []
        for i in failing:
            keys = _observable_keys(references[i])
            mutant = _mutant_results(ex_id, mistake, checks[i])
            if mutant is not None and compare_results(references[i], mutant, keys) is not None \
                    and _agrees(mutant, records[i]["ok"], keys):
                matched.append(i)
        if failing[0] not in matched:
            continue
        score = len(matched) * 100
        for i, record in enumerate(records):
            if i not in failing and record and "ok" in record:
                mutant = _mutant_results(ex_id, mistake, checks[i])
                keys = _observable_keys(references[i])
                score += mutant is not None and _agrees(mutant, record["ok"], keys)
        if score > best_score:
            best, best_score = (mistake, matched), score
    if best:
        mistake, matched = best
        for i in matched:
            results[i].hint = mistake.hint


def _relabel(job, staged_name, label):
    """Name the learner's own lines by their real source, not the staged file."""
    errors = [job.import_error] + [r["error"] for r in job.records if r and "error" in r]
    for error in errors:
        if error and error.get("where") and error["where"].get("file") == staged_name:
            error["where"]["file"] = label


def _error_kind(error):
    return "not_implemented" if error["kind"] == "not_implemented" else "error"


def _where(error):
    """' (ex03_scoring.py, line 42, in forward: `code`)' or ''."""
    where = error.get("where")
    if not where:
        return ""
    text = f"{where['file']}, line {where['line']}"
    if where.get("function"):
        text += f", in {where['function']}"
    if where.get("code"):
        text += f": `{where['code']}`"
    return f" ({text})"


def _error_message(error, memory_mb=SandboxLimits.memory_mb):
    """A learner-facing sentence for an exception raised by their code."""
    kind = error["kind"]
    if kind == "not_implemented":
        what = error["message"] or (error.get("where") or {}).get("function") or "this function"
        return f"not written yet: {what} still raises NotImplementedError"
    if kind == "exit":
        return f"your code called sys.exit({error['message']}){_where(error)}: return a value instead of exiting"
    if kind == "memory":
        return f"ran out of memory{_where(error)}: the sandbox allows {memory_mb} MB"
    return f"raised {error['type']}: {error['message']}{_where(error)}"


def _import_message(error, learner_name):
    """Why the learner's module could not be imported."""
    if error["type"] in ("SyntaxError", "IndentationError", "TabError"):
        return f"{learner_name} has a syntax error: {error['message']}{_where(error)}"
    return f"importing {learner_name} failed: {_error_message(error)}"


def _missing_message(job, limits):
    """Why no result came back for a check."""
    status = job.status
    if status.get("timed_out"):
        return (f"timed out after {limits.timeout_s:g} s while running this check "
                "(an infinite loop, or far too much work?)")
    signal_name = status.get("signal")
    if signal_name == "SIGXFSZ":
        return (f"printed more than {limits.output_kb} KB of output (a print inside a loop?); "
                "the output is capped and the process was stopped")
    if signal_name == "SIGXCPU":
        return f"used more than {limits.timeout_s:g} s of CPU time and was stopped"
    if signal_name == "SIGSEGV":
        return "the process crashed with a segmentation fault (SIGSEGV) while running this check"
    if signal_name == "SIGKILL":
        return "the process was killed (SIGKILL), most likely for using too much memory"
    if signal_name:
        return f"the process was stopped by signal {signal_name} while running this check"
    if "exit_code" in status:
        return (f"the process exited (code {status['exit_code']}) before this check finished: "
                "does the code call sys.exit() or os._exit()?")
    return "no result came back from the sandbox for this check"
