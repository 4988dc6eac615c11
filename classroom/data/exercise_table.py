"""The exercise table as class mode uses it (one definition: course.common.exercise_index)."""

from course.common.exercise_index import BY_ID, EXERCISES, get  # noqa: F401

EXERCISE_IDS = tuple(ex.id for ex in EXERCISES)


def needs(ex_id):
    """The ids of the earlier exercises an exercise imports (graded with the learner's own)."""
    return tuple(get(ex_id).needs)
