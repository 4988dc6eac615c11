"""Grading shared by several test modules: every known mistake, graded once per test run.

test_grader checks each known mistake's hint and test_weight_diff the weights diff the same graded files
carry; grading them once (one sandbox run, default limits, in English) instead of once per module saves
a full batch of child processes."""

import functools

from course.common.exercise_index import EXERCISES
from course.common.paths import PROJECT_ROOT
from grader import checks as checks_registry
from grader.core import Submission, grade_submissions
from grader.mistakes import apply_mistake


def known_mistakes():
    """[(exercise, mistake)] of every exercise's known mistakes (grader/checks/exNN.py MISTAKES), in order."""
    return [(ex, mistake) for ex in EXERCISES for mistake in checks_registry.for_exercise(ex.id).MISTAKES]


@functools.cache
def known_mistake_results():
    """{(ex_id, mistake id): ExerciseResult} of each known mistake applied to its reference, graded in one batch
    (the file named after the mistake) once per run. Read the results, never change them."""
    items = known_mistakes()
    submissions = [Submission(ex.id, apply_mistake((PROJECT_ROOT / "solutions" / ex.filename).read_text(encoding="utf-8"),
                                                   mistake), f"{mistake.id}.py") for ex, mistake in items]
    return dict(zip([(ex.id, mistake.id) for ex, mistake in items], grade_submissions(submissions)))
