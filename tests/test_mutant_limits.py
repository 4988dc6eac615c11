"""Building the mutant caches: a mutant that loops forever is given up by its CPU-time limit, well before the
30 s wall-clock limit, and a finite one is still run to its results."""

import time

import pytest

from grader import checks as checks_registry
from grader.diagnosis import mutants

ENDLESS = '''
def receptive_field(kernel_size, num_layers, dilations=None):
    total = 0
    while True:
        total += 1


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    return receptive_field(kernel_size, n)
'''


@pytest.mark.slow
@pytest.mark.timing
def test_an_endless_mutant_is_given_up_by_its_cpu_limit():
    check = checks_registry.for_exercise("ex00").build(seed=0)[0]
    module = mutants.mutant_module("ex00", ENDLESS, 0)
    started = time.monotonic()
    results = mutants.run_mutant("ex00", module, 0, check, cpu_limit_s=0.3)
    assert mutants.timed_out(results), results
    assert time.monotonic() - started < mutants.CALL_LIMIT_S / 2  # the CPU limit, not the wall clock, ended it


def test_the_cpu_limits_follow_the_references_own_cpu_time():
    checks = checks_registry.for_exercise("ex00").build(seed=0)
    references, cpu_limits = mutants.reference_results(checks)
    assert len(references) == len(cpu_limits) == len(checks)
    assert all(limit >= mutants.CALL_CPU_FLOOR_S for limit in cpu_limits)
    module = mutants.mutant_module("ex00", (mutants.SOLUTIONS_DIR / "ex00_paths.py").read_text(encoding="utf-8"), 1)
    for index, check in enumerate(checks):  # the reference itself, as a mutant, is never cut short
        results = mutants.run_mutant("ex00", module, index, check, cpu_limit_s=cpu_limits[index])
        assert not mutants.timed_out(results) and not mutants.differs(references[index], results, check), index
