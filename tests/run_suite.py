"""Every test in two phases: `python tests/run_suite.py [PYTEST ARGS]` (README's test command, and CI's).

1. parallel: pytest-xdist, one worker per core (at most WORKERS), each file on one worker (its module
   fixtures, a Streamlit server or a browser, start once; the longest files first, tests/xdist_order.py),
   every test but those marked `timing` or `alone`;
2. serial: the `timing` tests (they assert a duration) and the `alone` ones (they check machine-wide state),
   in one process with nothing else running.

Extra arguments go to both phases. The exit code is the first non-zero one of the two (5, no test selected,
counts as success: `-k` may select tests of one phase only). Plain `python -m pytest` runs everything serially.
"""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKERS = 2
SERIAL = "timing or alone"  # the markers of tests/conftest.py's SERIAL_MARKERS
NO_TESTS = 5  # pytest's exit code when nothing was selected


def phases(args):
    """[(name, pytest command)] of the parallel and the serial phase."""
    workers = max(1, min(WORKERS, os.cpu_count() or 1))
    pytest = [sys.executable, "-m", "pytest", *args]
    return [("parallel", pytest + ["-n", str(workers), "--dist", "loadfile", "-m", f"not ({SERIAL})"]),
            ("serial", pytest + ["-p", "no:xdist", "-m", SERIAL])]


def main(args):
    """Run both phases (the second even if the first failed) -> the exit code."""
    codes = []
    for name, command in phases(args):
        print(f"== {name} phase: {' '.join(command[1:])}", flush=True)
        codes.append(subprocess.run(command, cwd=ROOT).returncode)
    failed = [code for code in codes if code not in (0, NO_TESTS)]
    return failed[0] if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
