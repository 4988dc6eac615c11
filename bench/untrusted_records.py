"""Per-job cost of treating results as hostile data: the checked read of the harness's result files
(grader/untrusted_records.py) against a bare torch.load of the same records saved by torch.save (the
format results had before), and judging in a bounded fork (grader/bounded.py) against a bare call.

    python bench/untrusted_records.py [--repeats 5]

The result files are the references' own results of every check of the exercises, written like
the sandbox writes them (grader/harness/result_file.py). Prints, per exercise, the milliseconds both
reads take for all its files, then what one bounded fork adds around a judging that does nothing
(median of the repeats).
"""

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from course.common.exercise_index import EXERCISES  # noqa: E402
from grader import bounded, checks, untrusted_records  # noqa: E402
from grader.core import run_reference_check  # noqa: E402
from grader.harness import result_file  # noqa: E402


def _ms(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as folder:
        for ex in EXERCISES:
            paths, archives = [], []
            for i, check in enumerate(checks.for_exercise(ex.id).build()):
                path = Path(folder) / f"{ex.id}-{i}{result_file.RESULT_SUFFIX}"
                out = run_reference_check(i, check)
                record = {"ok": {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in out.items()}}
                result_file.write(record, str(path))
                torch.save(record, path.with_suffix(".pt"))
                paths.append(path)
                archives.append(path.with_suffix(".pt"))
            bare = _ms(lambda: [torch.load(p, weights_only=True) for p in archives], args.repeats)
            safe = _ms(lambda: [untrusted_records.read_record(p, 64 * 2**20) for p in paths], args.repeats)
            size = sum(p.stat().st_size for p in paths) / 2**20
            print(f"{ex.id}: {len(paths)} result files ({size:.1f} MB): torch.load of torch.save files {bare:.1f} ms, "
                  f"checked read {safe:.1f} ms ({safe - bare:+.1f} ms)")
    fork = _ms(lambda: bounded.run(lambda: {"ok": True}, 30, 1024), args.repeats)
    print(f"bounded judging fork around a judging that does nothing: {fork:.1f} ms per exercise")


if __name__ == "__main__":
    main()
