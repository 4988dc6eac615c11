"""How long one worker holds a job whose report carries NaN (an honest ex01 whose masked softmax gives 0/0).

    python bench/non_finite_verdict.py [--db URL] [--sandbox process|strict] [--limit-s 200]

A class on a throwaway Postgres cluster (Debian's postgresql, as the tests start it; --db URL: that database
instead, e.g. sqlite:///tmp/x.db, which must be empty or not exist yet): ann submits
tests/non_finite/ex01_zero_over_zero.py, then bob and cy each a correct ex01 behind it. One worker (`python -m
classroom worker --once`, a process of its own) grades them. Prints, per job, its verdict and the worker's hold
time (claim -> verdict stored: the stored Result's grading_s), and the time until all three were stored; a job
still unstored after --limit-s seconds is printed as such (the worker is then stopped) with the worker's count of
"database unavailable" retries.
"""

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlalchemy import select  # noqa: E402

from classroom.data.submissions import submit  # noqa: E402
from classroom.data.db import ENV_VAR  # noqa: E402
from classroom.data.models import Job, Result, Submission  # noqa: E402
from tests.classroom_support import PostgresCluster, make_class, solution, user_id  # noqa: E402

NAN_FILE = ROOT / "tests" / "non_finite" / "ex01_zero_over_zero.py"


def rows(store):
    """{submission id: (job state, result status, score, grading_s)} of every submission."""
    with store.session() as session:
        found = session.execute(select(Submission.id, Job.state, Result.status, Result.score, Result.grading_s)
                                .join(Job, Job.submission_id == Submission.id)
                                .outerjoin(Result, Result.job_id == Job.id)).all()
    return {sid: rest for sid, *rest in found}


def measure(url, sandbox, limit_s, tmp):
    store = make_class(url, tmp)
    ids = [submit(store, user_id(store, "ann@class.test"), "ex01", NAN_FILE.read_text(), "ex01_softmax.py")]
    ids += [submit(store, user_id(store, email), "ex01", solution("ex01"), "ex01_softmax.py")
            for email in ("bob@class.test", "cy@class.test")]
    log_path = Path(tmp) / "worker.log"
    start = time.monotonic()
    with open(log_path, "w") as log:
        worker = subprocess.Popen([sys.executable, "-m", "classroom", "worker", "--once", "--sandbox", sandbox],
                                  cwd=ROOT, env=dict(os.environ, **{ENV_VAR: url}), stderr=log)
        try:
            worker.wait(timeout=limit_s)
        except subprocess.TimeoutExpired:
            worker.send_signal(signal.SIGTERM)  # it finishes nothing more: its verdict never stores
            try:
                worker.wait(timeout=30)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
    took = time.monotonic() - start
    found = rows(store)
    store.close()
    names = {ids[0]: "NaN ex01 (ann)", ids[1]: "correct ex01 (bob)", ids[2]: "correct ex01 (cy)"}
    for sid in ids:
        state, status, score, grading_s = found[sid]
        if status is None:
            print(f"  {names[sid]}: NOT STORED after {limit_s:g} s (job {state})")
        else:
            print(f"  {names[sid]}: {status} {score:.2f}, worker hold (claim -> verdict stored) {grading_s:.1f} s")
    retries = log_path.read_text().count("database unavailable")
    done = all(found[sid][1] is not None for sid in ids)
    print(f"  all three stored: {'yes' if done else 'no'}, after {took:.1f} s (worker start included); "
          f"'database unavailable' retries in the worker's log: {retries}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", help="a database URL (default: a throwaway Postgres cluster)")
    parser.add_argument("--sandbox", default="process", choices=("process", "strict"))
    parser.add_argument("--limit-s", type=float, default=200.0, help="stop waiting for the verdicts after this")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-non-finite-") as tmp:
        if args.db:
            print(f"{args.db}, one worker, {args.sandbox} sandbox:")
            measure(args.db, args.sandbox, args.limit_s, tmp)
            return
        cluster = PostgresCluster()
        cluster.start()
        try:
            import psycopg

            with psycopg.connect(f"{cluster.url}/postgres", autocommit=True) as conn:
                conn.execute('CREATE DATABASE "bench"')
            print(f"Postgres ({cluster.bindir.parent.name}), one worker, {args.sandbox} sandbox:")
            measure(f"{cluster.url}/bench", args.sandbox, args.limit_s, tmp)
        finally:
            cluster.remove()


if __name__ == "__main__":
    main()
