"""course.common.child_process with real children: a session of their own, lines by a deadline, the group killed."""

import os
import subprocess
import sys
import textwrap
import time

import pytest
from sandbox_helpers import pid_gone, pid_running

from course.common.child_process import LineReader, kill_group, spawn


def python(code, **kwargs):
    """A Python child running code, its stdout a pipe."""
    return spawn([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE, **kwargs)


# The child forks, the fork forks the grandchild and exits: the grandchild, reparented, still holds the child's
# stdout and stays in its process group. The child says the grandchild's pid, then sleeps ("stay") or exits;
# with "spam" the grandchild writes lines on the child's stdout without pause.
DOUBLE_FORK = """
    import os, sys, time
    r, w = os.pipe()
    if os.fork() == 0:
        if os.fork() == 0:
            os.write(w, str(os.getpid()).encode())
            while sys.argv[1] == "spam":
                os.write(1, b"spam\\n")
            time.sleep(60)
        os._exit(0)
    os.wait()
    print("grandchild", os.read(r, 32).decode(), flush=True)
    if sys.argv[1] == "stay":
        time.sleep(60)
"""


def test_a_child_runs_in_its_own_session_with_what_it_was_given(tmp_path):
    extra_r, extra_w = os.pipe()
    code = textwrap.dedent("""
        import os, sys
        print(os.getsid(0), os.getpgid(0), repr(sys.stdin.read()), os.environ["CHILD_TEST"], os.getcwd(), flush=True)
        os.write(int(sys.argv[1]), b"passed")
    """)
    child = spawn([sys.executable, "-c", code, str(extra_w)], stdout=subprocess.PIPE,
                  env=dict(os.environ, CHILD_TEST="given"), cwd=tmp_path, pass_fds=(extra_w,))
    os.close(extra_w)
    reader = LineReader(child.stdout, child)
    line = reader.readline(time.monotonic() + 10)
    assert line is not None, "the child said nothing"
    sid, pgid, stdin, env, cwd = line.decode().split()
    assert int(sid) == int(pgid) == child.pid != os.getsid(0)  # a session and a group of its own
    assert (stdin, env, cwd) == ("''", "given", str(tmp_path))  # stdin closed; env and cwd passed
    assert os.read(extra_r, 16) == b"passed"
    os.close(extra_r)
    assert child.wait(timeout=10) == 0
    kill_group(child)  # a group that has gone already: nothing raised, our end of the pipe closed
    assert child.stdout.closed


def test_lines_come_as_they_are_written_and_a_partial_line_waits_for_its_newline():
    child = spawn([sys.executable, "-c", textwrap.dedent("""
        import sys
        sys.stdout.write("first\\nsec"); sys.stdout.flush()
        sys.stdin.readline()  # the test says when to go on
        sys.stdout.write("ond\\nthird\\n"); sys.stdout.flush()
    """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        reader = LineReader(child.stdout, child)
        assert reader.readline(time.monotonic() + 10) == b"first"
        assert reader.readline(time.monotonic() + 0.3) is None and not reader.ended  # "sec" alone is no line
        child.stdin.write(b"go\n")
        child.stdin.flush()
        assert reader.readline(time.monotonic() + 10) == b"second"
        assert reader.readline(time.monotonic() + 10) == b"third"
        assert reader.readline(time.monotonic() + 10) is None and reader.ended
        assert child.poll() == 0
    finally:
        kill_group(child)


@pytest.mark.slow
@pytest.mark.timing
def test_a_silent_child_gives_none_at_the_deadline_and_the_reader_can_go_on():
    child = python("import time; time.sleep(60)")
    try:
        reader, start = LineReader(child.stdout, child), time.monotonic()
        assert reader.readline(start + 0.5) is None
        took = time.monotonic() - start
        assert 0.5 <= took < 2.5, took
        assert not reader.ended and child.poll() is None
        assert reader.readline(time.monotonic() - 1) is None  # a deadline already past returns at once
    finally:
        kill_group(child)
    assert child.returncode == -9


@pytest.mark.parametrize("watch_process", [False, True])
def test_a_child_that_exits_ends_the_reader_with_its_partial_last_line(watch_process):
    child = python("import sys; sys.stdout.write('one\\nno newline'); sys.exit(3)")
    try:
        reader = LineReader(child.stdout, child if watch_process else None)
        deadline = time.monotonic() + 10
        assert reader.readline(deadline) == b"one"
        assert reader.readline(deadline) is None and reader.ended
        assert reader.rest() == b"no newline" and reader.rest() == b""
        assert reader.readline(deadline) is None  # still the end
    finally:
        kill_group(child)
    assert child.returncode == 3


def test_a_grandchild_holding_the_pipe_does_not_hold_the_reader_and_dies_with_the_group():
    child = python(DOUBLE_FORK.replace("sys.argv[1]", '"exit"'))
    grandchild = None
    try:
        reader = LineReader(child.stdout)  # without the process: only end of file would end it
        line = reader.readline(time.monotonic() + 10)
        assert line is not None and line.startswith(b"grandchild ")
        grandchild = int(line.split()[1])
        child.wait(timeout=10)
        assert pid_running(grandchild)
        assert reader.readline(time.monotonic() + 0.5) is None and not reader.ended  # the pipe is held: no EOF

        watching, start = LineReader(child.stdout, child), time.monotonic()
        assert watching.readline(start + 30) is None and watching.ended
        assert time.monotonic() - start < 5, "the reader waited for the held pipe"
        assert pid_running(grandchild)  # it really was held: the child's exit left the grandchild running
    finally:
        kill_group(child)
    assert grandchild is not None and pid_gone(grandchild), f"grandchild {grandchild} outlived the group kill"


def test_the_group_kill_ends_a_running_child_and_its_detached_grandchild():
    child = spawn([sys.executable, "-c", textwrap.dedent(DOUBLE_FORK), "stay"], stdout=subprocess.PIPE)
    try:
        line = LineReader(child.stdout, child).readline(time.monotonic() + 10)
        assert line is not None and line.startswith(b"grandchild ")
        grandchild = int(line.split()[1])
        assert pid_running(grandchild) and child.poll() is None
    finally:
        kill_group(child)
    assert child.returncode == -9
    assert pid_gone(grandchild), f"grandchild {grandchild} outlived the group kill"
    kill_group(child)  # again, on a group that is gone: nothing to kill, nothing raised


def test_a_grandchild_that_keeps_writing_does_not_hold_the_reader_past_the_childs_exit():
    child = spawn([sys.executable, "-c", textwrap.dedent(DOUBLE_FORK), "spam"], stdout=subprocess.PIPE)
    try:
        # read from the start: the grandchild can fill the pipe before the child's own line, which then waits for
        # a reader (waiting for the child's exit first, with nobody reading, never ended on a loaded machine)
        reader, lines, start = LineReader(child.stdout, child), [], time.monotonic()
        while (line := reader.readline(start + 30)) is not None:
            lines.append(line)
        assert reader.ended and child.poll() is not None  # ended by the child's exit, not by the deadline
        assert time.monotonic() - start < 10, "the grandchild's lines held the reader"  # a fork and a line
        assert any(line.strip() == b"spam" for line in lines)  # the grandchild was writing all along
    finally:
        kill_group(child)


@pytest.mark.slow
@pytest.mark.timing
def test_a_child_that_prints_without_pause_cannot_carry_the_reader_past_its_deadline():
    child = python("while True: print('x' * 20, flush=True)")
    try:
        reader, count, start = LineReader(child.stdout, child), 0, time.monotonic()
        while reader.readline(start + 0.5) is not None:
            count += 1
        took = time.monotonic() - start
        assert count > 0 and not reader.ended
        assert 0.5 <= took < 2.5, took
    finally:
        kill_group(child)
