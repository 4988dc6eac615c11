"""What building the automatic mutants' caches costs: per exercise, the CPU seconds of its build (the bounded
fork's, as grader/diagnosis/mutants.py `ensure` runs it from a grading), the wall seconds, how many mutants the
operators derive and how many the cache keeps, in a fresh cache folder (every cache cold, as in CI).

    python bench/mutant_builds.py [ex07 ...] [--keep]

--keep leaves the cache folder (its path is printed) for comparing two grader versions' caches.
"""

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("exercises", nargs="*", help="exercise ids (default: all)")
    parser.add_argument("--keep", action="store_true", help="keep the cache folder")
    return parser.parse_args()


def children_cpu():
    """CPU seconds (user + system) of this process's finished children."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main():
    args = parse_args()
    folder = tempfile.mkdtemp(prefix="attention-lab-mutant-bench-")
    os.environ["ATTENTION_LAB_MUTANT_CACHE"] = folder  # read at each call: every cache starts cold
    import torch

    from course.common.exercise_index import EXERCISES, get
    from grader.diagnosis import mutants
    from grader.diagnosis.operators import mutations

    torch.set_num_threads(1)  # as a grading run calls the build
    mutants.BUILD_TIMEOUT_S = 3600  # a loaded machine may need longer than the grader's bound
    total = 0.0
    for ex_id in args.exercises or [ex.id for ex in EXERCISES]:
        derived = len(list(mutations((mutants.SOLUTIONS_DIR / get(ex_id).filename).read_text(encoding="utf-8"))))
        cpu, started = children_cpu(), time.monotonic()
        kept = mutants.ensure([ex_id]).get(ex_id, "(built already)")
        cpu = children_cpu() - cpu
        total += cpu
        print(f"{ex_id}: {cpu:5.1f} s CPU, {time.monotonic() - started:6.1f} s wall, {derived} mutants, kept {kept}",
              flush=True)
    print(f"total {total:.1f} s CPU (load {os.getloadavg()[0]:.1f})")
    if args.keep:
        print(f"caches kept in {folder}")
    else:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
