"""Which verdict counts: each submission's newest result, and a learner's best submission of an exercise.

A submission may be graded several times (regrades); its newest result (the
highest result id) is its verdict. Of several submissions of one exercise the
best is ranked by course.common.ranking, the rule the gradebook and the
self-study progress use too: a passed one before a failed one, then the highest
score, then the newest submission.

The score that counts for a learner's exercise is that best submission's
score unless staff set one (a score override, classroom/data/adjustments.py):
`score_that_counts` is the rule, and the gradebook, its export, the learner's
records and the LMS passback all apply it.
"""

from sqlalchemy import func, select
from sqlalchemy.orm import load_only

from course.common import ranking

from .models import Result, ScoreOverride, Submission

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


def score_that_counts(computed, override):
    """The score that counts for one learner's exercise: the override staff set, when there is one, else the
    computed best score (None: nothing graded, nor overridden)."""
    return computed if override is None else override


def overrides(session, user_ids=None):
    """{(user id, exercise id): the overriding score} of some users (None: everyone)."""
    query = select(ScoreOverride.user_id, ScoreOverride.exercise_id, ScoreOverride.score)
    if user_ids is not None:
        query = query.where(ScoreOverride.user_id.in_(list(user_ids)))
    return {(user_id, ex_id): score for user_id, ex_id, score in session.execute(query)}


def counted_scores(session, user_ids):
    """{(user id, exercise id): the score that counts} of these users: their best score over the verdicts that
    judged their code (ATTEMPTED), or their override (score_that_counts); no entry: neither."""
    newest = newest_result_ids()
    rows = session.execute(
        select(Submission, Result).join(newest, newest.c.submission_id == Submission.id)
        .join(Result, Result.id == newest.c.result_id)
        .where(Submission.user_id.in_(list(user_ids)), Result.status.in_(ATTEMPTED))
        .options(load_only(Submission.id, Submission.user_id, Submission.exercise_id),  # what the rank reads
                 load_only(Result.id, Result.passed, Result.score))).all()
    graded = {}
    for submission, result in rows:
        graded.setdefault((submission.user_id, submission.exercise_id), []).append((submission, result))
    computed = {key: best_result(pairs)[1].score for key, pairs in graded.items()}
    overridden = overrides(session, user_ids)
    return {key: score_that_counts(computed.get(key), overridden.get(key)) for key in {*computed, *overridden}}
