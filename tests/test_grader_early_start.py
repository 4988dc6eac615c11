"""The grading server starts with the app and warms up before any click: its warm sandbox server runs and the
missing mutant caches are built (at a lower priority) before a first request, and a first failing grade then
finds its cache there."""

import os
import time

import pytest
from streamlit.testing.v1 import AppTest

from course.app import grading_client
from course.common.paths import PROJECT_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def wait_until(condition, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"not within {timeout} s: {what}")


def processes():
    """{pid: (parent pid, niceness, command line)} of every process, read from /proc."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
                command = open(f"/proc/{entry}/cmdline", "rb").read().replace(b"\0", b" ").decode()
            except OSError:  # ended meanwhile
                continue
            found[int(entry)] = (int(stat[1]), int(stat[16]), command)
    return found


def descendants(pid):
    """[(niceness, command line)] of the process's descendants."""
    table, found, todo = processes(), [], [pid]
    while todo:
        parent = todo.pop()
        for child, (ppid, nice, command) in table.items():
            if ppid == parent:
                found.append((nice, command))
                todo.append(child)
    return found


def test_a_started_server_warms_its_sandbox_and_builds_the_mutant_caches_before_any_request(tmp_path, monkeypatch):
    caches = tmp_path / "mutants"
    monkeypatch.setenv("ATTENTION_LAB_MUTANT_CACHE", str(caches))
    monkeypatch.setenv("ATTENTION_LAB_HOME", str(tmp_path / "home"))
    server = grading_client.GradingServer()
    try:
        server.start_early()
        pid = server.pid
        assert pid is not None
        server.start_early()  # already running: the same child
        assert server.pid == pid
        # no request was sent: the warm sandbox server (serve_warm) and the caches' builder are its own doing
        wait_until(lambda: any("serve_warm" in command for _, command in descendants(pid)), 120,
                   "the warm sandbox server started")
        builders = wait_until(lambda: [(nice, command) for nice, command in descendants(pid)
                                       if " mutants " in f"{command} "], 120, "the mutant caches' builder started")
        assert builders and all(nice > os.getpriority(os.PRIO_PROCESS, 0) for nice, _ in builders), builders
        # the exercises' caches are built in order: ex00's and ex01's come first
        wait_until(lambda: list(caches.glob("ex01-*.pt")), 300, "ex01's mutant cache built")
        # a failing grade now reads ex01's cache: the builder is done, and the cache's file is not written again
        before = {path: path.stat().st_mtime_ns for path in caches.glob("ex01*.pt")}
        wrong = tmp_path / "target"
        wrong.mkdir()
        source = (PROJECT_ROOT / "solutions" / "ex01_softmax.py").read_text(encoding="utf-8")
        (wrong / "ex01_softmax.py").write_text(source.replace('float("-inf")', "0.0"), encoding="utf-8")
        report = grading_client.run_grader(["ex01"], target=wrong, server=server, timeout=300)
        assert not report["passed"]
        assert {path: path.stat().st_mtime_ns for path in caches.glob("ex01*.pt")} == before
    finally:
        server.close()


def test_opening_a_self_study_page_starts_the_grading_server(monkeypatch, tmp_path):
    monkeypatch.setenv("ATTENTION_LAB_HOME", str(tmp_path))
    monkeypatch.setenv("ATTENTION_LAB_MUTANT_CACHE", str(tmp_path / "mutants"))
    started = []
    monkeypatch.setattr(grading_client.GradingServer, "start_early", lambda self: started.append(self))
    monkeypatch.setenv(grading_client.EARLY_START_VAR, "1")
    app = AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=120).run()
    assert not app.exception
    assert started and all(server is started[0] for server in started)  # one server per Streamlit server
    assert isinstance(started[0], grading_client.GradingServer)
    monkeypatch.setenv(grading_client.EARLY_START_VAR, "0")  # the tests' default: no server
    count = len(started)
    AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=120).run()
    assert len(started) == count
    assert os.environ[grading_client.EARLY_START_VAR] == "0"
