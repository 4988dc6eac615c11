"""Run one piece of judging in a forked process of its own, under a deadline and a memory bound.

The learner's results are checked before judging (grader/untrusted_records.py), but a
property check or a comparison may still meet data it handles badly. Judging
one exercise therefore runs in a fork of the grader: it gets an address-space
limit and a wall-clock deadline, its temporary files go to a folder removed
afterwards, and only JSON comes back. Whatever happens in it (an exception, a
hang, a memory blow-up, a crash), the grader itself goes on.
"""

import json
import os
import resource
import select
import shutil
import signal
import tempfile
import time

MAX_REPLY = 16 * 2**20  # bytes of JSON one judging may send back


def _vm_bytes():
    """This process's current virtual memory size."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _child(fn, write_fd, scratch, memory_mb):
    """In the fork: bound memory, run fn, send {"ok": data} or {"raised": text}; never returns."""
    code = 0
    try:
        tempfile.tempdir = scratch
        try:
            limit = _vm_bytes() + memory_mb * 2**20
            resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
        except (OSError, ValueError):
            pass  # no /proc (not Linux): the deadline still holds
        try:
            payload = {"ok": fn()}
        except MemoryError:
            payload = {"memory": True}
        except BaseException as err:
            payload = {"raised": f"{type(err).__name__}: {err}"[:500]}
        data = json.dumps(payload, ensure_ascii=False).encode()
        view = memoryview(data)
        while view:
            view = view[os.write(write_fd, view):]
    except BaseException:
        code = 1
    os._exit(code)


def run(fn, timeout_s, memory_mb):
    """fn() in a fork -> ("ok", its JSON data) | ("timeout", None) | ("memory", None) | ("failed", why)."""
    scratch = tempfile.mkdtemp(prefix="attention-lab-judge-")
    read_fd, write_fd = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_fd)
        os.close(write_fd)
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    if pid == 0:
        os.close(read_fd)
        _child(fn, write_fd, scratch, memory_mb)
    os.close(write_fd)
    chunks, size, outcome = [], 0, None
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                outcome = ("timeout", None)
                break
            ready, _, _ = select.select([read_fd], [], [], min(left, 1.0))
            if not ready:
                continue
            chunk = os.read(read_fd, 1 << 20)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_REPLY:
                outcome = ("failed", "the verdict was too large")
                break
            chunks.append(chunk)
    finally:
        os.close(read_fd)
        if outcome is not None:
            _kill(pid)
        _, status = os.waitpid(pid, 0)
        shutil.rmtree(scratch, ignore_errors=True)
    if outcome is not None:
        return outcome
    try:
        payload = json.loads(b"".join(chunks))
    except ValueError:
        died = signal.Signals(os.WTERMSIG(status)).name if os.WIFSIGNALED(status) else f"exit {os.WEXITSTATUS(status)}"
        return ("memory", None) if died == "SIGKILL" else ("failed", f"the judging process ended ({died})")
    if "ok" in payload:
        return "ok", payload["ok"]
    if payload.get("memory"):
        return "memory", None
    return "failed", payload.get("raised", "?")


def _kill(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
