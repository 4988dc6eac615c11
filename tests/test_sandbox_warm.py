"""The warm server (grader/warm_server.py, grader/harness/warm.py): one server, many runs, no state between them.

A first job tries to leave state everywhere it can reach (the modules it shares
with the server by fork, its environment, /tmp, its home, a detached process of
its uid, the cgroup files); the next job on the same server reports what it
finds, and the host is checked from outside. A server that dies, between runs
or in the middle of one, is replaced; a job that runs into its timeout ends
within the timeout plus a small margin and keeps the server.
"""

import json
import os
import signal
import threading
import time

import pytest
from sandbox_helpers import reference, sandbox_uid_processes

from grader import warm_server
from grader.harness import cgroups
from grader.sandbox import SandboxLimits, run_jobs

# slow: each test starts a warm server (a Python start and a torch import); alone: they count the processes of the
# sandbox uids, which another worker's grading would add to
pytestmark = [pytest.mark.slow, pytest.mark.alone]

LEAVE = '''
import os, subprocess, sys, torch
sys.modules["_harness"].LEFT_BY_A = "A"
torch.LEFT_BY_A = "A"
os.environ["LEFT_BY_A"] = "A"
for path in ("/tmp/left_by_a", os.path.expanduser("~/left_by_a"), "/job/out/left_by_a", "/job/results/left_by_a"):
    try:
        with open(path, "w") as f:
            f.write("A")
    except OSError as err:
        print("could not write", path, err)
if os.fork() == 0:  # a detached sleeper of this uid
    os.setsid()
    if os.fork() == 0:
        subprocess.Popen(["sleep", "300"], start_new_session=True)
        import time
        time.sleep(300)
    os._exit(0)
for target in ("/sys/fs/cgroup/cgroup.procs", "/sys/fs/cgroup/memory/cgroup.procs"):
    try:
        with open(target, "w") as f:
            f.write("1")
    except OSError:
        pass
print("A uid", os.getuid(), flush=True)
'''

REPORT = '''
import json, os, sys, torch
found = {
    "harness": getattr(sys.modules["_harness"], "LEFT_BY_A", None),
    "torch": getattr(torch, "LEFT_BY_A", None),
    "env": os.environ.get("LEFT_BY_A"),
    "files": [p for p in ("/tmp/left_by_a", os.path.expanduser("~/left_by_a"), "/job/out/left_by_a",
                          "/job/results/left_by_a") if os.path.exists(p)],
    "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    "uid": os.getuid(),
}
print("FOUND " + json.dumps(found), flush=True)
'''


def run_one(name, source, mode="strict", timeout_s=10, ex_id="ex00", module="ex00_paths"):
    """Run one learner file (imported only: no calls) on the warm server -> its JobResult."""
    limits = SandboxLimits(timeout_s=timeout_s, mode=mode, parallel=1, warm=True)
    jobs = {name: (ex_id, source, f"{module}.py", module, [], {} if mode == "strict" else None)}
    return run_jobs(jobs, limits)[name]


def found_line(result):
    """The report the second job printed."""
    line = next(x for x in result.output.splitlines() if x.startswith("FOUND "))
    return json.loads(line[len("FOUND "):])


@pytest.fixture()
def fresh_servers():
    """Each test starts and ends without warm servers."""
    warm_server.recycle()
    yield
    warm_server.recycle()


def job_groups(job):
    """cgroup folders of a job of this name still on the host."""
    parents = cgroups.parent_groups()
    if isinstance(parents, str):
        return []
    return [name for parent in parents.values() for name in os.listdir(parent)
            if name.startswith(cgroups.PREFIX) and name.endswith(f"-{job}")]


def test_a_strict_job_leaves_nothing_for_the_next(strict_available, fresh_servers):
    first = run_one("leaveA", LEAVE)
    server = warm_server.server_pid("strict")
    assert server is not None and "A uid" in first.output, first
    assert sandbox_uid_processes() == [], "a process of the first job outlived it"
    assert job_groups("leaveA") == []
    second = run_one("reportB", REPORT)
    assert warm_server.server_pid("strict") == server, "the same warm server ran both jobs"
    found = found_line(second)
    assert found["harness"] is None and found["torch"] is None and found["env"] is None, found
    assert found["files"] == [], found
    assert found["pids"] == [1, 2], found  # the sandbox's holder and the job's own process, nothing else
    assert sandbox_uid_processes() == []


def test_a_process_job_leaves_nothing_in_the_server(fresh_servers):
    run_one("leaveA", LEAVE.replace("/tmp/left_by_a", "/nonexistent/left"), mode="process")
    server = warm_server.server_pid("process")
    found = found_line(run_one("reportB", REPORT, mode="process"))
    assert warm_server.server_pid("process") == server
    assert found["harness"] is None and found["torch"] is None and found["env"] is None, found


def test_a_dead_server_is_replaced(fresh_servers):
    ok = reference("ex00_paths.py")
    assert run_one("before", ok, mode="process").status.get("exit_code") == 0
    first = warm_server.server_pid("process")
    os.kill(first, signal.SIGKILL)
    result = run_one("after", ok, mode="process")
    assert result.status.get("exit_code") == 0, result.status
    assert warm_server.server_pid("process") not in (None, first)


def test_a_server_killed_mid_run_loses_that_run_only(fresh_servers):
    run_one("warmup", reference("ex00_paths.py"), mode="process")
    first = warm_server.server_pid("process")
    threading.Timer(1.0, os.kill, (first, signal.SIGKILL)).start()
    lost = run_one("spin", "while True:\n    pass\n", mode="process", timeout_s=30)
    assert "lost" in lost.status, lost.status
    assert warm_server.server_pid("process") is None  # recycled on the anomaly
    again = run_one("again", reference("ex00_paths.py"), mode="process")
    assert again.status.get("exit_code") == 0
    assert warm_server.server_pid("process") not in (None, first)


def test_a_server_is_recycled_after_its_runs(fresh_servers, monkeypatch):
    monkeypatch.setattr(warm_server, "MAX_RUNS", 2)
    pids = []
    for i in range(3):
        run_one(f"run{i}", reference("ex00_paths.py"), mode="process")
        pids.append(warm_server.server_pid("process"))
    assert pids[0] == pids[1] != pids[2]


@pytest.mark.timing
def test_a_strict_timeout_ends_in_time_and_keeps_the_server(strict_available, fresh_servers):
    run_one("warmup", reference("ex00_paths.py"))
    server = warm_server.server_pid("strict")
    start = time.monotonic()
    spun = run_one("spin", "while True:\n    pass\n", timeout_s=3)
    took = time.monotonic() - start
    assert spun.status.get("timed_out") is True, spun.status
    assert took < 3 + 3, f"a 3 s timeout held the run for {took:.1f} s"
    assert warm_server.server_pid("strict") == server
    assert sandbox_uid_processes() == []


def test_a_server_that_prints_an_unexpected_line_is_recycled(fresh_servers, monkeypatch):
    run_one("warmup", reference("ex00_paths.py"), mode="process")
    first = warm_server.server_pid("process")
    real = warm_server.WarmServer.next_line
    told = []

    def forged(self, deadline):  # as if something in the server's session wrote on its stdout
        line = real(self, deadline)
        if line and line.startswith("done") and not told:
            told.append(line)
            return "done forged extra words"
        return line

    monkeypatch.setattr(warm_server.WarmServer, "next_line", forged)
    result = run_one("forged", reference("ex00_paths.py"), mode="process")
    assert told and result.status.get("exit_code") == 0, result.status  # status.json decides: the finished job stands
    assert warm_server.server_pid("process") is None  # recycled
    monkeypatch.setattr(warm_server.WarmServer, "next_line", real)
    assert run_one("after", reference("ex00_paths.py"), mode="process").status.get("exit_code") == 0
    assert warm_server.server_pid("process") not in (None, first)
