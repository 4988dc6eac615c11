"""The grader's side of the warm server (harness/warm.py): start it once, send it runs, recycle it.

`SandboxLimits(warm=True)` makes run_jobs hand its run directory to this
process's warm server of that mode instead of starting an interpreter per
run, so a job pays its sandbox (strict) or a fork (process) instead of a
Python start and a torch import. The server holds no learner data and no
reference; each run is served by a forked manager that ends with it.

A server is recycled (killed with everything in its session, and a fresh one
started for the next run) after MAX_RUNS runs and on any anomaly: it died, a
run's manager did not end cleanly, a line it printed is not one it may
print, or a run went past its deadline.
"""

import atexit
import os
import shutil
import subprocess
import sys
import threading
import time

from course.common.child_process import LineReader, kill_group, spawn

from .run_folders import locked_folder

MAX_RUNS = 200  # runs one server serves before a fresh one replaces it
START_S = 120.0  # a server that does not say `ready` within this is given up
_servers, _lock = {}, threading.Lock()  # mode -> WarmServer of this process; one run at a time


class ServerFailed(RuntimeError):
    """The warm server could not be started."""


class WarmServer:
    """One warm server process and its folder (the harness, and in strict mode its bound runtime)."""

    def __init__(self, mode, harness_dir, prefix):
        self.mode, self.runs, self.proc = mode, 0, None
        self.dir, self.lock = locked_folder(prefix + "warm-")  # sweep_stale_runs leaves a live server's folder alone
        try:
            shutil.copytree(harness_dir, self.dir / "_harness", ignore=shutil.ignore_patterns("__pycache__"))
            self.dir.chmod(0o711)
            code = ("import sys; sys.path.insert(0, sys.argv[1]); "
                    "from _harness.warm import serve_warm; serve_warm(sys.argv[1], sys.argv[2])")
            env = {"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                   "PYTHONDONTWRITEBYTECODE": "1", "HOME": str(self.dir)}
            with open(self.dir / "server-stderr.txt", "wb") as errors:
                self.proc = spawn([sys.executable, "-I", "-c", code, str(self.dir), mode], cwd=self.dir, env=env,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors)
            self.reader = LineReader(self.proc.stdout, self.proc)
            line = self.next_line(time.monotonic() + START_S)
            if line != "ready":
                raise ServerFailed(f"the warm sandbox server did not start ({line or 'no answer'}): {self.stderr_tail()}")
        except BaseException:
            self.close()
            raise

    def stderr_tail(self):
        """The last line the server wrote on stderr."""
        try:
            tail = (self.dir / "server-stderr.txt").read_text(errors="replace").strip()
        except OSError:
            return ""
        return tail.splitlines()[-1][-300:] if tail else ""

    def next_line(self, deadline):
        """The next line the server prints (every answer, `ready`, `pong`, `done NAME`, `end CODE`, is read
        here), None at its exit or at the deadline."""
        line = self.reader.readline(deadline)
        return None if line is None else line.decode(errors="replace")

    def alive(self, wait_s=10.0):
        """Does the server answer a ping (it may have died since its last run)?"""
        if self.proc.poll() is not None:
            return False
        try:
            self.proc.stdin.write(b"ping\n")
            self.proc.stdin.flush()
        except OSError:
            return False
        return self.next_line(time.monotonic() + wait_s) == "pong"

    def run(self, run_dir, deadline, stall_s, on_done):
        """Serve one run directory -> (finished job names, anomaly or None).

        An anomaly ({"hung": seconds}, {"signal": number} or {"code": exit code, "detail": text}) means the server must be
        recycled; the jobs it did not finish are lost. It holds "server": True when the server process itself died or
        was gone (the sandbox's infrastructure failed: a learner's code cannot reach it from a strict box), rather than
        the run's manager ending badly (`end` with a signal or a code: what a learner's code may cause)."""
        self.runs += 1
        try:
            self.proc.stdin.write(f"run {run_dir}\n".encode())
            self.proc.stdin.flush()
        except OSError:
            return set(), {"code": self.proc.poll(), "detail": ": the warm sandbox server was gone", "server": True}
        finished, last = set(), time.monotonic()
        while True:
            line = self.next_line(min(deadline, last + stall_s))
            if line is None:
                if self.proc.poll() is not None:  # the server itself ended, not a run's manager
                    tail, code = self.stderr_tail(), self.proc.returncode
                    if code < 0:
                        return finished, {"signal": -code, "server": True}
                    return finished, {"code": code, "detail": f": {tail}" if tail else "", "server": True}
                return finished, {"hung": round(time.monotonic() - last)}
            words = line.split()
            if len(words) == 2 and words[0] == "done":
                finished.add(words[1])
                last = time.monotonic()
                if on_done:
                    on_done(words[1])
            elif len(words) == 2 and words[0] == "end":
                code = int(words[1]) if words[1].lstrip("-").isdigit() else words[1]
                if code == 0:
                    return finished, None
                return finished, {"signal": -code} if isinstance(code, int) and code < 0 else {"code": code, "detail": ""}
            else:
                return finished, {"code": "?", "detail": ": the warm sandbox server printed an unexpected line"}

    def close(self):
        """Kill the server and everything in its session; remove its folder."""
        if self.proc is not None:
            kill_group(self.proc)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.close(self.lock)


def serve_run(mode, run_dir, deadline, stall_s, on_done, harness_dir, prefix):
    """Serve run_dir on this process's warm server of `mode` (started or recycled as needed)
    -> (finished job names, why the others were lost or None)."""
    with _lock:
        server = _servers.get(mode)
        if server is not None and (server.runs >= MAX_RUNS or not server.alive()):
            recycle(mode)
            server = None
        if server is None:
            server = _servers[mode] = WarmServer(mode, harness_dir, prefix)
        finished, anomaly = server.run(run_dir, deadline, stall_s, on_done)
        if anomaly:
            recycle(mode)
        return finished, anomaly


def prestart(mode, harness_dir, prefix):
    """Start this process's warm server of `mode` in a thread of its own, so that its interpreter start and
    torch import overlap the caller's (the CLI's own torch import, checks and references); the first
    serve_run waits for it. A server that fails to start here is started again, and its failure reported,
    by that serve_run."""
    _lock.acquire()  # held until the server is up: serve_run takes the lock after it
    if mode in _servers:
        _lock.release()
        return

    def start():
        try:
            _servers[mode] = WarmServer(mode, harness_dir, prefix)
        except Exception:
            pass
        finally:
            _lock.release()

    threading.Thread(target=start, name=f"warm-{mode}-start", daemon=True).start()


def recycle(mode=None):
    """End this process's warm server of `mode` (of every mode by default); the next run starts a fresh one."""
    for key in [mode] if mode else list(_servers):
        server = _servers.pop(key, None)
        if server is not None:
            server.close()


def server_pid(mode):
    """The pid of this process's warm server of `mode`, or None (for tests and the bench)."""
    server = _servers.get(mode)
    return server.proc.pid if server is not None and server.proc.poll() is None else None


atexit.register(recycle)
