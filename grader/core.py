"""Grade exercises: reference in-process, learner in the sandbox, verdicts in grader/judge.py.

For each exercise the checks are built (seeded inputs and reference weights),
the reference results are computed from `solutions/` in this process while the
learner's file runs in the sandbox (grader/sandbox.py), then every check is
judged (grader/judge.py), each exercise in a bounded fork of its own
(grader/bounded.py), and the results are collected in a Report
(grader/report.py).
"""

import hashlib
import importlib
import secrets
import threading
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from course.common.exercise_index import EXERCISES
from course.common.exercise_index import get as get_exercise

from . import checks as checks_registry
from . import bounded, notebook_submit, variants
from .checks.demo import strict_variant
from .diagnosis import mutants as diagnosis_mutants, variant_default
from .harness import seed_call
from .judge import PROCEDURES, judge_exercise
from .messages import bounded as bounded_text
from .mistakes import MistakeVariants
from .report import CheckResult, ExerciseResult, Report
from .sandbox import MODES, SandboxLimits, run_jobs
from .text import render, tr, warm_catalog


def reference_modules(name):
    """modules(name) for the references in solutions/."""
    return importlib.import_module(f"solutions.{name}")


def read_sources(target, ex_ids, lang="en"):
    """{ex_id: (source, display name[, label])} from a directory laid out like exercises/,
    a directory of notebooks or one .ipynb (see grader/notebook_submit.py)."""
    if notebook_submit.is_notebook_target(target):
        return notebook_submit.read_notebook_sources(target, ex_ids, lang=lang)
    sources = {}
    for ex_id in ex_ids:
        path = Path(target) / get_exercise(ex_id).filename
        try:
            sources[ex_id] = (path.read_text(encoding="utf-8"), str(path))
        except FileNotFoundError:
            sources[ex_id] = (None, str(path))
        except UnicodeDecodeError as err:
            sources[ex_id] = (None, tr("file.not_utf8", lang, path=path, reason=err.reason, start=err.start))
    return sources


@dataclass
class Submission:
    """One exercise's code to grade: its source (None if unreadable) and where it came from."""

    ex_id: str
    source: str | None
    name: str  # where the code came from, for messages: a path, "upload.py", ...
    label: str | None = None  # how to name its lines in messages (default: the file name),
    # The learner's own sources of the exercises this one builds on, {ex_id: source}, each one that
    # passed (hosted mode); None: the references, or in strict mode this run's own submissions.
    dependencies: dict | None = None
    variant: int = 0  # the learner's exercise variant (grader/variants.py): 0 is the published exercise


def grade(target, ex_ids=None, limits=None, on_progress=None, sources=None, on_ran=None,
          sandbox=None, references_for_dependencies=None, lang="en", variant=0):
    """Grade the exercises `ex_ids` (default all) of a target directory -> Report.

    `sources` ({ex_id: (source text or None, display name)}) overrides reading
    the files from `target` (notebooks, uploads). `on_progress(done, total,
    ex_id, status)` is called as each exercise is judged, `on_ran(ex_id)` as
    each exercise's sandboxed run ends. `variant` is the exercise variant every exercise is graded on
    (grader/variants.py; 0, the published exercises, in self-study). `sandbox` and
    `references_for_dependencies`: see grade_submissions. Without references,
    the exercises the requested ones build on are graded too (not reported),
    and the learner's own passing files are used. Messages are written in `lang`.
    """
    ex_ids = list(ex_ids or [ex.id for ex in EXERCISES])
    mode, use_references = _modes(limits, sandbox, references_for_dependencies)
    extra = [] if use_references else sorted(
        {dep for ex_id in ex_ids for dep in get_exercise(ex_id).needs} - set(ex_ids))
    sources = dict(sources) if sources is not None else read_sources(target, ex_ids, lang)
    if extra:
        sources.update({ex_id: value for ex_id, value in read_sources(target, extra, lang).items() if ex_id not in sources})
    submissions = [Submission(ex_id, *sources[ex_id], variant=variant) for ex_id in extra + ex_ids]
    exercises = grade_submissions(submissions, limits, on_progress, on_ran, mode, use_references, lang)
    return Report(str(Path(target).resolve()) if target else "", exercises[len(extra):], lang)


def grade_submissions(submissions, limits=None, on_progress=None, on_ran=None, sandbox=None,
                      references_for_dependencies=None, lang="en"):
    """Grade a list of Submissions in one sandbox run -> [ExerciseResult] (see grader/__init__.py)."""
    mode, use_references = _modes(limits, sandbox, references_for_dependencies)
    limits = replace(limits or SandboxLimits(), mode=mode)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors: one thread is faster and leaves a core to the sandbox
    try:
        return _grade_submissions(submissions, limits, on_progress, on_ran, use_references, lang)
    finally:
        torch.set_num_threads(threads)


def _modes(limits, sandbox, references_for_dependencies):
    """(sandbox mode, whether references stand in for dependencies), checked."""
    mode = sandbox or (limits.mode if limits else "process")
    if mode not in MODES:
        raise ValueError(f"unknown sandbox mode {mode!r}; use one of {', '.join(MODES)}")
    use_references = mode != "strict" if references_for_dependencies is None else references_for_dependencies
    if mode == "strict" and use_references:
        raise ValueError("strict mode never puts a reference solution in the learner's reach: "
                         "pass the learner's own dependencies (Submission.dependencies) instead")
    return mode, use_references


def _dependencies(submissions, use_references):
    """Per submission: ({ex_id: source} to stage or None for references, [dep ids that must pass in this run],
    [missing dep ids])."""
    first = {}
    for i, s in enumerate(submissions):
        first.setdefault(s.ex_id, i)
    plans = []
    for s in submissions:
        needs = get_exercise(s.ex_id).needs
        if use_references or not needs:
            plans.append((None if use_references else {}, [], []))
        elif s.dependencies is not None:
            missing = [d for d in needs if not s.dependencies.get(d)]
            plans.append(({d: variants.pin_published(d, s.dependencies.get(d)) for d in needs}, [], missing))
        else:
            missing = [d for d in needs if d not in first or submissions[first[d]].source is None]
            staged = {d: variants.pin_published(d, submissions[first[d]].source) for d in needs if d not in missing}
            plans.append((staged, [first[d] for d in needs if d not in missing], missing))
    return plans


def _grade_submissions(submissions, limits, on_progress, on_ran, use_references, lang="en"):
    nonce = secrets.token_bytes(16)  # cases whose expected values the feedback shows differ in every run
    plans = _dependencies(submissions, use_references)
    runs = {i for i, s in enumerate(submissions) if s.source is not None and not plans[i][2]}
    # checks and reference results only for what runs: an unreadable or blocked one is answered without them;
    # one exercise's checks per variant graded (a variant that fails to generate is an error, not a pass)
    built, broken = {}, {}
    for key in {_key(submissions[i]) for i in runs}:
        try:
            built[key] = _build_checks(key, submissions, nonce)
        except Exception as err:
            broken[key] = err
    runs = {i for i in runs if _key(submissions[i]) in built}
    if limits.mode == "strict":  # no reference text in a strict job: the demo stage uses the learner's own modules
        built = {key: [strict_variant(c) for c in checks] for key, checks in built.items()}
    jobs = {
        f"job{i}": (s.ex_id, s.source, s.name, get_exercise(s.ex_id).module,
                    job_calls(built[_key(s)]),
                    plans[i][0])
        for i, s in enumerate(submissions) if i in runs
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
    translated = {}  # this run's reference translations, one per model and probe set (ex05-ex07 share one)
    references = {key: [run_reference_check(i, c, translated) for i, c in enumerate(checks)]
                  for key, checks in built.items()}
    sandbox.join()
    if "error" in outcome:
        raise outcome["error"]
    warm_catalog(lang)  # parsed here once, not again in each judging fork
    with MistakeVariants() as mistaken:  # this run's known-mistake variants, removed when it ends
        exercises = [_variant_error(s, broken[_key(s)], lang) if _key(s) in broken else
                     _judge(s, plans[i], outcome["results"].get(f"job{i}"), built, references, limits, mistaken, lang)
                     for i, s in enumerate(submissions)]
    for i, s in enumerate(submissions):  # the variant each was graded on, in its report entry
        exercises[i].variant = variants.report_entry(s.ex_id, s.variant)
        exercises[i].class_variant_warning = variant_default.class_variant_warning(s.ex_id, s.variant, s.source, lang)
    for i, s in enumerate(submissions):  # without references, an exercise counts only if all it builds on passed
        failed_deps = [submissions[d].ex_id for d in plans[i][1] if not exercises[d].passed]
        if failed_deps and exercises[i].status not in ("error", "blocked"):
            exercises[i] = ExerciseResult.blocked(s.ex_id, failed_deps, False, lang)
            exercises[i].variant = variants.report_entry(s.ex_id, s.variant)
        if on_progress:
            on_progress(i + 1, len(submissions), s.ex_id, exercises[i].status)
    return exercises


def job_calls(checks):
    """What a learner's job is given for these checks (its input.pt "calls"): each check's procedure and its spec as
    the learner's code is run with it (variants.learner_spec: without the variant's explicit parameters). All of it
    is readable by the learner's code."""
    return [{"procedure": c.procedure, "spec": variants.learner_spec(c.spec)} for c in checks]


def _key(submission):
    """What a submission's checks depend on: (exercise, variant number)."""
    return submission.ex_id, submission.variant


def _build_checks(key, submissions, nonce):
    """An exercise variant's checks (grader/variants.py: the reference gets the variant's parameters); those
    that draw their cases per run (CASES_DRAWN) get a seed from the exercise's submitted source and this
    run's nonce. Raises for a variant that does not generate."""
    ex_id, number = key
    chosen = variants.variant(ex_id, number)
    module = checks_registry.for_exercise(ex_id)
    if not getattr(module, "CASES_DRAWN", False):
        return variants.build_checks(module, chosen)
    source = next((s.source or "" for s in submissions if _key(s) == key), "")
    digest = hashlib.sha256(nonce + ex_id.encode() + source.encode("utf-8", "replace")).digest()
    return variants.build_checks(module, chosen, seed=int.from_bytes(digest[:8], "big"))


def _variant_error(s, err, lang):
    """The error verdict of a submission whose variant did not generate (never a pass)."""
    return _error_result(s.ex_id, tr("variant.failed", lang, variant=s.variant, error=bounded_text(str(err), 300, lang)),
                         "variant", lang)


JUDGE_MEMORY_MB = 1024  # address space the judging of one exercise may add to the grader's
JUDGE_GRACE_S = 10  # judging one exercise may take the exercise's timeout plus this


def _judge(s, plan, job, built, references, limits, mistaken, lang):
    """Submission s's ExerciseResult from its sandboxed job (its dependencies' verdicts not yet considered)."""
    if s.source is None:
        return _missing_file(s.ex_id, s.name, lang)
    if plan[2]:
        return ExerciseResult.blocked(s.ex_id, plan[2], s.dependencies is not None, lang)
    if "lost" in job.status or "sandbox_error" in job.status:
        return _lost(s.ex_id, job.status, lang)
    return _judge_bounded(s, built[_key(s)], references[_key(s)], job, limits, mistaken, lang)


def _judge_bounded(s, checks, references, job, limits, mistaken, lang):
    """judge_exercise in a fork of its own, under the exercise's timeout and JUDGE_MEMORY_MB: whatever
    the results do to it, this exercise gets a verdict or an error, and the grader goes on."""

    def judge():
        _relabel(job, get_exercise(s.ex_id).filename, s.label or Path(s.name).name)
        judged = judge_exercise(s.ex_id, checks, references, job, s.name, limits, s.source, lang, mistaken, s.label)
        return dict(judged.result.to_dict(), needs_mutants=judged.mutants_missing)

    how, data = bounded.run(judge, limits.timeout_s + JUDGE_GRACE_S, JUDGE_MEMORY_MB)
    if how == "ok" and data.pop("needs_mutants"):
        # this exercise's mutants are not built for this grader version yet: build them once, outside the
        # judging deadline, then judge again with them
        diagnosis_mutants.ensure([s.ex_id])
        if diagnosis_mutants.cache_path(s.ex_id).exists():
            how, data = bounded.run(judge, limits.timeout_s + JUDGE_GRACE_S, JUDGE_MEMORY_MB)
            if how == "ok":
                data.pop("needs_mutants")
    if how != "ok":
        key = {"timeout": "judge.timeout", "memory": "judge.memory"}.get(how, "judge.failed")
        message = tr(key, lang, seconds=f"{limits.timeout_s + JUDGE_GRACE_S:g}", memory_mb=JUDGE_MEMORY_MB,
                     error=bounded_text(str(data), 300, lang))
        return _error_result(s.ex_id, message, "judge", lang)
    result = ExerciseResult(**{**data, "checks": [CheckResult(**c) for c in data["checks"]]})
    try:
        result.duration_s = round(float(job.status.get("elapsed_s", 0.0)), 3)  # the sandboxed run
    except (TypeError, ValueError):
        result.duration_s = 0.0
    return result


def run_reference_check(index, check, translated=None):
    """The reference's results for check number `index` (torch seeded as the child seeds that call). A demo
    stage's translations depend only on the model and its probes (all modules are references here), so
    `translated` keeps them for the run's other exercises of the same model."""
    spec = check.spec
    if check.procedure == "demo_translations" and not spec.get("skip"):
        translated = {} if translated is None else translated
        key = (spec["model_name"], spec.get("checkpoint"), tuple(map(tuple, spec["probe_ids"])), spec["max_len"])
        if key not in translated:
            translated[key] = PROCEDURES[check.procedure](reference_modules, spec)  # seeds itself
        return translated[key]
    seed_call(index)
    return PROCEDURES[check.procedure](reference_modules, spec)


def _missing_file(ex_id, name, lang="en"):
    """Result for an exercise whose file could not be read."""
    exercise = get_exercise(ex_id)
    if name.endswith(".py"):  # a missing or unreadable exercise file
        message = tr("file.cannot_read", lang, name=name, filename=exercise.filename)
    else:  # a notebook or upload; the name says what is wrong with it
        message = tr("file.cannot_grade", lang, name=name)
    return _error_result(ex_id, message, "file", lang)


def _error_result(ex_id, message, check="sandbox", lang="en"):
    """ExerciseResult.error with the message bounded (it may name what the learner chose: a file, an upload)."""
    return ExerciseResult.error(ex_id, bounded_text(message, 2000, lang), check, lang)


SERVER_LOST = "sandbox_server"  # the check of an exercise lost because the warm sandbox server itself died


def _lost(ex_id, status, lang="en"):
    """Result for an exercise the sandbox never finished (server lost, sandbox not built); its one check is
    SERVER_LOST when the warm server itself died under it (lost_to_server)."""
    if "lost" in status:
        check = SERVER_LOST if status.get("server_lost") is True else "sandbox"
        return ExerciseResult.error(ex_id, render(status["lost"], lang), check, lang=lang)
    return ExerciseResult.error(ex_id, tr("blocked.no_sandbox", lang, error=status["sandbox_error"]), lang=lang)


def lost_to_server(result):
    """Was this ExerciseResult lost because the warm sandbox server itself died under its run (the grading
    infrastructure failed, not the learner's code: grader/warm_server.py WarmServer.run), so that grading it again
    may give its real verdict? Read from its check's stable id, which only the grader sets."""
    return result.status == "error" and any(check.id == f"{result.id}.{SERVER_LOST}" for check in result.checks)


def _relabel(job, staged_name, label):
    """Name the learner's own lines by their real source, not the staged file."""
    errors = [job.import_error] + [r["error"] for r in job.records if r and "error" in r]
    for error in errors:
        if error and error.get("where") and error["where"].get("file") == staged_name:
            error["where"]["file"] = label
