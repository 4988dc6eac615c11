"""`--sandbox strict`: no process of a job reaches another's memory or the kernel's wider interfaces,
and the process holding the sandbox open is under the job's limits like the learner's own.

Each case grades the learner's own ex01, a hostile ex03 (tests/hostile/) and ex00 in one strict run
and asks everything test_sandbox_strict.assert_contained asks, plus what the attack itself printed.
"""

import pytest
from test_sandbox_strict import LIMITS, assert_contained, run_case, three

from grader import seccomp_filter

pytestmark = [pytest.mark.slow, pytest.mark.alone, pytest.mark.usefixtures("strict_available")]  # alone: as
# tests/test_sandbox_strict.py, it checks machine-wide state


@pytest.fixture(scope="module")
def strict_available():
    from sandbox_helpers import require_strict

    require_strict()


def attack_lines(hostile):
    """What the attack said, one line per attempt ("<what>: refused (EPERM)")."""
    return [line for line in hostile.output.splitlines() if ": " in line and not line.startswith(" ")]


def test_no_process_of_the_box_can_be_traced_or_have_its_memory_touched():
    hostile = assert_contained(run_case(three("ptrace_holder")))
    lines = attack_lines(hostile)
    assert any(line.startswith("ptrace attach 1:") for line in lines), hostile.output  # the holder was tried
    assert [line for line in lines if "SUCCEEDED" in line] == [], hostile.output
    for what in ("ptrace attach", "ptrace seize", "process_vm_readv", "process_vm_writev"):
        assert f"{what} 1: refused (EPERM)" in lines, (what, hostile.output)
    assert "/proc/1/mem: refused (EACCES)" in lines, hostile.output


def test_the_seccomp_filter_refuses_the_calls_beyond_the_box():
    hostile = assert_contained(run_case(three("denied_syscalls")))
    lines = attack_lines(hostile)
    assert "a thread: started" in lines, hostile.output  # clone3 refused with ENOSYS: libc falls back to clone
    refused = [line for line in lines if line != "a thread: started"]
    assert len(refused) == 11, hostile.output
    assert [line for line in refused if not line.endswith("refused (EPERM)")] == [], hostile.output


def test_the_holder_is_in_the_jobs_cgroup_and_rlimits():
    hostile = assert_contained(run_case(three("holder_limits")))
    lines = attack_lines(hostile)
    assert "process 1: same cgroup" in lines, hostile.output
    limits = {line.split()[3]: line.split() for line in lines if line.startswith("process 1: Max")}
    assert int(limits["address"][5]) <= LIMITS.memory_mb * 2**20, hostile.output
    assert int(limits["processes"][4]) <= LIMITS.processes, hostile.output


def test_the_filter_is_a_program_built_by_libseccomp():
    assert seccomp_filter.problem() is None
    program = seccomp_filter.program()
    assert len(program) % 8 == 0 and len(program) > 8 * len(seccomp_filter.DENIED)
