"""The fields of a stored Result, built in one place from the grader's ExerciseResult.

Every verdict the class stores, graded or not (the grader failed on a job, its
workers kept dying), is a grader result kept as its JSON report (version 1),
so the feedback reads back the same way for all of them (classroom/feedback.py).
"""

import hashlib
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
_VERSION = None


def grader_version():
    """A digest of grader/ and solutions/: changes whenever either changes."""
    global _VERSION
    if _VERSION is None:
        digest = hashlib.sha256()
        for folder in ("grader", "solutions"):
            for path in sorted((PROJECT_ROOT / folder).rglob("*.py")):
                digest.update(str(path.relative_to(PROJECT_ROOT)).encode() + b"\0" + path.read_bytes())
        _VERSION = "src-" + digest.hexdigest()[:12]
    return _VERSION


def mistake_ids(checks):
    """The mistake ids of a result (a known mistake's, or an automatically found slip's "auto:..."): each
    check's `mistake` field, never its (translated) text."""
    found = []
    for check in checks:
        if check.get("mistake") and check["mistake"] not in found:
            found.append(check["mistake"])
    return found


def verdict(result, target, lang="en", penalty=0.0, sandbox=""):
    """Result fields from a grader ExerciseResult; `penalty` (late) lowers the score, not the raw score."""
    from grader.report import Report

    report = Report(target, [result], lang).to_dict()
    entry = report["exercises"][0]
    return dict(status=entry["status"], passed=entry["passed"], raw_score=entry["score"],
                score=round(entry["score"] * (1.0 - penalty), 4), summary=entry["summary"],
                checks=entry["checks"], mistake_ids=mistake_ids(entry["checks"]), report=report,
                sandbox=sandbox, grader_version=grader_version(), run_s=entry["duration_s"])


def error_verdict(ex_id, submission_id, message, lang="en", sandbox=""):
    """Result fields for a job that could not be graded, with `message` saying why."""
    from grader.report import ExerciseResult

    return verdict(ExerciseResult.error(ex_id, message, "grading", lang), f"submission {submission_id}", lang,
                   sandbox=sandbox)
