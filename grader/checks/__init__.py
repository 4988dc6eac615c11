"""Per-exercise checks and known mistakes: grader/checks/exNN.py each define
`build()` (the checks, seeded, built fresh per grading run) and `MISTAKES`."""

import importlib

from course.common.exercise_index import get as get_exercise


def for_exercise(ex_id):
    """The checks module of one exercise."""
    get_exercise(ex_id)  # a clear error for an unknown id
    return importlib.import_module(f"{__name__}.{ex_id}")
