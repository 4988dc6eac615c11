"""What an exercise variant (grader/variants.py) costs per grade: generating it and applying it to the checks.

    python bench/variants.py [--runs 200] [--exercises ex06 ex09 ...]

Per exercise, over --runs variant numbers drawn at random: the time of `variant(ex_id, n)` (drawing the
parameters), of the variant's part of `build_checks` (the cases drawn for it, `variant_checks`, and `apply`,
giving the value to the reference's specs: build_checks minus build), and, for scale, of building the
exercise's checks at all (`build()`, paid by every grade with or without variants). Prints the medians in
microseconds, the variant's share of the checks' build, and the total per grade of all ten exercises in ms.
Load matters: say `uptime` beside it.
"""

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from course.common.exercise_index import EXERCISES  # noqa: E402
from grader import checks as checks_registry  # noqa: E402
from grader import variants  # noqa: E402


def timed(fn):
    """(seconds, result) of one call."""
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def measure(ex_id, numbers):
    """Medians in seconds: (drawing a variant, applying it, building the checks)."""
    module = checks_registry.for_exercise(ex_id)
    seed = 1 if getattr(module, "CASES_DRAWN", False) else None
    draw, apply, build = [], [], []
    for number in numbers:
        spent, _ = timed(module.build if seed is None else lambda: module.build(seed=seed))
        build.append(spent)
        spent, chosen = timed(lambda number=number: variants.variant(ex_id, number))
        draw.append(spent)
        spent, _ = timed(lambda chosen=chosen: variants.build_checks(module, chosen, seed))
        apply.append(max(0.0, spent - build[-1]))
    return statistics.median(draw), statistics.median(apply), statistics.median(build)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="variant numbers per exercise (default 200)")
    parser.add_argument("--exercises", nargs="*", default=[ex.id for ex in EXERCISES])
    args = parser.parse_args(argv)
    rng = random.Random(0)
    numbers = [rng.randint(1, variants.MAX_VARIANT) for _ in range(args.runs)]
    print(f"load average {os.getloadavg()[0]:.2f}; medians over {args.runs} variants")
    print(f"{'exercise':8} {'draw us':>9} {'apply us':>9} {'build checks ms':>16} {'variant share':>14}")
    total = 0.0
    for ex_id in args.exercises:
        draw, apply, build = measure(ex_id, numbers)
        total += draw + apply
        share = (draw + apply) / build if build else float("nan")
        print(f"{ex_id:8} {draw * 1e6:9.1f} {apply * 1e6:9.1f} {build * 1e3:16.2f} {share:14.2%}")
    print(f"variant generation per grade of these {len(args.exercises)} exercises: {total * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
