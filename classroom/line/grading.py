"""Grade one claimed submission with the grader's Python API -> the fields of its Result.

The worker grades one job as
    grade_submissions([Submission(ex_id, code, name, label, dependencies={dep: code})],
                      limits, sandbox=mode, references_for_dependencies=False, lang=lang)
in either sandbox mode (`choose_sandbox` picks it with `grader.sandbox.strict_problem()`):
a job for ex05 gets the code of the learner's best passed ex01 and ex03
submitted before it (classroom/data/which_counts.py; a regrade sees them as they stood
then), never the references. For a dependency
without one the grader itself answers "pass ex03 first" (status "blocked")
without running the learner's code; the class stores what the grader reports.
"""

import tempfile
from pathlib import Path

from course.common.i18n import t
from grader import notebook_submit
from grader.core import Submission, grade_submissions, lost_to_server
from grader.sandbox import SandboxLimits, strict_problem
from grader.warm_server import ServerFailed

from ..data import exercise_table, verdicts, which_counts

SANDBOX_MODES = ("strict", "process")


class StrictUnavailable(RuntimeError):
    """The strict sandbox was required but cannot run here."""


class SandboxLost(ServerFailed):
    """The warm sandbox server died under a job's run (grader.core.lost_to_server): the grading infrastructure
    failed, not the learner's code, which a strict box keeps from reaching the server."""


def sandbox_failed(err):
    """Did the sandbox fail under the job (it could not start, or its server died: ServerFailed, SandboxLost), so
    that grading the job again may give its real verdict?"""
    return isinstance(err, ServerFailed)


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
        raise StrictUnavailable(f"strict sandbox unavailable: {problem}")
    log(f"sandbox: STRICT MODE UNAVAILABLE ({problem}); grading in process mode, which does not hold "
        "against hostile code. Pass --require-strict to refuse instead.")
    return "process"


def passed_dependencies(session, user_id, ex_id, before=None):
    """{dep id: Submission}: the learner's best submission of each dependency, where that one passed.

    before (a submission id): only dependencies submitted before it, so that a
    regrade grades a submission with the dependencies as they stood then.
    """
    found = {}
    for dep in exercise_table.needs(ex_id):
        graded = which_counts.newest_results(session, user_id=user_id, exercise_id=dep, before=before)
        best = which_counts.best_result(graded)
        if best is not None and best[1].passed:
            found[dep] = best[0]
    return found


def code_of(ex_id, source, kind, filename):
    """(code or None, name, label) of a submission: a .py's text or a notebook's answer cell."""
    if kind == ".py":
        return source, filename or exercise_table.get(ex_id).filename, None
    with tempfile.TemporaryDirectory(prefix="classroom-nb-") as tmp:
        path = Path(tmp) / (Path(filename).name if filename.endswith(".ipynb") else f"{ex_id}.ipynb")
        path.write_text(source, encoding="utf-8")
        code, *names = notebook_submit.read_notebook_sources(path, [ex_id], warn=lambda _: None)[ex_id]
    names = [n.replace(str(path), path.name) for n in names]
    return code, names[0], (names[1] if len(names) > 1 else None)


def job_limits(timeout_s=None):
    """A worker's limits for one job: one exercise at a time, a warm server; timeout_s if given."""
    return SandboxLimits(parallel=1, warm=True, **({} if timeout_s is None else {"timeout_s": timeout_s}))


def grade_claim(store, claim, sandbox, limits=None):
    """Grade a claimed job with the learner's own passed dependencies -> the fields of its Result."""
    with store.session() as session:
        dependencies = {dep: code_of(dep, s.source, s.kind, s.filename)[0]
                        for dep, s in passed_dependencies(session, claim.user_id, claim.exercise_id,
                                                          before=claim.submission_id).items()}
    code, name, label = code_of(claim.exercise_id, claim.source, claim.kind, claim.filename)
    submission = Submission(claim.exercise_id, code, name, label, dependencies=dependencies,
                            variant=claim.variant)  # the stored variant, whatever the code claims
    [result] = grade_submissions([submission], limits or job_limits(), sandbox=sandbox,
                                 references_for_dependencies=False, lang=claim.lang)
    if lost_to_server(result):  # not this submission's verdict: the worker grades it again (classroom/line/worker.py)
        raise SandboxLost(result.summary)
    return verdicts.verdict(result, f"submission {claim.submission_id}", claim.lang, claim.penalty, sandbox)


def failure_verdict(claim, err, sandbox, tries=1):
    """The fields of the Result of a job on which the grader itself failed (raised `err`), in the learner's
    language: a sandbox that failed under it (`sandbox_failed`; `tries` times in all) is said in words (the worker's
    log has the details)."""
    if sandbox_failed(err):
        message = t("classroom.grading_sandbox_down", claim.lang, tries=tries)
    else:
        message = t("classroom.grading_failed", claim.lang, error=f"{type(err).__name__}: {err}")
    return verdicts.error_verdict(claim.exercise_id, claim.submission_id, message, claim.lang, sandbox)


def refused_verdict(claim, sandbox):
    """The fields of the Result of a job whose verdict the database refused to store (a value it cannot hold: not an
    outage, which the worker waits out), in the learner's language."""
    return verdicts.error_verdict(claim.exercise_id, claim.submission_id, t("classroom.grading_not_stored", claim.lang),
                                  claim.lang, sandbox)
