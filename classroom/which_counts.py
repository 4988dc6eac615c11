"""Which verdict counts: each submission's newest result, and a learner's best submission of an exercise.

A submission may be graded several times (regrades); its newest result (the
highest result id) is its verdict. Of several submissions of one exercise the
best is ranked by course.common.ranking, the rule the gradebook and the
self-study progress use too: a passed one before a failed one, then the highest
score, then the newest submission.
"""

from sqlalchemy import func, select

from course.common import ranking

from .models import Result, Submission

ATTEMPTED = ("passed", "failed", "not_written", "error")  # verdicts on the learner's code ("blocked" is not one)


def newest_result_ids():
    """A subquery of (submission_id, result_id): each graded submission's newest result."""
    return (select(Result.submission_id, func.max(Result.id).label("result_id"))
            .group_by(Result.submission_id).subquery())


def newest_results(session, user_id=None, exercise_id=None, submission_ids=None, before=None):
    """[(Submission, its newest Result)] of the graded submissions matching the filters, oldest submission first
    (before: only submissions with a smaller id)."""
    newest = newest_result_ids()
    query = (select(Submission, Result).join(newest, newest.c.submission_id == Submission.id)
             .join(Result, Result.id == newest.c.result_id).order_by(Submission.id))
    if user_id is not None:
        query = query.where(Submission.user_id == user_id)
    if exercise_id is not None:
        query = query.where(Submission.exercise_id == exercise_id)
    if submission_ids is not None:
        query = query.where(Submission.id.in_(list(submission_ids)))
    if before is not None:
        query = query.where(Submission.id < before)
    return [tuple(row) for row in session.execute(query).all()]


def best_result(graded):
    """The best (Submission, Result) of some graded submissions of one exercise (course.common.ranking), or None."""
    return ranking.best(graded, lambda pair: (pair[1].passed, pair[1].score, pair[0].id))


def best_per_exercise(graded):
    """{exercise id: the best (Submission, Result)} of graded submissions of any exercises."""
    by_exercise = {}
    for submission, result in graded:
        by_exercise.setdefault(submission.exercise_id, []).append((submission, result))
    return {ex_id: best_result(pairs) for ex_id, pairs in by_exercise.items()}
