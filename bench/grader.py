"""Wall time of grading all eight reference solutions (goal: under 10 s on 2 cores).

    python bench/grader.py [--runs 5]

Each run is a fresh `python -m grader` process (interpreter start, torch import,
sandbox, comparisons), as a learner would run it. Prints every run and the median.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    target = Path(tempfile.mkdtemp(prefix="bench-grader-"))
    home = Path(tempfile.mkdtemp(prefix="bench-grader-home-"))
    for path in (ROOT / "solutions").glob("ex*.py"):
        shutil.copy(path, target / path.name)
    env = dict(os.environ, ATTENTION_LAB_HOME=str(home))
    times = []
    for run in range(args.runs):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "grader", "--target", str(target), "--no-save"],
                              cwd=ROOT, env=env, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            sys.exit(f"grading the references failed:\n{done.stdout}\n{done.stderr}")
        print(f"run {run + 1}: {times[-1]:.2f} s")
    median = statistics.median(times)
    print(f"grading all 8 references: median {median:.2f} s over {args.runs} runs "
          f"(goal < 10 s: {'met' if median < 10 else 'NOT met'}); cores: {os.cpu_count()}")
    shutil.rmtree(target, ignore_errors=True)
    shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
