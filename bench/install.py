"""The learner's install, timed: a fresh virtual environment with the README's two set-up commands.

    python bench/install.py [--requirements requirements.txt] [--keep]

Creates a venv in a temporary folder, runs `pip install torch==2.13.0` and `pip install -r <requirements>`
in it (the README's commands; torch comes from the machine's local wheel), and prints the wall time of each
command, the venv's size on disk and the machine's load average before and after. Take the figure on an idle
machine. --requirements requirements-dev.txt gives the figure of the whole test install for comparison.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TORCH = "torch==2.13.0"


def folder_bytes(path):
    """Bytes of the regular files under `path` (links not followed)."""
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            file = Path(folder) / name
            if not file.is_symlink():
                total += file.stat().st_size
    return total


def timed(command):
    """Run `command` (a list) in ROOT -> seconds; stops with its output when it fails."""
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requirements", default="requirements.txt", help="the file the second command installs")
    parser.add_argument("--keep", action="store_true", help="keep the venv and print where it is")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    folder = Path(tempfile.mkdtemp(prefix="attention-lab-venv-"))
    try:
        venv_s = timed([sys.executable, "-m", "venv", str(folder)])
        pip = str(folder / "bin" / "pip")
        torch_s = timed([pip, "install", "-q", TORCH])
        rest_s = timed([pip, "install", "-q", "-r", args.requirements])
        size = folder_bytes(folder)
        check_s = timed([str(folder / "bin" / "python"), "-c", "import torch, streamlit, altair, pandas"])
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"venv {venv_s:.1f} s, pip install {TORCH} {torch_s:.1f} s, pip install -r {args.requirements} {rest_s:.1f} s")
    print(f"total {venv_s + torch_s + rest_s:.1f} s; venv size {size / 2**30:.2f} GiB ({size / 2**20:,.0f} MiB); "
          f"first import {check_s:.1f} s")
    print(f"load average before {load_before:.2f}, after {os.getloadavg()[0]:.2f}")
    if args.keep:
        print(f"kept: {folder}")


if __name__ == "__main__":
    main()
