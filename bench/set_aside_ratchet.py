"""Can learners move the set-aside time? The time past which a submission's first run is stopped and set aside
(classroom/line/worker.py `set_aside_after`), before and after correct files that run long, and what an infinite loop
then costs its worker.

    python bench/set_aside_ratchet.py [--fast 3] [--slow 5] [--sleep 15] [--limit 20] [--sandbox strict]

A fresh SQLite class, one learner. One worker in this process (worker.run_worker, --once) grades --fast correct
ex00 files, then prints the set-aside time a new ex00 submission's first run would get; grades --slow correct
files that sleep --sleep s (as many learners' slow solutions would), prints it again; then grades one infinite
loop (worker.grade_job on its claim) and prints how long it held the worker, and whether it was set aside.
Runs on this commit and on the ones before (it calls set_aside_after as each defines it).
"""

import argparse
import inspect
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from classroom.line import grading, queue, worker  # noqa: E402
from classroom.data.roster import import_roster, init_class, user_by_email  # noqa: E402
from classroom.data.settings import set_setting  # noqa: E402
from classroom.data.submissions import submit  # noqa: E402

PROBE = dict(job_id=0, worker_id="probe", attempt=1, submission_id=0, user_id=0, exercise_id="ex00", source="",
             kind=".py", filename="ex00_paths.py", penalty=0.0, claimed_at=None, may_set_aside=True)


def threshold(store, limit_s, mode):
    """The set-aside time of a new ex00 submission's first run on this machine (None: it runs to limit_s)."""
    claim = queue.Claim(**PROBE)
    if "mode" in inspect.signature(worker.set_aside_after).parameters:
        return worker.set_aside_after(store, claim, limit_s, mode)
    return worker.set_aside_after(store, claim, limit_s)


def shown(seconds):
    return "off (the whole limit)" if seconds is None else f"{seconds:.2f} s"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", type=int, default=3, help="correct files graded first")
    parser.add_argument("--slow", type=int, default=5, help="correct files that sleep --sleep s")
    parser.add_argument("--sleep", type=float, default=15.0)
    parser.add_argument("--limit", type=float, default=20.0, help="the job time limit (s)")
    parser.add_argument("--sandbox", default="strict", choices=grading.SANDBOX_MODES)
    args = parser.parse_args()
    mode = grading.choose_sandbox(args.sandbox, log=print)
    reference = (ROOT / "solutions" / "ex00_paths.py").read_text()
    with tempfile.TemporaryDirectory(prefix="set-aside-ratchet-") as tmp:
        url = f"sqlite:///{Path(tmp) / 'class.db'}"
        store = init_class(url, "prof@class.test")
        (Path(tmp) / "roster.csv").write_text("email,name,role\nann@class.test,Ann,learner\n")
        import_roster(store, Path(tmp) / "roster.csv")
        for key in ("max_in_flight", "per_hour", "variants"):
            set_setting(store, key, 0)
        ann = user_by_email(store, "ann@class.test").id

        def grade(sources):
            for source in sources:
                submit(store, ann, "ex00", source, "ex00_paths.py")
            worker.run_worker(url, sandbox=mode, once=True, log=lambda _: None, job_timeout_s=args.limit)

        grade([reference] * args.fast)
        print(f"set-aside time after {args.fast} correct files: {shown(threshold(store, args.limit, mode))}")
        grade([f"import time\ntime.sleep({args.sleep})\n{reference}"] * args.slow)
        print(f"set-aside time after {args.slow} correct files sleeping {args.sleep:g} s: "
              f"{shown(threshold(store, args.limit, mode))}")
        submit(store, ann, "ex00", "while True:\n    pass\n", "ex00_paths.py")
        claim = queue.claim(store, "bench", queue.LEASE_S)
        lines = []
        started = time.monotonic()
        stored = worker.grade_job(store, claim, mode, queue.LEASE_S, lines.append, job_timeout_s=args.limit)
        held = time.monotonic() - started
        print(f"infinite loop held its worker {held:.1f} s ({'set aside' if not stored else 'graded to the limit'}; "
              f"limit {args.limit:g} s, sandbox {mode})")
        store.close()


if __name__ == "__main__":
    main()
