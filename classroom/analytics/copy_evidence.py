"""The second signal beside a similarity flag: two learners sharing something rare in their verdicts.

Every learner gets the same seeded cases, so the same slip gives the same wrong values; what is shared
by many learners is a common mistake, not evidence. What counts is a *rare* trace (held by at most
rare_limit(n) of the n learners who tried the exercise) that two learners share:
- a mistake id (a known mistake's, or an automatically found slip's "auto:..."), or
- identical wrong values: a failing check whose weights matrix got exactly the same values.
"""

import hashlib
import json
import math
from collections import defaultdict
from dataclasses import dataclass

from course.common.json_numbers import json_ready

from ..data.which_counts import ATTEMPTED

RARE_SHARE = 0.05  # a trace held by at most this share of an exercise's learners is rare ...
RARE_MIN = 2  # ... and one held by this many is rare in any class


@dataclass(frozen=True)
class Trace:
    """Something a verdict recorded about a learner's code: a mistake id, or a failing check's values."""

    ex_id: str
    kind: str  # "mistake" | "values"
    detail: str  # the mistake id, or the check id whose values are identical
    key: str  # what must be equal (the mistake id, or the check id and a digest of its values)


@dataclass(frozen=True)
class Shared:
    """A rare trace two learners share."""

    trace: Trace
    holders: int  # learners holding it
    learners: int  # learners who tried the exercise


def rare_limit(learners):
    """The most learners a trace may be held by and still count as rare."""
    return max(RARE_MIN, math.floor(RARE_SHARE * learners))


def _values_key(check):
    """The check id and a digest of the wrong values of a failing check with weights, or None."""
    if not isinstance(check, dict) or check.get("passed", True):
        return None
    weights = check.get("weights")
    if not isinstance(weights, dict) or weights.get("got") is None:
        return None
    # as stored (json_ready): a NaN read back from an older SQLite row digests as the "NaN" a new one holds
    values = json.dumps(json_ready([weights.get("got"), weights.get("got_value")]), sort_keys=True, default=str)
    return f"{check.get('id', '')}:{hashlib.sha256(values.encode()).hexdigest()[:16]}"


def traces(ex_id, status, mistake_ids, checks):
    """The traces of one verdict: its mistake ids, and the values of its failing checks with weights."""
    if status not in ATTEMPTED or status == "passed":
        return set()
    found = {Trace(ex_id, "mistake", m, m) for m in mistake_ids or ()}
    for check in checks or ():
        key = _values_key(check)
        if key is not None:
            found.add(Trace(ex_id, "values", check.get("id", ""), key))
    return found


def shared_rare(verdicts):
    """{(learner a, learner b) with a < b: [Shared]} from (learner, ex_id, status, mistake_ids, checks) rows."""
    holders = defaultdict(set)  # trace -> learners
    tried = defaultdict(set)  # ex_id -> learners
    for learner, ex_id, status, mistake_ids, checks in verdicts:
        if status in ATTEMPTED:
            tried[ex_id].add(learner)
        for trace in traces(ex_id, status, mistake_ids, checks):
            holders[trace].add(learner)
    pairs = defaultdict(list)
    for trace, who in holders.items():
        learners = len(tried[trace.ex_id])
        if 2 <= len(who) <= rare_limit(learners):
            ordered = sorted(who)
            for i, a in enumerate(ordered):
                for b in ordered[i + 1:]:
                    pairs[(a, b)].append(Shared(trace, len(who), learners))
    return dict(pairs)
