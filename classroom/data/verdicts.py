"""The fields of a stored Result, built in one place from the grader's ExerciseResult.

Every verdict the class stores, graded or not (the grader failed on a job, its
workers kept dying), is a grader result kept as its JSON report (version 1),
so the feedback reads back the same way for all of them (classroom/web/feedback.py).
"""

import functools
import hashlib
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
# The files whose contents make a verdict, as (folder, file pattern): the grader, the references, the course code
# the grader imports (the exercise index and variants, its helpers, the translation models its demo checks load)
# and the text catalogs its feedback is written from. The rest of course/ (the pages) is not the grader.
VERSIONED = (("grader", "*.py"), ("solutions", "*.py"), ("course/common", "*.py"), ("course/translation", "*.py"),
             ("course/text", "*.toml"))


@functools.cache
def source_digest(root, folders=VERSIONED):
    """'src-' and a digest of the files under root/<folder> matching each (folder, pattern): their paths and bytes.

    Cached per process on purpose: a worker grades with the grader it imported when it started, so the
    version it stores is that of the files as they were then, not as a later checkout left them (a worker
    restarted after an update digests the new files)."""
    digest = hashlib.sha256()
    for folder, pattern in folders:
        for path in sorted((Path(root) / folder).rglob(pattern)):
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return "src-" + digest.hexdigest()[:12]


def grader_version():
    """This process's grader version, the one identity of a grader: the digest of the files that make a verdict
    (VERSIONED; see source_digest), as they were when this process first asked -> 'src-' and 12 hex digits.

    A content digest rather than a git commit: a checkout without .git (an archive, a copy) has one too, local
    edits change it, and two machines holding the same files agree whatever their history. Each Result stores it,
    each worker registers it (classroom/line/queue.py register_worker), and `python -m classroom upgrade` records the
    one the class expects: a worker of another version claims no job (queue.VersionMismatch)."""
    return source_digest(PROJECT_ROOT)


def mistake_ids(checks):
    """The mistake ids of a result (a known mistake's, or an automatically found slip's "auto:..."): each
    check's `mistake` field, never its (translated) text."""
    found = []
    for check in checks:
        if check.get("mistake") and check["mistake"] not in found:
            found.append(check["mistake"])
    return found


def penalised(raw_score, penalty):
    """The score that a late penalty (a fraction of it removed) leaves of the grader's score: the one formula of
    a stored verdict's `score`, when it is graded and when its lateness is decided again (an extension)."""
    return round(raw_score * (1.0 - penalty), 4)


def verdict(result, target, lang="en", penalty=0.0, sandbox=""):
    """Result fields from a grader ExerciseResult; `penalty` (late) lowers the score, not the raw score."""
    from grader.report import Report

    report = Report(target, [result], lang).to_dict()
    entry = report["exercises"][0]
    return dict(status=entry["status"], passed=entry["passed"], raw_score=entry["score"],
                score=penalised(entry["score"], penalty), summary=entry["summary"],
                checks=entry["checks"], mistake_ids=mistake_ids(entry["checks"]), report=report,
                sandbox=sandbox, grader_version=grader_version(), run_s=entry["duration_s"])


def error_verdict(ex_id, submission_id, message, lang="en", sandbox=""):
    """Result fields for a job that could not be graded, with `message` saying why."""
    from grader.report import ExerciseResult

    return verdict(ExerciseResult.error(ex_id, message, "grading", lang), f"submission {submission_id}", lang,
                   sandbox=sandbox)
