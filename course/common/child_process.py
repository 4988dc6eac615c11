"""Children in sessions of their own: start one, read its pipe by a deadline, kill its whole process group.

Every place that runs learner code, or a program that runs learner code, in a
child process uses these three, so the rules that guard the sandbox live here
once:

- `spawn` starts the child as the leader of a new session. Everything it
  starts stays in its process group unless it leaves with setsid or setpgid
  (the sandbox's server, a child subreaper, kills those itself: see
  grader/harness/child.py).
- `LineReader` reads the child's pipe without ever blocking: each read waits
  at most until a deadline, and, given the child, ends once the child has
  exited and what it wrote has been read. A detached grandchild that keeps
  the pipe open (so that no end of file comes), or keeps writing to it,
  cannot hold a reader past the exit of the child it watches.
- `kill_group` sends SIGKILL to the whole group (the child and whatever is
  left of what it started), then reaps the child and closes our ends of its
  pipes.

Imports nothing from the project: course.app and the grader both use it.
"""

import collections
import os
import select
import signal
import subprocess
import time

POLL_S = 0.2  # while the pipe is quiet, how often a reader looks at the child and the clock
MAX_READ = 1 << 20  # one read: at least a whole pipe's capacity (64 KiB by default, 1 MiB at most unless raised)


def spawn(command, *, stdin=None, stdout=None, stderr=None, env=None, cwd=None, pass_fds=()):
    """Start command as the leader of a new session (stdin closed unless given) -> its Popen (byte pipes)."""
    return subprocess.Popen(command, stdin=subprocess.DEVNULL if stdin is None else stdin, stdout=stdout,
                            stderr=stderr, env=env, cwd=cwd, pass_fds=tuple(pass_fds), start_new_session=True)


class LineReader:
    """Lines from a child's pipe, read without blocking; a partial line waits for its newline."""

    def __init__(self, pipe, process=None):
        """pipe: the read end (a file object or a descriptor); process: the child writing it, if the end
        should come when it exits (see readline)."""
        self.fd = pipe if isinstance(pipe, int) else pipe.fileno()
        self.process = process
        self.lines = collections.deque()  # complete lines read and not yet returned
        self.buffer = b""  # the partial line after them
        self.at_eof = False  # the pipe gave end of file
        self.ended = False  # nothing more will be read: end of file (and, given a process, it has exited)
        os.set_blocking(self.fd, False)

    def readline(self, deadline):
        """The next line (bytes, without its newline), or None at the deadline (a time.monotonic() value) or at
        the end (then self.ended).

        Given a process, the end comes once it has exited and what it wrote has been read (one read after its
        exit), even if something it left behind keeps the pipe open, or keeps writing; at end of file while it
        still runs, the reader waits for its exit. The deadline is checked before every line."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:  # checked first: a child that prints without pause cannot carry a reader past it
                return None
            if self.lines or self.ended:
                break
            if self.at_eof:  # only the process's exit is still to come
                self._wait_for_exit(min(left, POLL_S))
                continue
            exited = self.process is not None and self.process.poll() is not None
            ready = select.select([self.fd], [], [], 0 if exited else min(left, POLL_S))[0]
            chunk = self._read() if ready else b""
            if chunk is None:
                self.at_eof = True
                self.ended = self.process is None or self.process.poll() is not None
                continue
            *lines, self.buffer = (self.buffer + chunk).split(b"\n")
            self.lines.extend(lines)
            if exited:  # all it wrote is in the pipe, which one read empties: the rest is someone else's
                self.ended = True
        return self.lines.popleft() if self.lines else None

    def rest(self):
        """The partial last line still in the buffer (b"" if none), taken out of it: read it after the end."""
        rest, self.buffer = self.buffer, b""
        return rest

    def _read(self):
        """What the pipe holds now (b"" when nothing after all), or None at end of file."""
        try:
            chunk = os.read(self.fd, MAX_READ)
        except BlockingIOError:
            return b""
        return chunk or None

    def _wait_for_exit(self, seconds):
        """Wait up to seconds for the process to exit; the end once it has."""
        try:
            self.process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return
        self.ended = True


def kill_group(process):
    """SIGKILL the child's process group (it and what it started), reap the child, close our ends of its pipes."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is gone already, or holds nothing we may signal
    process.wait()
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            try:
                stream.close()
            except OSError:
                pass  # a write still buffered for a stdin whose reader is gone
