"""Limits for all of a job's processes together: a memory and a pids cgroup per job.

cgroup v1 (memory and pids hierarchies under /sys/fs/cgroup, as on the course's
machines): the job's group is created under the server's own group of each
hierarchy, so it stays inside whatever limits the host put on the grader.
cgroup v2: used when the server sits at the root of a writable unified
hierarchy (a container with its own cgroup namespace) that offers memory and
pids. Elsewhere `available()` says why not, and strict mode falls back to
per-process RLIMIT_AS plus the per-uid RLIMIT_NPROC.
"""

import os
import signal
import time

ROOT = "/sys/fs/cgroup"
PREFIX = "attention-lab-"


def _own_path(controller):
    """This process's cgroup path in a v1 hierarchy ("memory"), or v2's ("")."""
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            if (controller in controllers.split(",")) if controller else controllers == "":
                return path
    return None


def parent_groups():
    """The folders job groups go in: {"memory": dir, "pids": dir} (cgroup v1) or {"v2": dir}, or a string saying
    why there are none. sweep_stale() looks in them for the groups a killed grader left."""
    if not os.access(ROOT, os.W_OK) and not os.path.isdir(os.path.join(ROOT, "memory")):
        return f"{ROOT} is not writable"
    if os.path.isfile(os.path.join(ROOT, "cgroup.controllers")):  # pure v2
        if _own_path("") != "/":
            return "cgroup v2 without a delegated root (the grader is not at the root of its cgroup namespace)"
        with open(os.path.join(ROOT, "cgroup.controllers")) as f:
            have = f.read().split()
        if not {"memory", "pids"} <= set(have):
            return "cgroup v2 without the memory and pids controllers"
        return {"v2": ROOT}
    parents = {}
    for controller in ("memory", "pids"):
        own = _own_path(controller)
        base = os.path.join(ROOT, controller)
        if own is None or not os.path.isdir(base):
            return f"no cgroup v1 {controller} hierarchy"
        parents[controller] = os.path.join(base, own.lstrip("/"))
        if not os.access(parents[controller], os.W_OK):
            return f"{parents[controller]} is not writable"
    return parents


def available():
    """(True, "cgroup v1" | "cgroup v2") or (False, why not)."""
    parents = parent_groups()
    if isinstance(parents, str):
        return False, parents
    return True, "cgroup v2" if "v2" in parents else "cgroup v1"


class JobGroup:
    """One job's cgroup(s): memory capped at memory_mb, at most `processes` tasks.

    `name` starts with the server's pid, so that sweep_stale() leaves a running server's groups alone.
    """

    def __init__(self, name, memory_mb, processes):
        parents = parent_groups()
        self.dirs = []
        if "v2" in parents:
            with open(os.path.join(ROOT, "cgroup.subtree_control"), "w") as f:
                f.write("+memory +pids")
            path = os.path.join(ROOT, PREFIX + name)
            os.mkdir(path)
            self.dirs = [path]
            self._write(path, "memory.max", memory_mb * 2**20)
            self._write(path, "memory.swap.max", 0, optional=True)
            self._write(path, "pids.max", processes)
            self.v2 = True
        else:
            mem = os.path.join(parents["memory"], PREFIX + name)
            pids = os.path.join(parents["pids"], PREFIX + name)
            os.mkdir(mem)
            self.dirs.append(mem)
            os.mkdir(pids)
            self.dirs.append(pids)
            self._write(mem, "memory.limit_in_bytes", memory_mb * 2**20)
            self._write(mem, "memory.memsw.limit_in_bytes", memory_mb * 2**20, optional=True)
            self._write(pids, "pids.max", processes)
            self.v2 = False

    @staticmethod
    def _write(path, name, value, optional=False):
        try:
            with open(os.path.join(path, name), "w") as f:
                f.write(str(value))
        except OSError:
            if not optional:
                raise

    def add_self(self):
        """Move the calling process (and so all it starts) into the group."""
        for path in self.dirs:
            with open(os.path.join(path, "cgroup.procs"), "w") as f:
                f.write("0")

    def pids(self):
        """Every process still in the group."""
        found = set()
        for path in self.dirs:
            try:
                with open(os.path.join(path, "cgroup.procs")) as f:
                    found.update(int(p) for p in f.read().split())
            except OSError:
                pass
        return found

    def usage(self):
        """{"peak_mb": peak memory of the group, "oom_kills": count} as far as the kernel says."""
        path = self.dirs[0]
        out = {}
        try:
            name = "memory.peak" if self.v2 else "memory.max_usage_in_bytes"
            with open(os.path.join(path, name)) as f:
                out["peak_mb"] = round(int(f.read()) / 2**20, 1)
            name = "memory.events" if self.v2 else "memory.oom_control"
            with open(os.path.join(path, name)) as f:
                for line in f:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        out["oom_kills"] = int(value)
        except (OSError, ValueError):
            pass
        return out

    def kill_all(self, wait_s=5.0):
        """SIGKILL whatever is left in the group; True once it is empty."""
        deadline = time.monotonic() + wait_s
        while True:
            left = self.pids()
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if not left or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        return not left

    def remove(self):
        """Remove the (empty) group."""
        for path in reversed(self.dirs):
            try:
                os.rmdir(path)
            except OSError:
                pass


def sweep_stale():
    """Remove job groups left by a grader that was killed (their processes are killed first)."""
    parents = parent_groups()
    if isinstance(parents, str):
        return
    for parent in parents.values():
        try:
            names = [n for n in os.listdir(parent) if n.startswith(PREFIX)]
        except OSError:
            continue
        for name in names:
            owner = name[len(PREFIX):].split("-", 1)[0]
            if owner.isdigit() and os.path.exists(f"/proc/{owner}"):
                continue  # its grader's server is still running
            group = JobGroup.__new__(JobGroup)
            group.dirs, group.v2 = [os.path.join(parent, name)], "v2" in parents
            group.kill_all(wait_s=1.0)
            group.remove()
