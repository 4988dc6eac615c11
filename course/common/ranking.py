"""Which of several graded results of one exercise is the learner's best: the one rule every view uses.

A pass beats a fail, then the higher score wins, then the newer result (so a
late pass, whose score the late penalty lowered, still beats an on-time fail
with a higher score, and of two equal results the newer one counts, late flag
included). The sidebar, the chapter footers, the review chapter, the Practice
table, the class's dependency unlocks, the gradebook and its CSV export all
rank with `rank` (Python objects) or `best_first` (a pandas frame), which
agree by construction: both read BEST_FIRST.
"""

import math

BEST_FIRST = ("passed", "score", "order")  # the fields ranked on, most important first; higher is better on each


def rank(passed, score, order):
    """The sort key of one graded result (higher is better): passed, then score (none: lowest), then order
    (newer is larger: a submission id, or the self-study record's sequence number)."""
    missing = score is None or (isinstance(score, float) and math.isnan(score))
    return bool(passed), -math.inf if missing else float(score), order


def best(items, fields):
    """The best of `items` by rank (None when there are none); fields(item) -> (passed, score, order)."""
    return max(items, key=lambda item: rank(*fields(item)), default=None)


def best_first(frame, order):
    """A pandas frame of graded results sorted best first by the same rule; `order` names its newer-is-larger
    column (the passed and score columns are named as in BEST_FIRST)."""
    columns = [order if name == "order" else name for name in BEST_FIRST]
    ranked = frame.assign(passed=frame["passed"].fillna(False).astype(bool))
    return ranked.sort_values(columns, ascending=False, na_position="last", kind="stable")
