"""The strict-mode server: every job in its own sandbox, as its own uid (see jail.py).

Per job the server (root) claims a uid, mounts the job's box, creates its
cgroup, starts its sandbox (whose holder joins the cgroup and takes the job's
rlimits first) and forks a supervisor. The supervisor joins the cgroup, sets
RLIMIT_NPROC for the uid and RLIMIT_AS, enters the sandbox
(jail.enter_sandbox), loads the seccomp program and forks the learner's
process (pid 2 of the sandbox's pid namespace, the holder is pid 1). When
that process has exited, the supervisor kills every process of the job's uid
(kill(-1)), sends the wait status to the server through a pipe and exits.
Then, or when the time is up, the sandbox is killed, the cgroup emptied, and
only then are the results copied out of the box into the job folder, which
the learner never saw.
"""

import os
import resource
import shutil
import signal
import stat
import struct
import time

from . import cgroups, jail, result_file
from .child import (LIBC_PRCTL, PR_SET_CHILD_SUBREAPER, _close_fds, _ended, _exit, _limit_self, _print_exc, _vm_bytes,
                    _write_status, run_job)


class StrictJob:
    """One running job: its uid, box, cgroup, sandbox and supervisor."""

    def __init__(self, plan, job):
        self.plan, self.job, self.start = plan, job, time.monotonic()
        self.job_dir = os.path.join(plan["run_dir"], job)
        self.box = os.path.join(self.job_dir, "box")
        self.uid, self.uid_lock = jail.claim_uid(plan["uid_base"], plan["uid_count"])
        self.group = self.holder = None
        self.status = None
        try:
            jail.make_box(self.box, self.uid, plan["files_mb"])
            package = os.path.join(self.box, "learner")
            shutil.copytree(os.path.join(self.job_dir, "learner"), package, copy_function=shutil.copyfile)
            os.chmod(package, 0o755)  # readable by the job's uid, writable by root only
            shutil.copyfile(os.path.join(self.job_dir, "input.pt"), os.path.join(self.box, "input.pt"))
            if plan["cgroups"]:
                self.group = cgroups.JobGroup(f"{os.getpid()}-{job}", plan["memory_mb"], plan["processes"])
            self.holder, self.pid1, self.hold_w = jail.start_sandbox(
                self.box, plan["runtime"], self.uid, plan["tools"], plan["seccomp"], self._holder_limits)
            self.status_r, status_w = os.pipe()
            self.pid = self._fork(status_w)
            os.close(status_w)
        except BaseException:
            self.finish()
            raise

    def _holder_limits(self):
        """In the holder, before it execs setpriv: the job's cgroup and rlimits (see _job_limits)."""
        _job_limits(self.plan, self.group, 0)

    def _fork(self, status_w):
        """Fork the supervisor; it never returns."""
        fds = jail.open_namespaces(self.pid1)
        pid = os.fork()
        if pid:
            for fd in fds.values():
                os.close(fd)
            return pid
        code = 0
        try:
            _close_fds(keep=[status_w, *fds.values()])
            _job_limits(self.plan, self.group, _vm_bytes())
            jail.enter_sandbox(fds, self.uid)
            jail.load_seccomp(self.plan["seccomp_program"])  # the learner's process inherits it
            learner = os.fork()
            if learner == 0:
                os.close(status_w)
                os.environ.clear()
                os.environ.update({"HOME": "/job", "TMPDIR": "/tmp", "PATH": "/usr/bin:/bin",
                                   "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
                self._learner()
            _, wait_status = os.waitpid(learner, 0)
            os.kill(-1, signal.SIGKILL)  # every process of the job's uid but this one: nothing writes after this
            os.write(status_w, struct.pack("i", wait_status))
        except BaseException as err:
            code = 4
            try:
                os.write(status_w, b"E" + f"{type(err).__name__}: {err}".encode()[:500])
            except OSError:
                pass
        _exit(code)

    def _learner(self):
        """In the sandbox: limit this process and run the job; never returns."""
        code = 0
        kill = os.kill
        try:
            _limit_self(self.plan, "/job/out/output.txt")
            run_job("/job")
        except BaseException:
            code = 3
            _print_exc()
        try:
            kill(-1, signal.SIGKILL)  # the rest of the sandbox, before this process's exit is seen
        except OSError:
            pass
        _exit(code)

    def timed_out(self):
        """Has the job used up its wall time?"""
        return time.monotonic() - self.start > self.plan["timeout_s"]

    def reap(self, wait_status=None, timed_out=False):
        """The supervisor ended (or time is up): decide the job's status."""
        elapsed = time.monotonic() - self.start
        if timed_out:
            self.status = {"timed_out": True, "elapsed_s": elapsed}
            return
        data = b""
        try:
            data = os.read(self.status_r, 600)
        except OSError:
            pass
        if len(data) == 4:
            self.status = _ended(struct.unpack("i", data)[0], self.start)
        elif data.startswith(b"E"):
            self.status = {"sandbox_error": data[1:].decode(errors="replace"), "elapsed_s": elapsed}
        else:
            self.status = _ended(wait_status, self.start) if wait_status is not None else {"elapsed_s": elapsed}
            self.status["sandbox_error"] = "the sandbox's supervisor ended without a status"

    def finish(self):
        """Kill the sandbox and everything in the job's cgroup, copy results out, release all."""
        try:
            if self.holder is not None:
                jail.stop_sandbox(self.holder, self.pid1, self.hold_w)
            if self.group:
                emptied = self.group.kill_all()
                if self.status is not None:
                    self.status.update(self.group.usage())
                    if not emptied:
                        self.status["sandbox_error"] = "processes of the job could not be killed"
                self.group.remove()
            if not jail.kill_uid(self.uid) and self.status is not None:
                self.status["sandbox_error"] = "processes of the job could not be killed"
            if self.status is not None:
                refusal = copy_out(self.box, self.job_dir, self.plan["files_mb"] * 2**20,
                                    self.plan["output_kb"] * 1024)
                if refusal:
                    self.status["results_refused"] = refusal
                _write_status(self.plan, self.job, self.status)
        finally:
            if os.path.ismount(self.box):
                jail.drop_box(self.box)
            os.close(self.uid_lock)
            if getattr(self, "status_r", None) is not None:
                os.close(self.status_r)
                self.status_r = None


def _job_limits(plan, group, vm_now):
    """Put the calling process under the job's limits before it runs anything else: its cgroup when
    there is one, and always RLIMIT_NPROC (per uid) and RLIMIT_AS (vm_now + the job's memory)."""
    if group:
        group.add_self()
    nproc = plan["processes"]
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    memory = vm_now + plan["memory_mb"] * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))


def _copy_file(src_dir_fd, name, dest, size):
    """Copy at most `size` bytes of one regular file with a single link (never a symlink) out of the box
    -> the bytes copied, or None when the name is no longer such a file."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=src_dir_fd)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            return None
        out = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:  # in the kernel: the learner's bytes never pass through this process's memory
            left = size  # the size it was counted at, even if it were longer now
            while left > 0:
                sent = os.sendfile(out, fd, None, left)
                if sent == 0:
                    break
                left -= sent
        finally:
            os.close(out)
        return size - left
    finally:
        os.close(fd)


def _open_dir(parent_fd, name):
    """A directory inside the box, refusing symlinks."""
    return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent_fd)


def copy_out(box, job_dir, max_bytes, output_bytes):
    """The result files (result_file.returned decides which, before anything is copied) and the first
    output_bytes of output.txt from the (dead) sandbox's box into the job folder
    -> None, or the refusal that kept every result file in the box (for status.json)."""
    results = os.path.join(job_dir, "results")
    os.makedirs(results, exist_ok=True)
    refusal = None
    box_fd = os.open(box, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        try:
            sub_fd = _open_dir(box_fd, "results")
        except OSError:
            sub_fd = None
        if sub_fd is not None:
            try:
                taken, refusal = result_file.returned(sub_fd, max_bytes)
                for name, size in taken:
                    _copy_file(sub_fd, name, os.path.join(results, name), size)
            finally:
                os.close(sub_fd)
        try:
            out_fd = _open_dir(box_fd, "out")
        except OSError:
            return refusal
        try:
            _copy_file(out_fd, "output.txt", os.path.join(job_dir, "output.txt"), output_bytes)
        finally:
            os.close(out_fd)
    finally:
        os.close(box_fd)
    return refusal


def prepare_strict(server_dir):
    """Once per server: a private mount namespace with the runtime and the exec-only tools bound under
    server_dir -> {"runtime", "tools"} for serve_strict."""
    return {"runtime": jail.private_runtime(server_dir), "tools": jail.exec_only_tools(server_dir)}


def serve_strict(plan, prepared=None):
    """Run every job of the plan `parallel` at a time, each in its own sandbox (`prepared`: a warm
    server's prepare_strict(), else it is done here, under the run directory)."""
    cgroups.sweep_stale()
    plan.update(prepared or prepare_strict(plan["run_dir"]))
    plan["seccomp"] = os.path.join(plan["run_dir"], "seccomp.bpf")  # written by the grader
    with open(plan["seccomp"], "rb") as f:
        plan["seccomp_program"] = f.read()
    plan["cgroups"] = cgroups.available()[0]
    LIBC_PRCTL(PR_SET_CHILD_SUBREAPER, 1)  # a learner process whose supervisor died comes back here
    pending, running = list(plan["jobs"]), {}  # supervisor pid -> StrictJob
    try:
        while pending or running:
            while pending and len(running) < plan["parallel"]:
                job = pending.pop(0)
                try:
                    strict_job = StrictJob(plan, job)
                except Exception as err:  # the sandbox could not be built: say so for this job
                    _write_status(plan, job, {"sandbox_error": str(err)[-800:], "elapsed_s": 0.0})
                    print(f"done {job}", flush=True)
                    continue
                running[strict_job.pid] = strict_job
            for sup, strict_job in list(running.items()):
                pid, wait_status = os.waitpid(sup, os.WNOHANG)
                if pid:
                    strict_job.reap(wait_status)
                    _end(running.pop(sup), None)
                elif strict_job.timed_out():
                    strict_job.reap(timed_out=True)
                    jail.stop_sandbox(strict_job.holder, strict_job.pid1, strict_job.hold_w)  # the learner first
                    strict_job.holder = None
                    _end(running.pop(sup), sup)
            _reap_strays(running)
            time.sleep(0.005)
    finally:
        for strict_job in running.values():
            strict_job.finish()


def _reap_strays(running):
    """Reap a child that is neither a supervisor nor a holder: a learner process orphaned by its supervisor.
    Left a zombie, it would keep its sandbox's pid namespace (and so the holder) from ending."""
    try:
        info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return
    known = set(running) | {j.holder.pid for j in running.values() if j.holder is not None}
    if info is not None and info.si_pid not in known:
        try:
            os.waitpid(info.si_pid, 0)
        except ChildProcessError:
            pass


def _end(strict_job, supervisor):
    """Finish a job, reap its supervisor if still running, and tell the grader."""
    if supervisor is not None:
        try:
            os.kill(supervisor, signal.SIGKILL)
        except ProcessLookupError:
            pass
    strict_job.finish()
    if supervisor is not None:
        try:
            os.waitpid(supervisor, 0)
        except ChildProcessError:
            pass
    print(f"done {strict_job.job}", flush=True)
