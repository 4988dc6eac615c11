"""Similarity flags of a class: pairs of learners whose code of one exercise is above its calibrated threshold.

Each learner's best submission of each exercise (classroom.data.which_counts, the gradebook's rule) is
compared with every other learner's (classroom.analytics.similarity); the class's passing ones join each
exercise's null distribution once enough learners passed. Beside each flag: the rare traces the two
learners' verdicts share (classroom.analytics.copy_evidence). For TAs and instructors only (classroom.web.access).

Fingerprints and pair scores are kept on the store (Store.kept) and only new submissions are
fingerprinted and compared when the class changes.
"""

from dataclasses import dataclass

from sqlalchemy import select

from . import copy_evidence, frames, similarity
from ..data import exercise_table
from ..data.models import User
from ..data.which_counts import best_per_exercise, newest_results

KEPT = "similarity"  # this module's entry in Store.kept


@dataclass(frozen=True)
class Side:
    """One learner of a flagged pair and the submission compared."""

    user_id: int
    email: str
    name: str
    submission_id: int


@dataclass(frozen=True)
class Flag:
    """A pair above its exercise's threshold, with the evidence to show beside it."""

    ex_id: str
    score: float
    threshold: similarity.Threshold
    first: Side
    second: Side
    shared: tuple  # copy_evidence.Shared of this pair, on any exercise


@dataclass
class Memory:
    """What is kept between reads: fingerprints by submission id, scores by (ex_id, submission a, submission b)."""

    prints: dict
    scores: dict
    version: tuple = ()
    result: tuple = ((), {})


def _read(store):
    """(learners {user id: (email, name)}, [(Submission, Result)] of every learner's graded submission)."""
    with store.session() as session:
        learners = {u.id: (u.email, u.name) for u in session.scalars(select(User).where(User.role == "learner"))}
        return learners, [(s, r) for s, r in newest_results(session) if s.user_id in learners]


def _best(graded):
    """{ex_id: {user id: best Submission, Result}}."""
    by_user = {}
    for submission, result in graded:
        by_user.setdefault(submission.user_id, []).append((submission, result))
    best = {}
    for user_id, pairs in by_user.items():
        for ex_id, pair in best_per_exercise(pairs).items():
            best.setdefault(ex_id, {})[user_id] = pair
    return best


def _scores(memory, ex_id, chosen):
    """{(user a, user b): score} for every pair of the chosen submissions of one exercise (a < b); only pairs
    not kept yet are compared (all of them at once, similarity.shares)."""
    for submission, _ in chosen.values():
        if submission.id not in memory.prints:
            memory.prints[submission.id] = similarity.exercise_fingerprint(ex_id, submission.source, submission.kind)
    users = sorted(chosen)
    ids = [chosen[u][0].id for u in users]
    keys = {(a, b): (ex_id, *sorted((chosen[a][0].id, chosen[b][0].id)))
            for i, a in enumerate(users) for b in users[i + 1:]}
    new = sorted({s for key in keys.values() if key not in memory.scores for s in key[1:]})
    if new:
        prints = {s: memory.prints[s] for s in ids}
        found = similarity.shares(prints, new, ids)  # (new, all): share of the new file found in each
        back = similarity.shares(prints, ids, new)  # (all, new): share of each file found in the new one
        at = {s: n for n, s in enumerate(ids)}
        for n, s in enumerate(new):
            for other in ids:
                if other != s:
                    key = (ex_id, *sorted((s, other)))
                    memory.scores.setdefault(key, float(max(found[n, at[other]], back[at[other], n])))
    return {pair: memory.scores[key] for pair, key in keys.items()}


def compute(memory, learners, graded):
    """(flags sorted by how far above the threshold, {ex_id: Threshold}) of a class's graded submissions."""
    best = _best(graded)
    pair_scores, nulls, class_pairs = {}, {}, {}
    for ex_id in exercise_table.EXERCISE_IDS:
        chosen = best.get(ex_id, {})
        pair_scores[ex_id] = _scores(memory, ex_id, chosen)
        passing = {u for u, (_, result) in chosen.items() if result.passed}
        own = [s for (a, b), s in pair_scores[ex_id].items() if a in passing and b in passing] \
            if len(passing) >= similarity.NULL_MIN_LEARNERS else []
        nulls[ex_id] = list(similarity.reference_null(ex_id)) + own
        class_pairs[ex_id] = len(own)
    thresholds = similarity.calibrate(nulls, class_pairs)
    shared = copy_evidence.shared_rare((s.user_id, s.exercise_id, r.status, r.mistake_ids, r.checks)
                                       for s, r in graded)
    flags = []
    for ex_id, scores in pair_scores.items():
        for (a, b), value in scores.items():
            if value > thresholds[ex_id].value:
                sides = [Side(u, *learners[u], best[ex_id][u][0].id) for u in (a, b)]
                flags.append(Flag(ex_id, value, thresholds[ex_id], *sides, tuple(shared.get((a, b), ()))))
    flags.sort(key=lambda f: (-(f.score - f.threshold.value), f.ex_id, f.first.email, f.second.email))
    return tuple(flags), thresholds


def class_flags(store):
    """(flags, thresholds) of the class, kept on the store and brought up to date when the class changed."""
    version = frames._version(store)  # the class frame's own change marker: submissions, results, jobs
    entry = store.kept(KEPT)
    with entry.lock:
        if entry.value is None:
            entry.value = Memory({}, {})
        memory = entry.value
        if memory.version != version:
            memory.result = compute(memory, *_read(store))
            memory.version = version
        return memory.result
