"""Strict mode's jail: one bubblewrap sandbox per job, entered by a fork of the server.

The server (root, outside any sandbox, torch already imported) prepares per job:
a size-capped tmpfs `box` holding only that job's staged package and input, a
cgroup capping memory and processes of all the job's processes together, and a
sandbox built by `setpriv` (drop to the job's own uid, no groups, no
capabilities) + `bwrap --unshare-all --unshare-user` (new user, pid, net, ipc,
uts, mount and cgroup namespaces; sees /usr, the Python runtime read-only, the
box as /job and /job/tmp as /tmp, its own /proc and /dev) holding `cat` on a
pipe as its pid 1. The holder joins the job's cgroup and takes its rlimits
before it execs anything; bwrap and `cat` are copies the uid may execute but
not read, so they run non-dumpable (no process of the box may open their
/proc/<pid>/mem), and bwrap applies the grader's seccomp program (see
grader/seccomp_filter.py) to `cat`. The job's child then drops to the job
uid, joins that sandbox's namespaces (setns), drops every capability, sets
no_new_privs, loads the same seccomp program and forks the process that runs
the learner's code inside it. Killing the sandbox's pid 1 ends every process
it holds; results are copied out of the box only then.

The runtime: the sandbox uid must be able to reach the interpreter. The server
bind-mounts `sys.base_prefix` (and a venv's `sys.prefix`) onto an empty folder of the (0711) run directory
inside a private mount namespace of its own, so an interpreter under a home
directory the uid cannot enter (/root/.pyenv/...) works without changing the
host; the sandbox sees them at their own paths, bound after /job and /tmp, so
a venv under /tmp is not hidden by the sandbox's /tmp. Only the standard library and torch here.
"""

import ctypes
import fcntl
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time

LIBC = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID = 0x00020000, 0x10000000, 0x20000000
CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWCGROUP = 0x40000000, 0x08000000, 0x04000000, 0x02000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_RDONLY = 0x2, 0x4, 0x8, 0x1
MS_BIND, MS_REC, MS_PRIVATE, MS_REMOUNT, MNT_DETACH = 0x1000, 0x4000, 0x40000, 0x20, 0x2
NS_GET_USERNS = 0xB701
PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 24, 38, 47, 4
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
SYS_CAPSET = 126  # x86_64
NAMESPACES = (("mnt", CLONE_NEWNS), ("net", CLONE_NEWNET), ("ipc", CLONE_NEWIPC),
              ("uts", CLONE_NEWUTS), ("pid", CLONE_NEWPID), ("cgroup", CLONE_NEWCGROUP))
UID_LOCK_DIR = "/run/attention-lab-sandbox"


def _check(result, what):
    """Raise OSError with errno's text when a libc call failed."""
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(source, target, fstype, flags, data=None):
    """mount(2)."""
    _check(LIBC.mount(source.encode(), target.encode(), fstype.encode() if fstype else None, flags,
                      data.encode() if data else None), f"mount {target}")


def private_runtime(run_dir):
    """Enter a private mount namespace; bind the interpreter's prefixes (base and venv) read-only under
    run_dir -> [(bound folder, path the sandbox sees it at)]."""
    _check(LIBC.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _mount("none", "/", None, MS_REC | MS_PRIVATE)
    binds = []
    for i, prefix in enumerate(dict.fromkeys([sys.base_prefix, sys.prefix])):
        runtime = os.path.join(run_dir, f"runtime{i}")
        os.makedirs(runtime, mode=0o755, exist_ok=True)
        _mount(prefix, runtime, None, MS_BIND | MS_REC)
        _mount("none", runtime, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_REC)
        binds.append((runtime, prefix))
    return binds


def claim_uid(base, count):
    """(uid, lock fd): a uid of the reserved range no other job holds (an flock per uid)."""
    os.makedirs(UID_LOCK_DIR, mode=0o700, exist_ok=True)
    for uid in range(base, base + count):
        fd = os.open(os.path.join(UID_LOCK_DIR, f"{uid}.lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return uid, fd
        except BlockingIOError:
            os.close(fd)
    raise RuntimeError(f"all {count} sandbox uids from {base} are in use")


def make_box(box, uid, size_mb):
    """A tmpfs of size_mb for one job: root-owned, with results/, tmp/ and out/ owned by uid."""
    os.makedirs(box, mode=0o711, exist_ok=True)
    _mount("tmpfs", box, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size_mb}m,nr_inodes=4096,mode=0755,uid=0,gid=0")
    for sub in ("results", "tmp", "out"):
        os.mkdir(os.path.join(box, sub), 0o700)
        os.chown(os.path.join(box, sub), uid, uid)


def drop_box(box):
    """Unmount a job's tmpfs (its memory is freed)."""
    LIBC.umount2(box.encode(), MNT_DETACH)


def exec_only_tools(run_dir):
    """Copies of bwrap and cat that the sandbox uid may run but not read, on a tmpfs of the private mount
    namespace -> {"bwrap": path, "hold": path}. A program its user cannot read runs non-dumpable: no other
    process of the box may open its /proc/<pid>/mem or attach to it."""
    tools = os.path.join(run_dir, "tools")
    os.makedirs(tools, mode=0o711, exist_ok=True)
    _mount("tmpfs", tools, "tmpfs", MS_NOSUID | MS_NODEV, "size=4m,mode=0711,uid=0,gid=0")
    paths = {}
    for name, program in (("bwrap", "bwrap"), ("hold", "cat")):
        paths[name] = os.path.join(tools, name)
        shutil.copyfile(shutil.which(program, path="/usr/bin:/bin"), paths[name])
        os.chmod(paths[name], 0o111)
    _mount("none", tools, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    return paths


def start_sandbox(box, runtime, uid, tools, seccomp_path, limit):
    """Start the job's empty sandbox (bwrap holding `cat`) -> (Popen, host pid of its pid 1, write end).

    runtime: [(bound folder, path in the sandbox)] from private_runtime(); tools: exec_only_tools();
    seccomp_path: the filter program (bwrap applies it to what it runs); limit(): run in the holder
    before it execs anything, it puts the holder under the job's limits (cgroup, rlimits)."""
    hold_r, hold_w = os.pipe()
    info_r, info_w = os.pipe()
    seccomp_fd = os.open(seccomp_path, os.O_RDONLY)
    command = [
        "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all",
        "--bounding-set=-all", "--",
        tools["bwrap"], "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
        "--new-session", "--cap-drop", "ALL", "--hostname", "sandbox", "--as-pid-1",  # pid 1: the holder
        "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
        "--symlink", "usr/bin", "/bin", "--bind", box, "/job", "--bind", os.path.join(box, "tmp"), "/tmp",
        # after /tmp and /job: an interpreter or venv living under /tmp stays visible
        *[arg for bound, seen in runtime for arg in ("--ro-bind", bound, seen)],
        "--ro-bind", tools["hold"], "/hold",
        "--proc", "/proc", "--dev", "/dev",
        "--remount-ro", "/dev", "--remount-ro", "/",  # bwrap's own tmpfs root and /dev: no room to write
        "--chdir", "/job", "--info-fd", str(info_w), "--seccomp", str(seccomp_fd),
        "--", "/usr/bin/sh", "-c", "echo ready && exec /hold",  # says when the sandbox is built
    ]
    env = {"PATH": "/usr/bin:/bin", "HOME": "/job", "LANG": "C.UTF-8"}
    try:
        holder = subprocess.Popen(command, stdin=hold_r, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  pass_fds=(info_w, seccomp_fd), env=env, close_fds=True, preexec_fn=limit)
    finally:
        for fd in (hold_r, info_w, seccomp_fd):
            os.close(fd)
    with os.fdopen(info_r, "rb") as info:
        text = info.read(4096).decode(errors="replace")
    match = re.search(r'"child-pid"\s*:\s*(\d+)', text)
    ready = select.select([holder.stdout], [], [], 60)[0] and holder.stdout.readline() == b"ready\n"
    holder.stdout.close()
    if not (match and ready):
        holder.kill()
        errors = holder.stderr.read().decode(errors="replace")
        holder.wait()
        os.close(hold_w)
        raise RuntimeError(f"bubblewrap could not start the sandbox: {errors.strip()[-500:]}")
    return holder, int(match[1]), hold_w


def open_namespaces(pid):
    """{name: fd} for the namespaces of the sandbox's pid 1, plus the user ns owning them."""
    fds = {name: os.open(f"/proc/{pid}/ns/{name}", os.O_RDONLY) for name, _ in NAMESPACES}
    fds["user"] = os.open(f"/proc/{pid}/ns/user", os.O_RDONLY)
    fds["owner"] = fcntl.ioctl(fds["mnt"], NS_GET_USERNS)
    return fds


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_all_capabilities():
    """Empty bounding, ambient, effective, permitted and inheritable sets; set no_new_privs."""
    for cap in range(64):
        LIBC.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    LIBC.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (_CapData * 2)()
    _check(LIBC.syscall(SYS_CAPSET, ctypes.byref(header), data), "capset")
    _check(LIBC.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def load_seccomp(program):
    """Install a seccomp program (bytes of struct sock_filter, built by the grader) on this process and
    all it starts; needs no_new_privs (drop_all_capabilities)."""
    code = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.addressof(code))
    _check(LIBC.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0), "seccomp")


def enter_sandbox(fds, uid):
    """In a job's child (root): become uid, join the sandbox's namespaces, drop every capability."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)  # host capabilities are gone from here on
    _check(LIBC.setns(fds["owner"], CLONE_NEWUSER), "setns(user)")  # uid owns it: full caps inside only
    for name, flag in NAMESPACES:
        _check(LIBC.setns(fds[name], flag), f"setns({name})")
    if os.fstat(fds["user"]).st_ino != os.fstat(fds["owner"]).st_ino:  # bwrap's nested user namespace
        _check(LIBC.setns(fds["user"], CLONE_NEWUSER), "setns(inner user)")
    for fd in fds.values():
        os.close(fd)
    drop_all_capabilities()
    os.chdir("/job")


def stop_sandbox(holder, pid1, hold_w):
    """Kill the sandbox's pid 1; the kernel kills everything in its pid namespace before bwrap reaps it."""
    try:
        os.kill(pid1, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        os.close(hold_w)
    except OSError:
        pass
    try:
        holder.wait(timeout=10)
    except subprocess.TimeoutExpired:
        holder.kill()
        holder.wait()
    holder.stderr.close()


def uid_processes(uid):
    """Pids of live (not zombie) processes running as uid."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid != uid:
                    continue
                with open(f"/proc/{entry}/stat") as f:
                    if f.read().rpartition(")")[2].split()[0] != "Z":
                        found.append(int(entry))
            except (OSError, IndexError):
                continue
    return found


def kill_uid(uid, wait_s=5.0):
    """SIGKILL every process of uid until none is left; True when none is."""
    deadline = time.monotonic() + wait_s
    while True:
        left = uid_processes(uid)
        if not left or time.monotonic() > deadline:
            return not left
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.01)
