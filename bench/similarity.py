"""Copy detection: why a raw threshold fails, how the calibrated one does, and its run time for a class.

    python bench/similarity.py [--learners 200] [--runs 3] [--seeds 20] [--skip-class]

1. copydetect 0.5.0 as it comes (defaults, each exercise's stub as boilerplate, no canonical form) over the
   independent correct files (solutions/ and tests/variants/): how many pairs are above its own 0.33
   display threshold, and above 0.6.
2. The calibrated thresholds (classroom/analytics/similarity.py): each exercise's threshold; independent pairs
   flagged, in sample and with each file's pairs judged by a threshold calibrated without it; the share
   of --seeds disguised copies of each correct file flagged against the original (classroom/analytics/disguise.py), and
   of --seeds copies with the copier's own variant value as the parameter's default (classroom.analytics.disguise.own_value),
   with and without renamed locals; beside each, how many score above the CEILING (flagged even where a class's
   own pairs put the threshold at the ceiling) and the lowest score per exercise.
3. A SQLite class of --learners learners x 10 exercises, one graded submission each (a disguised copy of
   one of the exercise's correct files; a tenth fail with a rare slip): seconds for the Analytics page's
   flags from nothing (fingerprints and all pairs: a fresh store), median of --runs, then after one new
   submission (only its pairs compared). With the load the machine had.
"""

import argparse
import io
import itertools
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from copydetect import CodeFingerprint, compare_files, defaults  # noqa: E402

from classroom.analytics import copy_flags, similarity  # noqa: E402
from classroom.data import exercise_table  # noqa: E402
from classroom.data.roster import init_class  # noqa: E402
from classroom.data.db import Store  # noqa: E402
from classroom.analytics.disguise import disguise, own_value  # noqa: E402
from classroom.data.models import Job, Result, Submission, User, utcnow  # noqa: E402


def load():
    """The 1-minute load average and the core count, as text."""
    return f"load {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"


def raw_print(source, boilerplate=None):
    """copydetect's fingerprint with its defaults (no canonical form)."""
    return CodeFingerprint("f.py", defaults.NOISE_THRESHOLD, 1, boilerplate, fp=io.StringIO(source))


def sources(ex_id):
    """The independent correct files of an exercise, as text."""
    return [p.read_text(encoding="utf-8") for p in similarity.reference_files(ex_id)]


def raw_threshold():
    """Print how many independent pairs copydetect's defaults put above 0.33 and 0.6."""
    pairs = above = high = 0
    for ex_id in exercise_table.EXERCISE_IDS:
        stub = (ROOT / "exercises" / exercise_table.get(ex_id).filename).read_text(encoding="utf-8")
        boilerplate = np.array(sorted(raw_print(stub).hashes))
        prints = [raw_print(s, boilerplate) for s in sources(ex_id)]
        for a, b in itertools.combinations(prints, 2):
            value = max(compare_files(a, b)[1])
            pairs, above, high = pairs + 1, above + (value > defaults.DISPLAY_THRESHOLD), high + (value > 0.6)
    print(f"copydetect defaults: {above} of {pairs} independent pairs above {defaults.DISPLAY_THRESHOLD} "
          f"({high} above 0.6)")


def calibrated(seeds):
    """Print the thresholds, the independent pairs they flag and the disguised copies they catch."""
    prints = {ex_id: [similarity.exercise_fingerprint(ex_id, s) for s in sources(ex_id)]
              for ex_id in exercise_table.EXERCISE_IDS}
    nulls = {ex_id: list(similarity.all_scores(p).values()) for ex_id, p in prints.items()}
    thresholds = similarity.calibrate(nulls)
    print("thresholds: " + ", ".join(f"{e} {t.value:.2f}" for e, t in thresholds.items()))
    in_sample = sum(s > thresholds[e].value for e, scores in nulls.items() for s in scores)
    flagged = set()
    for ex_id, fps in prints.items():
        for held in range(len(fps)):
            rest = [similarity.score(fps[i], fps[j]) for i, j in itertools.combinations(range(len(fps)), 2)
                    if held not in (i, j)]
            limit = similarity.calibrate({**nulls, ex_id: rest})[ex_id].value
            flagged |= {(ex_id, *sorted((held, o))) for o in range(len(fps))
                        if o != held and similarity.score(fps[held], fps[o]) > limit}
    total = sum(len(s) for s in nulls.values())
    print(f"calibrated: {in_sample} of {total} independent pairs flagged in sample, {len(flagged)} out of sample")
    kinds = {"disguised copies": disguise,
             "copies with the copier's own variant value": lambda text, seed, ex_id: own_value(text, ex_id, seed),
             "copies with the copier's own variant value + renames":
                 lambda text, seed, ex_id: own_value(text, ex_id, seed, rename=True)}
    for kind, make in kinds.items():
        caught = count = ceiling = 0
        lowest = {}
        for ex_id, texts in ((e, sources(e)) for e in exercise_table.EXERCISE_IDS):
            for index, text in enumerate(texts):
                for seed in range(seeds):
                    made = make(text, seed) if make is disguise else make(text, seed, ex_id)
                    value = similarity.score(prints[ex_id][index], similarity.exercise_fingerprint(ex_id, made))
                    caught += value > thresholds[ex_id].value
                    ceiling += value > similarity.CEILING
                    count += 1
                    lowest[ex_id] = min(lowest.get(ex_id, 1.0), value)
        print(f"{kind} flagged: {caught} of {count} ({caught / count:.1%}); above the ceiling {similarity.CEILING} "
              f"(flagged whatever a class's null says): {ceiling} ({ceiling / count:.1%}); lowest score per exercise: "
              + ", ".join(f"{e} {v:.3f}" for e, v in lowest.items()))


def add_graded(session, user_id, ex_id, source, failed=False, mistakes=()):
    """One submission with its verdict (no grader run)."""
    now = utcnow()
    sub = Submission(user_id=user_id, exercise_id=ex_id, source=source, kind=".py", filename=f"{ex_id}.py",
                     created_at=now, status="done", late=False)
    session.add(sub)
    session.flush()
    job = Job(submission_id=sub.id, state="done", attempts=1, created_at=now)
    session.add(job)
    session.flush()
    session.add(Result(submission_id=sub.id, job_id=job.id, status="failed" if failed else "passed",
                       passed=not failed, raw_score=float(not failed), score=float(not failed), summary="",
                       checks=[], mistake_ids=list(mistakes), report={}, created_at=now))


def fill(store, learners):
    """Learners with one graded submission of every exercise each (a tenth failing with a slip shared by
    two) -> the first learner's id."""
    with store.session() as session:
        users = [User(email=f"l{n:04d}@bench.test", name=f"Learner {n}", role="learner") for n in range(learners)]
        session.add_all(users)
        session.flush()
        for ex_id in exercise_table.EXERCISE_IDS:
            texts = sources(ex_id)
            for n, user in enumerate(users):
                failed = n % 10 == 0
                add_graded(session, user.id, ex_id, disguise(texts[n % len(texts)], n), failed,
                           [f"auto:bench:{n // 20}"] if failed else [])
        return users[0].id


def class_run(learners, runs):
    """Print the seconds the class's flags take from nothing (median of runs) and after one new submission."""
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'class.db'}"
        store = init_class(url, "prof@bench.test")
        first = fill(store, learners)
        cold = []
        for _ in range(runs):
            fresh = Store(url)
            started = time.perf_counter()
            flags, _ = copy_flags.class_flags(fresh)
            cold.append(time.perf_counter() - started)
            print(f"  from nothing: {cold[-1]:.1f} s ({load()})", flush=True)
        with fresh.session() as session:
            add_graded(session, first, "ex03", disguise(sources("ex03")[1], 999))  # a better ex03 of the first
        started = time.perf_counter()
        copy_flags.class_flags(fresh)
        incremental = time.perf_counter() - started
        print(f"{learners} learners x {len(exercise_table.EXERCISE_IDS)} exercises: flags from nothing "
              f"{statistics.median(cold):.1f} s (median of {runs}), {len(flags)} pairs flagged; "
              f"again after one new graded submission {incremental:.2f} s ({load()})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--learners", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--skip-class", action="store_true")
    args = parser.parse_args()
    print(load())
    raw_threshold()
    calibrated(args.seeds)
    if not args.skip_class:
        class_run(args.learners, args.runs)


if __name__ == "__main__":
    main()
