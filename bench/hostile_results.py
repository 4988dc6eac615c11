"""What hostile result files cost the grader's host: its peak memory, the grade's time and the bytes
its run folder held on disk, for a correct ex03 (the control; each case also grades a correct ex01, which ex03
builds on) and the attacks tests/hostile/pickle_bomb.py
(four result files of one repeated pickle opcode) and tests/hostile/sparse_links.py (a sparse file and
255 hard links to it in the results folder).

    python bench/hostile_results.py [--mode strict|process] [--cases control,pickle_bomb,sparse_links]

Each case is graded alone in a fresh Python process (so one case's memory does not hide the next's).
Prints one line per case: the grading process's peak resident memory (VmHWM), the grade's wall time,
the most bytes allocated on disk under the run folder at any sample (every 50 ms, the sandbox's own
tmpfs not counted) and the drop of the temp folder's free space. Strict mode needs root and bubblewrap.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = ("control", "pickle_bomb", "sparse_links")


def run_case(case, mode):
    """In this process: grade one submission while sampling the run folders -> figures (a dict)."""
    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
    from sandbox_helpers import RunFolderWatch, hostile_source, reference

    from grader.core import Submission, grade_submissions
    from grader.sandbox import SandboxLimits

    source = reference("ex03_scoring.py") if case == "control" else hostile_source(case)
    temp = tempfile.gettempdir()
    free_low, done = [os.statvfs(temp).f_bavail], threading.Event()

    def free_space():
        while not done.wait(0.05):
            free_low[0] = min(free_low[0], os.statvfs(temp).f_bavail)

    free_start = os.statvfs(temp)
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM from here on
    started = time.monotonic()
    watch, free_watch = RunFolderWatch(), threading.Thread(target=free_space, daemon=True)
    free_watch.start()
    _, result = grade_submissions([Submission("ex01", reference("ex01_softmax.py"), "ex01_softmax.py"),
                                   Submission("ex03", source, "ex03_scoring.py")], SandboxLimits(timeout_s=10, mode=mode))
    took = time.monotonic() - started
    done.set()
    free_watch.join()
    folder_peak = watch.peak_mb()
    hwm = next(x for x in Path("/proc/self/status").read_text().splitlines() if x.startswith("VmHWM:"))
    first = next((c.message for c in result.checks if not c.passed), result.summary)
    return {"case": case, "mode": mode, "passed": result.passed, "rss_mb": int(hwm.split()[1]) / 1024,
            "seconds": took, "run_folder_peak_mb": folder_peak,
            "free_drop_mb": (free_start.f_bavail - free_low[0]) * free_start.f_frsize / 2**20,
            "first_failure": str(first)[:160]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("strict", "process"), default="strict")
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--one", help=argparse.SUPPRESS)  # in the fresh process: the case to grade
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_case(args.one, args.mode)))
        return
    for case in args.cases.split(","):
        done = subprocess.run([sys.executable, __file__, "--mode", args.mode, "--one", case],
                              capture_output=True, text=True, cwd=ROOT)
        if done.returncode:
            print(f"{case}: failed ({done.returncode}): {done.stderr[-800:]}")
            continue
        row = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"{row['mode']} {row['case']}: grader peak RSS {row['rss_mb']:.0f} MiB, grade {row['seconds']:.1f} s, "
              f"run folder peak {row['run_folder_peak_mb']:.0f} MiB on disk, free space drop "
              f"{row['free_drop_mb']:.0f} MiB, passed={row['passed']}; first failure: {row['first_failure']}",
              flush=True)


if __name__ == "__main__":
    main()
