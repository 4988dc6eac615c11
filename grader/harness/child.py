"""The sandbox side of grading: runs learner code, reports data, never verdicts.

The grader copies this package into a fresh run directory beside one job
folder per exercise and starts `serve(run_dir)` in a new Python process
(`python -I`, so neither the project nor `solutions/` is on its path). The
server imports torch once, then forks one child per exercise.

- process mode: each child gets resource limits, its own process group and an
  output file, imports the staged `learner` package of its job, runs the
  requested procedures and saves each result as `results/<i>.result` (result_file.py). The server
  is a child subreaper: a process the learner detaches (double fork, setsid)
  comes back to it and is killed; it kills every process it still has before
  it exits.
- strict mode (jail.py): each child enters its own bubblewrap sandbox as its
  own uid and forks the learner's process there; results are copied out of
  the job's box only after that sandbox's pid namespace is gone.

The server writes `status.json` per job (exit code / signal / timed out) and
prints `done <job>` on its stdout, which only the grader holds.

Run-directory layout:
    _harness/            this package
    plan.json            {"jobs", "mode", "timeout_s", "memory_mb", "output_kb", "parallel", ...}
    <job>/learner/       the staged package: the learner's file and the files it needs
    <job>/input.pt       {"module": learner module name, "calls": [{"procedure", "spec"}]}
    <job>/results/       <i>.result per call, import.result when the import failed (result_file.py)
    <job>/output.txt     the child's stdout and stderr, capped by RLIMIT_FSIZE
    <job>/status.json    exit code / signal / timed out, written by the server
    <job>/box/           strict mode: the job's tmpfs (seen as /job in its sandbox)
"""

import ctypes
import json
import os
import resource
import signal
import sys
import time
import traceback

from . import result_file
from .result_file import RESULT_SUFFIX

LEARNER_PACKAGE = "learner"
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36
LIBC_PRCTL = ctypes.CDLL(None, use_errno=True).prctl


def _vm_bytes():
    """This process's current virtual memory size."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _limit_self(plan, out_path):
    """Apply the sandbox limits to the current (forked) process; stdout/stderr go to out_path."""
    os.setpgid(0, 0)
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # Python ignores it; we want the kill
    memory = _vm_bytes() + plan["memory_mb"] * 2**20
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]  # strict mode's supervisor set one already
    resource.setrlimit(resource.RLIMIT_AS, (min(memory, hard) if hard != resource.RLIM_INFINITY else memory,) * 2)
    cpu = int(plan["timeout_s"]) + 2
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # Every file the child writes is capped: a print flood dies of SIGXFSZ.
    cap = max(plan["output_kb"] * 1024, plan.get("result_mb", 16) * 2**20)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    resource.setrlimit(resource.RLIMIT_FSIZE, (cap, cap))


def _learner_frames(tb, learner_dir):
    """The traceback frames that are in the learner's own files."""
    frames = traceback.extract_tb(tb)
    return [f for f in frames if os.path.abspath(f.filename).startswith(learner_dir + os.sep)]


def describe_error(err, learner_dir):
    """Plain data about an exception raised while running learner code."""
    frames = _learner_frames(err.__traceback__, learner_dir)
    kind = "exception"
    if isinstance(err, NotImplementedError):
        kind = "not_implemented"
    elif isinstance(err, SystemExit):
        kind = "exit"
    elif isinstance(err, MemoryError) or "can't allocate memory" in str(err):
        kind = "memory"
    where = None
    if frames:
        last = frames[-1]
        where = {
            "file": os.path.basename(last.filename),
            "line": last.lineno,
            "function": last.name,
            "code": (last.line or "").strip(),
        }
    if isinstance(err, SyntaxError) and err.filename:
        where = {
            "file": os.path.basename(err.filename),
            "line": err.lineno,
            "function": None,
            "code": (err.text or "").strip(),
        }
    message = err.msg if isinstance(err, SyntaxError) else str(err)
    return {
        "kind": kind,
        "type": type(err).__name__,
        "message": message[:2000],
        "where": where,
        "traceback": "".join(traceback.format_list(frames))[-4000:],
    }


def _save(obj, path):
    """Write a record as a result file (result_file.py: JSON and raw tensor bytes, nothing to unpickle)."""
    result_file.write(obj, path)


def _clean(value):
    """Plain tensors only (no subclasses, no grad), so that result_file can write their bytes."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().as_subclass(torch.Tensor).clone()
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    return f"<{type(value).__name__}>"


def run_job(job_dir):
    """In the forked child: import the learner's module and run every call."""
    import importlib

    import torch
    from _harness import load_procedures, seed_call

    PROCEDURES = load_procedures()

    torch.set_num_threads(1)
    results_dir = os.path.join(job_dir, "results")
    os.makedirs(results_dir, exist_ok=True)
    learner_dir = os.path.abspath(os.path.join(job_dir, LEARNER_PACKAGE))
    sys.path.insert(0, job_dir)
    job = torch.load(os.path.join(job_dir, "input.pt"), weights_only=True)
    try:
        importlib.import_module(f"{LEARNER_PACKAGE}.{job['module']}")
    except BaseException as err:  # SyntaxError, sys.exit at import, anything
        _save({"error": describe_error(err, learner_dir)}, os.path.join(results_dir, "import" + RESULT_SUFFIX))
        return

    def modules(name):
        return importlib.import_module(f"{LEARNER_PACKAGE}.{name}")

    for i, call in enumerate(job["calls"]):
        seed_call(i)
        try:
            out = PROCEDURES[call["procedure"]](modules, call["spec"])
            record = {"ok": {k: _clean(v) for k, v in out.items()}}
        except BaseException as err:  # the learner's failure is data for the parent
            record = {"error": describe_error(err, learner_dir)}
        sys.stdout.flush()
        _save(record, os.path.join(results_dir, f"{i}{RESULT_SUFFIX}"))


def _close_fds(keep=()):
    """Close every inherited descriptor above stderr except `keep`."""
    low = 3
    for fd in sorted(keep):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 16)


def _fork_job(plan, job):
    """Fork one process-mode child for a job; the child never returns."""
    job_dir = os.path.join(plan["run_dir"], job)
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            LIBC_PRCTL(PR_SET_PDEATHSIG, signal.SIGKILL)  # a killed server takes its children along
            _close_fds()
            _limit_self(plan, os.path.join(job_dir, "output.txt"))
            run_job(job_dir)
        except BaseException:
            code = 3
            _print_exc()
        finally:
            _exit(code)
    return pid


def _print_exc():
    """Print the current exception to the (capped) output, never raising."""
    try:
        traceback.print_exc()
    except BaseException:
        pass


def _exit(code):
    """Flush and leave without running any cleanup inherited from the server."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass
    os._exit(code)


def _write_status(plan, job, status):
    """Record how a job's child ended."""
    path = os.path.join(plan["run_dir"], job, "status.json")
    with open(path + ".tmp", "w") as f:
        json.dump(status, f)
    os.replace(path + ".tmp", path)


def _ended(wait_status, start):
    """status.json fields for a child's wait status."""
    status = {"timed_out": False, "elapsed_s": time.monotonic() - start}
    if os.WIFSIGNALED(wait_status):
        status["signal"] = signal.Signals(os.WTERMSIG(wait_status)).name
    else:
        status["exit_code"] = os.WEXITSTATUS(wait_status)
    return status


def serve(run_dir, prepared=None):
    """Run every job of the plan, `parallel` at a time, each in its own child (see the module doc);
    `prepared`: a warm server's strict set-up (harness/warm.py)."""
    with open(os.path.join(run_dir, "plan.json")) as f:
        plan = json.load(f)
    plan["run_dir"] = run_dir
    import torch  # noqa: F401  (imported once here, shared by every fork)
    from _harness import load_procedures

    load_procedures()
    if plan.get("mode") == "strict":
        from _harness.strict import serve_strict

        return serve_strict(plan, prepared)
    LIBC_PRCTL(PR_SET_CHILD_SUBREAPER, 1)
    pending = list(plan["jobs"])
    running = {}  # pid -> (job, start time)
    try:
        while pending or running:
            while pending and len(running) < plan["parallel"]:
                job = pending.pop(0)
                running[_fork_job(plan, job)] = (job, time.monotonic())
            pid, wait_status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                _kill_orphans(running)
                now = time.monotonic()
                for child, (job, start) in list(running.items()):
                    if now - start > plan["timeout_s"]:
                        _kill_group(child)
                        os.waitpid(child, 0)
                        del running[child]
                        _write_status(plan, job, {"timed_out": True, "elapsed_s": now - start})
                        print(f"done {job}", flush=True)
                time.sleep(0.01)
                continue
            if pid not in running:
                continue  # an orphan the learner left, reaped
            job, start = running.pop(pid)
            _kill_group(pid)  # anything the child left behind
            _write_status(plan, job, _ended(wait_status, start))
            print(f"done {job}", flush=True)
    finally:
        _kill_orphans({})


def _children():
    """Pids of this process's children (orphans re-parented to it included)."""
    found = []
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/children") as f:
                found += [int(p) for p in f.read().split()]
        except OSError:
            pass
    return found


def _kill_orphans(running):
    """SIGKILL every child that is not a running job's (a detached learner process) and reap it."""
    for pid in _children():
        if pid not in running:
            _kill_group(pid)
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
            except ProcessLookupError:
                pass


def _kill_group(pid):
    """SIGKILL a child's whole process group, ignoring ones already gone."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
