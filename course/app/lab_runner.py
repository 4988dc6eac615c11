"""Train one training-lab run in a child process: start it, read its progress, stop it, collect the run.

The page never trains in the Streamlit process. `start(config, variant)` runs
`python -m course.lessons.training_lab --live ...` in its own session; the child
writes a progress file a few times a second and its run dict at the end, and
finishes early (with what it has) once the stop file exists.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from course.common.paths import PROJECT_ROOT

TIMEOUT_S = 600  # a run of the default size ends in about a minute; this only catches a stuck child


class LabRunError(RuntimeError):
    """The child ended without a run; the message says why."""


@dataclass
class LiveRun:
    process: subprocess.Popen  # the training child
    folder: Path  # its progress, stop, run and stderr files
    started: float  # time.monotonic() at start
    label: tuple  # (task, variant, seed) being trained

    def file(self, name):
        """Path of one of the run's files."""
        return self.folder / name


def start(config, variant):
    """Start training `config` (a LabConfig) in a child; the LiveRun handle."""
    folder = Path(tempfile.mkdtemp(prefix="attention-lab-train-"))
    command = [sys.executable, "-m", "course.lessons.training_lab", "--live", json.dumps(asdict(config)),
               "--variant", variant, "--out", str(folder / "run.json"), "--progress", str(folder / "progress.json"),
               "--stop", str(folder / "stop")]
    env = dict(os.environ, OMP_NUM_THREADS=str(config.threads), MKL_NUM_THREADS=str(config.threads))
    with open(folder / "stderr.txt", "wb") as err:
        process = subprocess.Popen(command, cwd=PROJECT_ROOT, env=env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    return LiveRun(process, folder, time.monotonic(), (config.task, variant, config.seed))


def _read_json(path):
    """The JSON in path, or None while it does not exist yet."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None


def progress(live):
    """{"step", "steps", "loss", "tests"} last written by the child, or None before its first step."""
    return _read_json(live.file("progress.json"))


def request_stop(live):
    """Ask the child to stop after its current step (it still writes the run so far)."""
    live.file("stop").touch()


def result(live):
    """The finished run dict, or None while the child trains; LabRunError if it ended without one."""
    if live.process.poll() is None:
        if time.monotonic() - live.started > TIMEOUT_S:
            kill(live)
            raise LabRunError(f"training took longer than {TIMEOUT_S} s and was stopped")
        return None
    run = _read_json(live.file("run.json"))
    if run is None:
        lines = live.file("stderr.txt").read_text(encoding="utf-8", errors="replace").strip().splitlines()
        raise LabRunError(f"training ended (exit code {live.process.returncode}) without a result: "
                          f"{(lines or ['no output'])[-1][:300]}")
    shutil.rmtree(live.folder, ignore_errors=True)
    return run


def kill(live):
    """Kill the child and anything it started, and remove its files."""
    try:
        os.killpg(live.process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    live.process.wait()
    shutil.rmtree(live.folder, ignore_errors=True)
