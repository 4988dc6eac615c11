"""Verdicts: compare the learner's sandboxed results with the reference, check by check.

A failing check is also run on the known mistaken variants (grader/mistakes.py):
a learner whose results match one gets that mistake's hint.
"""

import torch

from course.common.exercise_index import get as get_exercise
from course.common.i18n import t

from . import checks as checks_registry
from .compare import compare_results, compare_values
from .harness import load_procedures
from .messages import error_kind, error_message, import_message, missing_message, summary_line
from .mistakes import mutant_modules
from .report import CheckResult, ExerciseResult

MAX_HINTED_CHECKS = 3  # mistake detection on the first few failing checks only
PROCEDURES = load_procedures()


def judge_exercise(ex_id, checks, references, job, learner_name, limits):
    """Turn one exercise's sandbox data into verdicts."""
    exercise = get_exercise(ex_id)
    results = []
    for check, reference, record in zip(checks, references, job.records):
        if job.import_error is not None:
            result = CheckResult(check.name, False, import_message(job.import_error, learner_name),
                                 call=check.call, kind=error_kind(job.import_error))
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
    summary = summary_line(status, results, failing)
    return ExerciseResult(
        ex_id, t(f"exercises.{ex_id}.title", "en"), exercise.filename, status, passed,
        round(sum(r.passed for r in results) / max(len(results), 1), 4), 0.0, summary, results,
        job.output[:2000],
    )

def judge_check(check, reference, record, job, limits):
    """The verdict on one check from the learner's record and the reference."""
    if record is None:
        return CheckResult(check.name, False, missing_message(job, limits), call=check.call, kind="missing")
    if "error" in record:
        error = record["error"]
        return CheckResult(check.name, False, error_message(error, limits.memory_mb), call=check.call,
                           kind=error_kind(error))
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


def clear_mutant_cache():
    """Forget the mistaken variants' results (they are keyed on check objects of one run)."""
    _MUTANT_CACHE.clear()
