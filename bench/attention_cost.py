"""Measure full vs linear attention (time and peak tensor memory) and print the figures.

    python bench/attention_cost.py [--runs N] [--write]

Each run times both variants at every n of course.lessons.ch10.N_VALUES (median of 3 calls); the
table printed is the median over N runs (default 3). --write stores it as the shipped figures that
chapter 10 shows before the learner measures on their own machine
(course/lessons/data/attention_cost.json).
"""

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def machine(threads):
    """Where the figures were measured: cores, torch version and threads, load average."""
    import torch

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return {"cores": os.cpu_count(), "torch": torch.__version__, "threads": threads, "load": round(load, 1)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs to take the median of (default 3)")
    parser.add_argument("--write", action="store_true", help="store the result as the shipped figures")
    parser.add_argument("--threads", type=int, default=1, help="torch threads while timing (default 1)")
    args = parser.parse_args()
    from course.lessons import ch10


    runs = [ch10.measure(threads=args.threads) for _ in range(args.runs)]
    table = runs[0][["n", "variant"]].copy()
    for column in ("ms", "mib"):
        table[column] = [sorted(run[column].iloc[i] for run in runs)[len(runs) // 2] for i in range(len(table))]
    print(f"full vs linear attention, d = {ch10.NUM_HIDDENS}, batch 1 (median of {args.runs} runs)")
    print(table.pivot(index="n", columns="variant", values=["ms", "mib"]).round(3).to_string())
    for n in (1024, ch10.N_VALUES[-1]):
        print(f"n = {n}: full/linear time {ch10.ratio(table, n, 'ms'):.1f}x, memory {ch10.ratio(table, n, 'mib'):.1f}x")
    print(machine(args.threads))
    if args.write:
        rows = [{"n": int(r.n), "variant": r.variant, "ms": round(float(r.ms), 4), "mib": round(float(r.mib), 4)}
                for r in table.itertuples()]
        ch10.SHIPPED.parent.mkdir(parents=True, exist_ok=True)
        figures = {"machine": machine(args.threads), "rows": rows}
        ch10.SHIPPED.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {ch10.SHIPPED.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
