"""Grade one claimed submission with the grader's Python API -> the fields of a Result.

The worker calls (see grader/__init__.py)
    grade_submissions([Submission(ex_id, source, name, label, dependencies={dep: source})],
                      limits, sandbox="strict", references_for_dependencies=False)
and `grader.strict_problem()` to choose the sandbox (process mode, logged, when
strict cannot run here). Hosted mode grades in dependency order: a job for ex05
gets the learner's newest passed ex01 and ex03 submitted before it as
`dependencies` (a regrade sees them as they stood then), never the references, in either mode; without one, the verdict is "pass ex03 first".
For graders older than that API (no `dependencies` field) `_own_dependencies`
stages the learner's sources itself; with neither, the job gets an error
verdict, never the reference code.
"""

import dataclasses
import hashlib
import inspect
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import select

from . import exercises
from .models import Result, Submission

SANDBOX_MODES = ("strict", "process")
PROJECT_ROOT = Path(__file__).resolve().parent.parent
_STAGING_LOCK = threading.Lock()


class GraderUnsupported(RuntimeError):
    """The installed grader lacks an API the class worker needs."""


def grader_api():
    """(grader.core module, supports sandbox=, supports Submission.dependencies)."""
    from grader import core

    has_sandbox = "sandbox" in inspect.signature(core.grade_submissions).parameters
    has_dependencies = "dependencies" in {f.name for f in dataclasses.fields(core.Submission)}
    return core, has_sandbox, has_dependencies


def _own_dependencies_option(core):
    """The keyword that makes the grader stage Submission.dependencies in every mode."""
    parameters = inspect.signature(core.grade_submissions).parameters
    return {"references_for_dependencies": False} if "references_for_dependencies" in parameters else {}


def choose_sandbox(requested, require_strict=False, log=print):
    """The sandbox mode this worker will use: strict when available, else process (logged)."""
    if requested not in SANDBOX_MODES:
        raise ValueError(f"--sandbox {requested!r}; use one of {', '.join(SANDBOX_MODES)}")
    if requested == "process":
        log("sandbox: process mode (learner code runs as this user: for self-study and tests, not a class)")
        return "process"
    problem = strict_problem()
    if problem is None:
        log("sandbox: strict")
        return "strict"
    if require_strict:
        raise GraderUnsupported(f"strict sandbox unavailable: {problem}")
    log(f"sandbox: STRICT MODE UNAVAILABLE ({problem}); grading in process mode, which does not hold "
        "against hostile code (see issue 17). Pass --require-strict to refuse instead.")
    return "process"


def strict_problem():
    """None when the grader can grade in strict mode here, else what is missing."""
    core, has_sandbox, _ = grader_api()
    if not has_sandbox:
        return "this grader has no sandbox= option yet"
    from grader import sandbox as grader_sandbox

    check = getattr(grader_sandbox, "strict_problem", None) or getattr(grader_sandbox, "strict_unavailable", None)
    if check is not None:
        return check() or None
    try:  # no self-test in the API: grade a reference once in strict mode
        source = (PROJECT_ROOT / "solutions" / exercises.get("ex00").filename).read_text(encoding="utf-8")
        result = core.grade_submissions([core.Submission("ex00", source, "probe.py")], sandbox="strict")[0]
        return None if result.passed else f"a reference did not pass in strict mode: {result.summary}"
    except Exception as err:  # any failure means strict mode cannot be used
        return f"{type(err).__name__}: {err}"


_VERSION = None


def grader_version():
    """grader.__version__, else a digest of grader/ and solutions/ (changes when either changes)."""
    global _VERSION
    if _VERSION is None:
        import grader

        _VERSION = getattr(grader, "__version__", None)
        if _VERSION is None:
            digest = hashlib.sha256()
            for folder in ("grader", "solutions"):
                for path in sorted((PROJECT_ROOT / folder).rglob("*.py")):
                    digest.update(str(path.relative_to(PROJECT_ROOT)).encode() + b"\0" + path.read_bytes())
            _VERSION = "src-" + digest.hexdigest()[:12]
    return _VERSION


def mistake_ids(ex_id, checks):
    """The known-mistake ids of a result: each check's `mistake` field, never its (translated) text.

    Every report the worker stores comes from this grader, which names the mistake
    by id; results stored earlier keep the ids computed when they were graded.
    """
    found = []
    for check in checks:
        if check.get("mistake") and check["mistake"] not in found:
            found.append(check["mistake"])
    return found


# ---- one claimed job --------------------------------------------------------------------------


def passed_dependencies(session, user_id, ex_id, before=None):
    """({dep id: Submission} of the learner's newest passed submission per dependency, [missing ids]).

    before (a submission id): only dependencies submitted before it, so that a
    regrade grades a submission with the dependencies as they stood then.
    """
    found, missing = {}, []
    for dep in exercises.needs(ex_id):
        query = select(Submission, Result).join(Result, Result.submission_id == Submission.id) \
            .where(Submission.user_id == user_id, Submission.exercise_id == dep)
        if before is not None:
            query = query.where(Submission.id < before)
        rows = session.execute(
            query
            .order_by(Submission.id.desc(), Result.id.desc())).all()
        newest = {}
        for submission, result in rows:  # the newest result of each submission decides
            newest.setdefault(submission.id, (submission, result))
        passed = [s for s, r in newest.values() if r.passed]
        if passed:
            found[dep] = max(passed, key=lambda s: s.id)
        else:
            missing.append(dep)
    return found, missing


def code_of(ex_id, source, kind, filename):
    """(code or None, name, label) of a submission: a .py's text or a notebook's answer cell."""
    if kind == ".py":
        return source, filename or exercises.get(ex_id).filename, None
    from grader import notebook_submit

    with tempfile.TemporaryDirectory(prefix="classroom-nb-") as tmp:
        path = Path(tmp) / (Path(filename).name if filename.endswith(".ipynb") else f"{ex_id}.ipynb")
        path.write_text(source, encoding="utf-8")
        code, *names = notebook_submit.read_notebook_sources(path, [ex_id], warn=lambda _: None)[ex_id]
    names = [n.replace(str(path), path.name) for n in names]
    return code, names[0], (names[1] if len(names) > 1 else None)


def blocked_verdict(ex_id, missing, grader_version_, lang="en"):
    """The verdict, in `lang`, for a job whose dependencies the learner has not passed yet."""
    from grader.text import tr

    message = tr("blocked.message", lang, names=tr("blocked.and", lang).join(missing), ex_id=ex_id,
                 why=tr("blocked.hosted", lang))
    check = {"name": tr("check.dependencies", lang), "passed": False, "message": message, "hint": None,
             "call": "", "kind": "error"}
    return dict(status="blocked", passed=False, raw_score=0.0, score=0.0, summary=message, checks=[check],
                mistake_ids=[], report={}, sandbox="", grader_version=grader_version_, run_s=0.0)


def error_verdict(message, sandbox):
    """The verdict when the grader itself failed on this job."""
    check = {"name": "grading", "passed": False, "message": message, "hint": None, "call": "", "kind": "error"}
    return dict(status="error", passed=False, raw_score=0.0, score=0.0, summary=message, checks=[check],
                mistake_ids=[], report={}, sandbox=sandbox, grader_version=grader_version(), run_s=0.0)


def grade_claim(store, claim, sandbox, limits=None):
    """Grade a claimed job -> the fields of its Result (the learner's dependencies, or 'blocked')."""
    with store.session() as session:
        deps, missing = passed_dependencies(session, claim.user_id, claim.exercise_id, before=claim.submission_id)
        dep_code = {}
        for dep, submission in deps.items():
            dep_code[dep] = code_of(dep, submission.source, submission.kind, submission.filename)[0]
    if missing:
        return blocked_verdict(claim.exercise_id, missing, grader_version(), claim.lang)
    code, name, label = code_of(claim.exercise_id, claim.source, claim.kind, claim.filename)
    try:
        result = grade_code(claim.exercise_id, code, name, label, dep_code, sandbox, limits, claim.lang)
    except GraderUnsupported as err:
        return error_verdict(str(err), sandbox)
    return verdict_from(claim.exercise_id, result, claim.penalty, sandbox, claim.submission_id, claim.lang)


def grade_code(ex_id, code, name, label, dependencies, sandbox, limits=None, lang="en"):
    """One exercise through grader.grade_submissions with these dependency sources -> ExerciseResult."""
    core, has_sandbox, has_dependencies = grader_api()
    from grader.sandbox import SandboxLimits

    limits = limits or SandboxLimits(parallel=1)
    options = {"sandbox": sandbox} if has_sandbox else {}
    options["lang"] = lang
    if has_dependencies:
        submission = core.Submission(ex_id, code, name, label, dependencies=dependencies)
        return core.grade_submissions([submission], limits, **options, **_own_dependencies_option(core))[0]
    with _own_dependencies(dependencies):
        return core.grade_submissions([core.Submission(ex_id, code, name, label)], limits, **options)[0]


@contextmanager
def _own_dependencies(dependencies):
    """Stage the learner's dependency sources instead of the references, for one grading run.

    A stopgap for graders without Submission.dependencies; it reproduces the
    package layout of grader.sandbox.stage_job.
    """
    from grader import sandbox as grader_sandbox

    original = getattr(grader_sandbox, "stage_job", None)
    if original is None or list(inspect.signature(original).parameters)[:4] != \
            ["job_dir", "ex_id", "learner_source", "learner_name"]:
        raise GraderUnsupported("this grader cannot stage a learner's own dependencies (it needs "
                                "Submission.dependencies): not graded, the reference is never used instead")

    def stage_job(job_dir, ex_id, learner_source, learner_name):
        exercise = exercises.get(ex_id)
        package = Path(job_dir) / "learner"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text('"""Staged for grading."""\n')
        for dep in exercise.needs:
            (package / exercises.get(dep).filename).write_text(dependencies[dep], encoding="utf-8")
        (package / exercise.filename).write_text(learner_source, encoding="utf-8")
        (Path(job_dir) / "results").mkdir()
        (Path(job_dir) / "learner_name.txt").write_text(learner_name)

    with _STAGING_LOCK:
        grader_sandbox.stage_job = stage_job
        try:
            yield
        finally:
            grader_sandbox.stage_job = original


def verdict_from(ex_id, result, penalty, sandbox, submission_id, lang="en"):
    """Result fields from the grader's ExerciseResult, stored as its JSON report (version 1) in `lang`."""
    from grader.report import Report

    report = Report(f"submission {submission_id}", [result], lang).to_dict()
    entry = report["exercises"][0]
    return dict(status=entry["status"], passed=entry["passed"], raw_score=entry["score"],
                score=round(entry["score"] * (1.0 - penalty), 4), summary=entry["summary"],
                checks=entry["checks"], mistake_ids=mistake_ids(ex_id, entry["checks"]), report=report,
                sandbox=sandbox, grader_version=grader_version(), run_s=entry["duration_s"])


def mistake_labels(ex_id, lang="en"):
    """{mistake id: hint text} of an exercise's known mistakes (labels for the analytics bars)."""
    from grader import checks as checks_registry
    from grader.text import hint_text

    return {m.id: hint_text(ex_id, m, lang) for m in checks_registry.for_exercise(ex_id).MISTAKES}


def feedback_text(report):
    """The command line's table and messages for a stored version-1 report (empty report: '')."""
    import dataclasses
    import io

    from grader.report import CheckResult, ExerciseResult, Report, print_table

    if not report or not report.get("exercises"):
        return ""
    check_fields = {f.name for f in dataclasses.fields(CheckResult)}
    exercise_fields = {f.name for f in dataclasses.fields(ExerciseResult)}
    exercises_ = []
    for entry in report["exercises"]:
        fields = {k: v for k, v in entry.items() if k in exercise_fields}
        fields["checks"] = [CheckResult(**{k: v for k, v in c.items() if k in check_fields}) for c in entry["checks"]]
        exercises_.append(ExerciseResult(**fields))
    out = io.StringIO()
    print_table(Report(report.get("target", ""), exercises_, report.get("lang", "en")), out=out)
    return out.getvalue()
