"""Shared by the sandbox tests: hostile sources, tamper snapshots, a loopback listener,
a memory watch and the processes a submission may have left."""

import hashlib
import json
import os
import socket
import tempfile
import threading
import time
from pathlib import Path

import pytest

from course.app import progress
from course.common import paths
from grader.run_folders import RUN_PREFIX
from grader.sandbox import SandboxLimits, strict_problem

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = Path(__file__).parent / "hostile"
REFERENCE_EX03 = (ROOT / "solutions" / "ex03_scoring.py").read_text(encoding="utf-8")
STUB_EX03 = (ROOT / "exercises" / "ex03_scoring.py").read_text(encoding="utf-8")
# Lines only the reference has: none of them may reach a learner-facing report.
SECRET_LINES = [line.strip() for line in REFERENCE_EX03.splitlines()
                if len(line.strip()) > 25 and line.strip() not in STUB_EX03]


def require_strict():
    """Skip (or, in CI, fail) when the strict sandbox cannot run on this machine."""
    problem = strict_problem()
    if problem:
        if os.environ.get("CI") == "true" or os.environ.get("ATTENTION_LAB_REQUIRE_STRICT") == "1":
            pytest.fail(f"CI must run the strict-sandbox tests, but: {problem}")
        pytest.skip(f"strict sandbox unavailable: {problem}")


def reference(ex_file):
    """A reference solution's text (used as the learner's own, correct file)."""
    return (ROOT / "solutions" / ex_file).read_text(encoding="utf-8")


def hostile_names():
    """The hostile fixtures' names (tests/hostile/*.py without the shared _stub.py)."""
    return sorted(p.stem for p in HOSTILE.glob("*.py") if not p.stem.startswith("_"))


def hostile_source(name, port=1):
    """A hostile fixture after the shared exercise-3 stub (tests/hostile/_stub.py), with the project
    folder, progress home and listener port filled in."""
    stub = (HOSTILE / "_stub.py").read_text(encoding="utf-8")
    text = stub + "\n\n" + (HOSTILE / f"{name}.py").read_text(encoding="utf-8")
    return (text.replace("@ROOT@", str(ROOT)).replace("@HOME@", str(paths.data_home()))
            .replace("@PORT@", str(port)))


def snapshot():
    """Hashes of solutions/, grader/ and the progress file: what a learner must never change."""
    digests = {}
    for folder in ("solutions", "grader", "exercises"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digests[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    path = progress.progress_path()
    digests["progress"] = hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None
    return digests


def seed_progress():
    """Write a known progress file, so that any change to it shows."""
    progress.save_results(ROOT / "exercises", {"ex00": {"passed": False, "score": 0.0, "status": "failed",
                                                        "summary": "seeded by the test"}})


class Listener:
    """A TCP service on 127.0.0.1 that records every connection it gets."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.received = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self._record(conn)

    def _record(self, conn):
        """What one connection sent (or that it connected)."""
        with conn:
            conn.settimeout(1)
            try:
                self.received.append(conn.recv(4096) or b"<connected>")
            except OSError:
                self.received.append(b"<connected>")

    def close(self):
        """Stop, recording every connection still waiting in the backlog: one made before close() is never missed
        (call it once the processes that might connect are gone)."""
        self.stop.set()
        self.thread.join()
        self.sock.setblocking(False)
        while True:
            try:
                conn, _ = self.sock.accept()
            except BlockingIOError:
                break
            self._record(conn)
        self.sock.close()


class MemoryWatch:
    """The largest drop of the machine's available memory while it runs (MiB)."""

    def __init__(self):
        self.start = self._available()
        self.lowest = self.start
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    @staticmethod
    def _available():
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def _watch(self):
        while not self.stop.wait(0.02):  # a sample every 20 ms until stopped
            self.lowest = min(self.lowest, self._available())

    def drop_mb(self):
        self.stop.set()
        self.thread.join()
        return self.start - self.lowest


class RunFolderWatch:
    """The most bytes allocated on disk under the grader's new run folders while it runs (MiB): files
    counted once per inode, the strict sandbox's own tmpfs (a mount point) not entered. A sample every 50 ms."""

    def __init__(self):
        self.temp = Path(tempfile.gettempdir())
        self.before = {p.name for p in self.temp.glob(RUN_PREFIX + "*")}
        self.peak = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self):
        while True:
            for path in self.temp.glob(RUN_PREFIX + "*"):
                if path.name not in self.before:
                    self.peak = max(self.peak, allocated_bytes(path))
            if self.stop.wait(0.05):
                return

    def peak_mb(self):
        self.stop.set()
        self.thread.join()
        return self.peak / 2**20


def allocated_bytes(folder):
    """Bytes allocated on disk by the files under folder (each inode once, mount points not entered)."""
    total, seen = 0, set()
    for top, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not os.path.ismount(os.path.join(top, d))]
        for name in files:
            try:
                info = os.lstat(os.path.join(top, name))
            except OSError:
                continue
            if (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                total += info.st_blocks * 512
    return total


def sandbox_uid_processes(limits=SandboxLimits()):
    """Pids of live (not zombie) processes running as one of the strict sandbox's uids."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                uid = os.stat(f"/proc/{entry}").st_uid
                state = Path(f"/proc/{entry}/stat").read_text().rpartition(")")[2].split()[0]
            except (OSError, IndexError):
                continue
            if limits.uid_base <= uid < limits.uid_base + limits.uid_count and state != "Z":
                found.append(int(entry))
    return found


def processes_running(marker):
    """Pids of other processes whose command line mentions marker (a forked process keeps its parent's: the
    sandbox server's names its run folder)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(entry))
    return found


def report_text(results):
    """Everything a learner would see of a list of ExerciseResults, as one string."""
    return json.dumps([r.to_dict() for r in results], ensure_ascii=False)


def leaked_reference(text):
    """The reference lines that appear in text (should be none)."""
    return [line for line in SECRET_LINES if line in text]


def pid_running(pid):
    """Is pid a live process (not gone, not a zombie waiting to be reaped)?"""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


def pid_gone(pid, seconds=5.0):
    """True once pid has stopped running, False if it still runs after seconds."""
    deadline = time.monotonic() + seconds
    while pid_running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def leave_grandchild(marker):
    """Source a learner's module can run at import: it double-forks a grandchild that keeps the parent's pipes
    open, writes its pid to `marker` and sleeps 120 s, and waits until that pid is written."""
    return f"""
import os as _os, time as _time
if _os.fork() == 0:  # detached, holding the child's stdout and stderr
    if _os.fork() == 0:
        open({str(marker)!r}, "w").write(str(_os.getpid()))
        _time.sleep(120)
    _os._exit(0)
_os.wait()
while not _os.path.exists({str(marker)!r}):
    _time.sleep(0.01)
"""
