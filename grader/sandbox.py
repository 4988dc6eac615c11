"""The grader's side of the sandbox: stage the learner's code, run it, collect data.

Each grading run gets a fresh temporary run directory holding a copy of the
harness (grader/harness), one job folder per exercise with a staged package
(the learner's file plus the reference files of the exercises it builds on)
and the inputs. One `python -I` process serves all jobs, forking a limited
child per exercise (see harness/child.py). Nothing from the child is trusted:
results are loaded with `torch.load(weights_only=True)` and judged here.

A hosted class can wrap the server command (`SandboxLimits.wrapper`) in an
unprivileged, network-less container that mounts only the run directory:
the child needs nothing else from the project.
"""

import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from course.common.exercise_index import get as get_exercise

HARNESS_DIR = Path(__file__).parent / "harness"
SOLUTIONS_DIR = Path(__file__).resolve().parent.parent / "solutions"


@dataclass
class SandboxLimits:
    timeout_s: float = 20.0  # wall-clock seconds per exercise
    memory_mb: int = 2048  # address space a child may add beyond the server's
    output_kb: int = 512  # stdout + stderr a child may print
    parallel: int = 2  # children running at once
    wrapper: list = field(default_factory=list)  # e.g. ["bwrap", ...] for a hosted sandbox


@dataclass
class JobResult:
    """What came back from one exercise's child: data only."""

    records: list  # per call: {"ok": {...}} or {"error": {...}}; missing calls are None
    import_error: dict | None
    status: dict
    output: str  # the first part of what the child printed


def stage_job(job_dir, ex_id, learner_source, learner_name):
    """Lay out the package `learner` for one exercise in job_dir."""
    exercise = get_exercise(ex_id)
    package = Path(job_dir) / "learner"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""Staged for grading."""\n')
    for dep in exercise.needs:
        dep_file = get_exercise(dep).filename
        shutil.copyfile(SOLUTIONS_DIR / dep_file, package / dep_file)
    (package / exercise.filename).write_text(learner_source, encoding="utf-8")
    (Path(job_dir) / "results").mkdir()
    (Path(job_dir) / "learner_name.txt").write_text(learner_name)


def _read_text(path, limit):
    """The first `limit` characters of a file, decoded leniently."""
    try:
        with open(path, "rb") as f:
            return f.read(limit).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def _load_record(path):
    """One result file, or an error record if it cannot be read safely."""
    try:
        return torch.load(path, weights_only=True)
    except Exception as err:  # a result the child could not write cleanly
        return {"error": {"kind": "unreadable", "type": type(err).__name__,
                          "message": f"the result could not be read back: {err}",
                          "where": None, "traceback": ""}}


def collect(job_dir, num_calls):
    """Read back everything a job's child left."""
    job_dir = Path(job_dir)
    status_path = job_dir / "status.json"
    status = json.loads(status_path.read_text()) if status_path.exists() else {"missing": True}
    import_path = job_dir / "results" / "import.pt"
    import_error = _load_record(import_path)["error"] if import_path.exists() else None
    records = []
    for i in range(num_calls):
        path = job_dir / "results" / f"{i}.pt"
        records.append(_load_record(path) if path.exists() else None)
    return JobResult(records, import_error, status, _read_text(job_dir / "output.txt", 4000))


def run_jobs(jobs, limits, on_done=None):
    """Run jobs {name: (ex_id, learner_source, learner_name, module, calls)}.

    Returns {name: JobResult}. `on_done(name)` is called as each job ends.
    """
    run_dir = Path(tempfile.mkdtemp(prefix="attention-lab-grade-"))
    try:
        shutil.copytree(HARNESS_DIR, run_dir / "_harness", ignore=shutil.ignore_patterns("__pycache__"))
        for name, (ex_id, source, learner_name, module, calls) in jobs.items():
            job_dir = run_dir / name
            stage_job(job_dir, ex_id, source, learner_name)
            torch.save({"module": module, "calls": calls}, job_dir / "input.pt")
        plan = {
            "jobs": list(jobs),
            "timeout_s": limits.timeout_s,
            "memory_mb": limits.memory_mb,
            "output_kb": limits.output_kb,
            "parallel": limits.parallel,
        }
        (run_dir / "plan.json").write_text(json.dumps(plan))
        _serve(run_dir, limits, len(jobs), on_done)
        return {
            name: collect(run_dir / name, len(spec[4])) for name, spec in jobs.items()
        }
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def _serve(run_dir, limits, num_jobs, on_done):
    """Start the sandbox server and follow its progress lines."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); "
        "from _harness.child import serve; serve(sys.argv[1])"
    )
    command = list(limits.wrapper) + [sys.executable, "-I", "-c", code, str(run_dir)]
    env = {"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "PYTHONDONTWRITEBYTECODE": "1", "HOME": str(run_dir)}
    deadline = time.monotonic() + 60 + limits.timeout_s * (num_jobs / max(limits.parallel, 1) + 1)
    with subprocess.Popen(command, cwd=run_dir, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as server:
        for line in server.stdout:
            if line.startswith("done ") and on_done:
                on_done(line.split()[1])
            if time.monotonic() > deadline:
                server.kill()
                break
        server.wait()
        errors = server.stderr.read()
    if server.returncode != 0:
        raise RuntimeError(f"the grading sandbox failed to run (exit {server.returncode}):\n{errors[-2000:]}")
