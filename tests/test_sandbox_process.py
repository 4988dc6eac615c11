"""The self-study sandbox (`--sandbox process`) survives a learner who breaks the server:
killed or stopped server, a held stdout pipe, a detached daemon, stale run folders."""

import fcntl
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from sandbox_helpers import ROOT, hostile_source, processes_running, reference

from grader.core import Submission, grade_submissions
from grader.sandbox import RUN_PREFIX, SandboxLimits, sweep_stale_runs

pytestmark = pytest.mark.slow  # grades hostile submissions in child processes

LIMITS = SandboxLimits(timeout_s=6, parallel=1)  # one at a time: the order of the jobs is known
# A stopped server is given up after timeout_s + stall_grace_s of silence; the default grace (30 s) would be waited
# out in full. 6 + 8 s still covers the server's start (torch's import) and ex00's grading before its first line
# on a loaded machine (the clock runs from the start until ex00 is done).
STALL_LIMITS = SandboxLimits(timeout_s=6, parallel=1, stall_grace_s=8)


def around(name):
    """A correct ex00 before the hostile ex03 and a correct ex01 after it."""
    return [Submission("ex00", reference("ex00_paths.py"), "ex00_paths.py"),
            Submission("ex03", hostile_source(name), f"{name}.py"),
            Submission("ex01", reference("ex01_softmax.py"), "ex01_softmax.py")]


def our_run_folders():
    return set(Path(tempfile.gettempdir()).glob(RUN_PREFIX + "*"))


def test_a_killed_server_leaves_every_ungraded_exercise_as_a_clear_error():
    before = our_run_folders()
    first, hostile, after = grade_submissions(around("kill_parent"), LIMITS)
    assert first.passed
    for result in (hostile, after):
        assert result.status == "error"
        assert "server was killed (SIGKILL)" in result.summary and "run the grader again" in result.summary
    assert our_run_folders() <= before, "the run folder was left behind"


def test_a_stopped_server_is_given_up_by_the_clock():
    started = time.monotonic()
    first, hostile, after = grade_submissions(around("stop_server"), STALL_LIMITS)
    took = time.monotonic() - started
    assert first.passed
    assert "stopped responding" in after.summary and after.status == "error"
    assert took < STALL_LIMITS.timeout_s + STALL_LIMITS.stall_grace_s + 60, took


def test_a_held_stdout_pipe_does_not_block_the_grader():
    started = time.monotonic()
    first, hostile, after = grade_submissions(around("hold_pipe"), LIMITS)
    assert first.passed and after.passed
    assert hostile.status == "not_written"
    assert time.monotonic() - started < 120


def test_a_detached_daemon_is_killed_with_its_exercise(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # this run's folder, named on its processes' command line
    first, hostile, after = grade_submissions(around("daemon"), LIMITS)
    assert first.passed and after.passed and not hostile.passed
    assert not processes_running(str(tmp_path)), "the daemon (a fork of the run's server) is still running"


def test_cli_reports_a_killed_server_without_a_traceback(tmp_path):
    (tmp_path / "ex00_paths.py").write_text(reference("ex00_paths.py"))
    (tmp_path / "ex03_scoring.py").write_text(hostile_source("kill_parent"))
    env = dict(os.environ, ATTENTION_LAB_HOME=str(tmp_path / "home"))
    done = subprocess.run([sys.executable, "-m", "grader", "ex00", "ex03", "--target", str(tmp_path), "--json"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    report = json.loads(done.stdout)
    statuses = {e["id"]: e["status"] for e in report["exercises"]}
    assert set(statuses) == {"ex00", "ex03"} and statuses["ex03"] == "error"


def test_stale_run_folders_are_swept_and_live_ones_kept(tmp_path):
    stale = tmp_path / (RUN_PREFIX + "stale")
    (stale / "job0").mkdir(parents=True)
    (stale / ".lock").write_text("")
    live = tmp_path / (RUN_PREFIX + "live")
    live.mkdir()
    lock = os.open(live / ".lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        assert sweep_stale_runs(tmp_path) == 1
        assert not stale.exists() and live.exists()
    finally:
        os.close(lock)
    assert sweep_stale_runs(tmp_path) == 1 and not live.exists()


def test_a_run_sweeps_what_a_killed_grader_left(tmp_path):
    stale = Path(tempfile.gettempdir()) / (RUN_PREFIX + "left-by-a-killed-grader")
    (stale / "job0").mkdir(parents=True, exist_ok=True)
    (stale / ".lock").write_text("")
    [result] = grade_submissions([Submission("ex00", reference("ex00_paths.py"), "ex00_paths.py")], LIMITS)
    assert result.passed and not stale.exists()


def test_strict_mode_says_what_to_install_when_bubblewrap_is_missing(monkeypatch, tmp_path):
    from grader import sandbox

    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 0)
    monkeypatch.setattr(sandbox.shutil, "which",
                        lambda tool, path=None: None if tool == "bwrap" else "/usr/bin/" + tool)
    problem = sandbox.strict_problem()
    assert "bwrap" in problem and "apt-get install -y bubblewrap util-linux" in problem
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1000)
    assert "must run as root" in sandbox.strict_problem()


def test_cli_refuses_strict_mode_with_the_reason(monkeypatch, capsys):
    from grader import cli, options

    monkeypatch.setattr(options, "strict_problem", lambda: "the strict sandbox needs bwrap: install it")
    assert cli.main(["ex00", "--sandbox", "strict"]) == 2
    err = capsys.readouterr().err
    assert "--sandbox strict cannot run here: the strict sandbox needs bwrap" in err and "Traceback" not in err
