"""Benchmark the training lab: wall time of default-size runs, the goal being <= 90 s each on 2 cores.

    python bench/lab_runs.py [--runs N] [--task TASK ...] [--variant VARIANT]

Each run trains the page's default config (course.lessons.training_lab.LabConfig,
snapshots included, one torch thread as on the page) in a fresh child process,
as the page's live run does (timed around train(), imports excluded; the
sentence-pair task reads its slice from the development data); the median of N is printed with the load average
before and after, since a loaded machine makes every figure larger.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GOAL_S = 90
CHILD = ("import json, sys, time; from dataclasses import replace; from course.lessons import training_lab as tl; "
         "pairs = json.load(open(sys.argv[3], encoding='utf-8')) if sys.argv[3] else None; start = time.perf_counter(); "
         "tl.train(replace(tl.variant_config(sys.argv[2]), task=sys.argv[1]), pairs=pairs); "
         "print(time.perf_counter() - start)")


def one_run(task, variant, pairs_file=""):
    """Seconds of one default-size run in a fresh process, timed around train() (imports excluded)."""
    child = subprocess.run([sys.executable, "-c", CHILD, task, variant, str(pairs_file)], cwd=ROOT, check=True,
                           env=dict(os.environ, OMP_NUM_THREADS="1"), capture_output=True, text=True)
    return float(child.stdout.split()[-1])


def main(argv=None):
    """Print each task's run times and their median against the goal."""
    from course.lessons import training_lab

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--task", nargs="+", default=list(training_lab.TASKS))
    parser.add_argument("--variant", default="baseline")
    args = parser.parse_args(argv)
    pairs_file = ""
    if training_lab.PAIRS_TASK in args.task:
        from course.translation import lab_pairs

        pairs_file = Path(tempfile.mkdtemp()) / "pairs.json"
        pairs_file.write_text(json.dumps(lab_pairs.load_slice()), encoding="utf-8")
    for task in args.task:
        before = os.getloadavg()
        times = [one_run(task, args.variant, pairs_file if task == training_lab.PAIRS_TASK else "")
                 for _ in range(args.runs)]
        after = os.getloadavg()
        median = statistics.median(times)
        print(f"{task:>8} {args.variant}: median {median:.1f} s of {', '.join(f'{x:.1f}' for x in times)} "
              f"(goal <= {GOAL_S} s: {'met' if median <= GOAL_S else 'NOT met'}); "
              f"load average {before[0]:.2f} -> {after[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
