"""The grader's side of the sandbox: stage the learner's code, run it, collect data.

Each grading run gets a fresh temporary run directory holding a copy of the
harness (grader/harness), one job folder per exercise with a staged package
(the learner's file plus the files of the exercises it builds on: the
references, or the learner's own in strict mode) and the inputs. One
`python -I` server serves all jobs (see harness/child.py):

- `mode="process"` (self-study): a forked, rlimited child per exercise;
- `mode="strict"` (hosted classes): each job in its own bubblewrap sandbox as
  its own uid, with cgroup limits on all its processes (harness/strict.py).
  Needs root, util-linux's setpriv and bubblewrap (`strict_problem()` says
  what is missing).

Nothing from the child is trusted: which result files are taken at all, and how many bytes, is
checked before any is copied or read (harness/result_file.py `returned`); each is a JSON header and
raw tensor bytes, read and checked as hostile data (grader/untrusted_records.py: nothing in it is
unpickled or otherwise interpreted) and judged here. The deadline is kept by the
clock; the server's stdout is only read while it runs; a server that dies or
stops leaves every exercise it had not finished reported as lost. The run
directory is removed on every exit path; one left by a killed grader is
swept by the next run.
"""

import json
import os
import platform
import shutil
import signal
import stat
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from course.common.child_process import LineReader, kill_group, spawn
from course.common.exercise_index import get as get_exercise

from . import seccomp_filter, warm_server
from .harness import result_file
from .harness.result_file import RESULT_SUFFIX
from .run_folders import RUN_PREFIX, locked_folder, sweep_stale_runs
from .text import msg

HARNESS_DIR = Path(__file__).parent / "harness"
SOLUTIONS_DIR = Path(__file__).resolve().parent.parent / "solutions"
MODES = ("process", "strict")
INSTALL_LINE = "apt-get install -y bubblewrap util-linux libseccomp2"


@dataclass
class SandboxLimits:
    timeout_s: float = 20.0  # wall-clock seconds per exercise
    memory_mb: int = 2048  # process: address space a child may add; strict: all its processes together
    output_kb: int = 512  # stdout + stderr a child may print
    parallel: int = 2  # children running at once
    mode: str = "process"  # "process" (self-study) or "strict" (hosted: see the module doc)
    processes: int = 64  # strict: processes + threads of one job, all together
    files_mb: int = 64  # strict: everything one job writes (its folder and /tmp), all together
    uid_base: int = 1_750_000_000  # strict: first uid of the reserved range, one uid per running job
    uid_count: int = 1000  # strict: size of that range (no account may use these uids)
    warm: bool = False  # serve the run from this process's warm server (grader/warm_server.py)
    stall_grace_s: float = 30.0  # silence of the server beyond timeout_s + this (its start, a loaded machine) is a hang


@dataclass
class JobResult:
    """What came back from one exercise's child: data only."""

    records: list  # per call: {"ok": {...}} or {"error": {...}}; missing calls are None
    import_error: dict | None
    status: dict  # status.json; {"lost": message} when the server ended before this job
    output: str  # the first part of what the child printed


def strict_problem():
    """Why strict mode cannot run here (a sentence saying what to do), or None."""
    if platform.system() != "Linux" or platform.machine() != "x86_64":
        return f"the strict sandbox needs Linux on x86_64 (this is {platform.system()} {platform.machine()})"
    if os.geteuid() != 0:
        return ("the strict sandbox runs each exercise as its own unprivileged uid, so the grader must run "
                "as root (the class worker does); use `--sandbox process` for self-study")
    missing = [tool for tool in ("setpriv", "bwrap") if not shutil.which(tool, path="/usr/bin:/bin")]
    if missing:
        return (f"the strict sandbox needs {' and '.join(missing)} (missing from /usr/bin): "
                f"install them with `{INSTALL_LINE}`")
    if seccomp_filter.problem():
        return seccomp_filter.problem()
    try:
        if int(Path("/proc/sys/user/max_user_namespaces").read_text()) < 10:
            return "user namespaces are disabled: set the sysctl user.max_user_namespaces to 10000 or more"
    except (OSError, ValueError):
        pass
    return None


def stage_job(job_dir, ex_id, learner_source, learner_name, dependencies=None):
    """Lay out the package `learner` for one exercise in job_dir.

    dependencies: {ex_id: source} for the exercises it builds on, or None for the references.
    """
    exercise = get_exercise(ex_id)
    package = Path(job_dir) / "learner"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""Staged for grading."""\n')
    for dep in exercise.needs:
        dep_file = get_exercise(dep).filename
        if dependencies is None:
            shutil.copyfile(SOLUTIONS_DIR / dep_file, package / dep_file)
        else:
            (package / dep_file).write_text(dependencies[dep], encoding="utf-8")
    (package / exercise.filename).write_text(learner_source, encoding="utf-8")
    (Path(job_dir) / "results").mkdir()
    (Path(job_dir) / "learner_name.txt").write_text(learner_name)


def _read_text(path, limit):
    """The first `limit` characters of a regular file (never a FIFO or a link), decoded leniently."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        return os.read(fd, limit).decode("utf-8", errors="replace")
    finally:
        os.close(fd)


def collect(job_dir, num_calls, lost=None, max_bytes=64 * 2**20, server_lost=False):
    """Read back everything a job's child left (`lost`: why the server never finished it; server_lost: the warm
    server itself died, which the status of a job it never finished says as "server_lost": True).

    Result files are hostile data (grader/untrusted_records.py); which of them are read at all, and how
    large all of one job's together may be (max_bytes), is result_file.returned's rule, applied again
    here: a strict job's results were refused before they left its box (its status says why), a
    process-mode job's are refused here."""
    from . import untrusted_records  # (torch: imported where it is needed, so the CLI starts its sandbox first)

    job_dir = Path(job_dir)
    status_path = job_dir / "status.json"
    if not status_path.exists():
        status = {"lost": lost or msg("lost.never_ran")}
        return JobResult([None] * num_calls, None, dict(status, server_lost=True) if server_lost else status, "")
    try:
        status = json.loads(_read_text(status_path, 4096))
    except (ValueError, RecursionError):
        status = None
    if not isinstance(status, dict):
        status = {"sandbox_error": "the job's status could not be read"}
    output = _read_text(job_dir / "output.txt", 4000)
    sizes, refusal = _returned(job_dir / "results", max_bytes)
    reason = untrusted_records.refused(status.get("results_refused") or refusal)
    if reason:
        return JobResult([untrusted_records.rejected(reason) for _ in range(num_calls)], None, status, output)

    def load(name):
        if name not in sizes:
            return None
        return untrusted_records.read_record(job_dir / "results" / name, sizes[name])

    imported = load("import" + RESULT_SUFFIX)  # an error record, or a forged one of another form
    import_error = imported and (imported.get("error") or untrusted_records.rejected(
        msg("result.record", what="ok"))["error"])
    records = [load(f"{i}{RESULT_SUFFIX}") for i in range(num_calls)]
    return JobResult(records, import_error, status, output)


def _returned(results, max_bytes):
    """({name: size} of the result files a results folder may give, refusal or None): result_file.returned."""
    try:
        fd = os.open(results, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return {}, None
    try:
        taken, refusal = result_file.returned(fd, max_bytes)
    finally:
        os.close(fd)
    return dict(taken), refusal


def run_jobs(jobs, limits, on_done=None):
    """Run jobs {name: (ex_id, learner_source, learner_name, module, calls, dependencies)}.

    Returns {name: JobResult}. `on_done(name)` is called as each job ends.
    """
    if limits.mode not in MODES:
        raise ValueError(f"unknown sandbox mode {limits.mode!r}; use one of {', '.join(MODES)}")
    if limits.mode == "strict" and strict_problem():
        raise RuntimeError(strict_problem())
    import torch

    sweep_stale_runs()
    run_dir, lock = locked_folder(RUN_PREFIX)
    try:
        if not limits.warm:
            shutil.copytree(HARNESS_DIR, run_dir / "_harness", ignore=shutil.ignore_patterns("__pycache__"))
        for name, (ex_id, source, learner_name, module, calls, deps) in jobs.items():
            job_dir = run_dir / name
            stage_job(job_dir, ex_id, source, learner_name, deps)
            torch.save({"module": module, "calls": calls}, job_dir / "input.pt")
            if limits.mode == "strict":  # the sandbox uid passes through to its box, and sees nothing else
                job_dir.chmod(0o711)
                (job_dir / "learner").chmod(0o700)
        if limits.mode == "strict":
            run_dir.chmod(0o711)
            (run_dir / "seccomp.bpf").write_bytes(seccomp_filter.program())
        plan = {"jobs": list(jobs), "mode": limits.mode, "timeout_s": limits.timeout_s,
                "memory_mb": limits.memory_mb, "output_kb": limits.output_kb, "parallel": limits.parallel,
                "processes": limits.processes, "files_mb": limits.files_mb,
                "uid_base": limits.uid_base, "uid_count": limits.uid_count}
        (run_dir / "plan.json").write_text(json.dumps(plan))
        if limits.warm:
            deadline = time.monotonic() + 60 + limits.timeout_s * (len(jobs) / max(limits.parallel, 1) + 1)
            _, anomaly = warm_server.serve_run(limits.mode, run_dir, deadline, limits.timeout_s + limits.stall_grace_s, on_done,
                                               HARNESS_DIR, RUN_PREFIX)
            lost = anomaly and _warm_lost(anomaly)
            server_lost = bool(anomaly and anomaly.get("server"))  # the warm server itself died under the run
        else:
            (_, lost), server_lost = _serve(run_dir, limits, len(jobs), on_done), False
        max_bytes = limits.files_mb * 2**20  # a job's tmpfs in strict mode; the same bound in process mode
        return {name: collect(run_dir / name, len(spec[4]), lost, max_bytes, server_lost)
                for name, spec in jobs.items()}
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
        os.close(lock)


def _serve(run_dir, limits, num_jobs, on_done):
    """Run the sandbox server; follow its `done` lines by the clock -> (finished jobs, why others were lost)."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); "
        "from _harness.child import serve; serve(sys.argv[1])"
    )
    command = [sys.executable, "-I", "-c", code, str(run_dir)]
    env = {"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "PYTHONDONTWRITEBYTECODE": "1", "HOME": str(run_dir)}
    start = time.monotonic()
    deadline = start + 60 + limits.timeout_s * (num_jobs / max(limits.parallel, 1) + 1)
    stall_s = limits.timeout_s + limits.stall_grace_s  # no job may run longer than timeout_s: longer silence is a hang
    finished, last, hung = set(), start, False  # finished: for on_done only; status.json decides

    def saw(line):
        nonlocal last
        name = _done_name(line)
        if name is not None:
            finished.add(name)
            last = time.monotonic()
            if on_done:
                on_done(name)

    with open(run_dir / "server-stderr.txt", "wb") as errors:
        server = spawn(command, cwd=run_dir, env=env, stdout=subprocess.PIPE, stderr=errors)
    try:
        reader = LineReader(server.stdout, server)  # ends at its exit: a learner may hold the pipe open
        while (line := reader.readline(min(deadline, last + stall_s))) is not None:
            saw(line)
        hung = not reader.ended
        if not hung:
            saw(reader.rest())  # a last line it printed without its newline
    finally:
        kill_group(server)
    return finished, lost_reason(server.returncode, hung, time.monotonic() - last, run_dir)


def _warm_lost(anomaly):
    """Why a warm server's run lost its unfinished jobs, in one sentence for the report."""
    if "hung" in anomaly:
        return msg("lost.hung", seconds=anomaly["hung"])
    if "signal" in anomaly:
        return msg("lost.killed", signal=signal.Signals(anomaly["signal"]).name)
    return msg("lost.failed", code=anomaly["code"], detail=anomaly["detail"])


def _done_name(line):
    """The job name of a server line `done <name>`, else None."""
    words = line.split()
    return words[1].decode(errors="replace") if line.startswith(b"done ") and len(words) == 2 else None


def lost_reason(returncode, hung, silent_s, run_dir):
    """Why the sandbox's server did not finish every job, in one sentence for the report (a catalog key and its
    fields, or None when it exited cleanly): it hung (silent for silent_s), a signal killed it, or it failed with
    returncode (the last line of run_dir's server-stderr.txt)."""
    if hung:
        return msg("lost.hung", seconds=f"{silent_s:.0f}")
    if returncode == 0:
        return None
    if returncode is not None and returncode < 0:
        name = signal.Signals(-returncode).name
        return msg("lost.killed", signal=name)
    tail = (run_dir / "server-stderr.txt").read_text(errors="replace")[-600:].strip()
    return msg("lost.failed", code=returncode, detail=f": {tail.splitlines()[-1]}" if tail else "")
