"""The scoped diagnosis (grader/diagnosis/scoped.py): a slip named from the first failing function's own checks,
when the learner's other functions differ from the reference in ways no single mutant explains."""

from types import SimpleNamespace

import torch

from grader.diagnosis import explain, scoped

KERNEL, POOL, MODULE = "gaussian_kernel_weights", "nadaraya_watson", "NWKernelRegression"  # ex02's targets


def values(seed):
    return {"output": torch.rand(3, 4, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)}


def setting():
    """Checks 0-1 of the kernel, 2 of the pooling that uses it, 3 of the module; the learner fails 0, 1 and 2."""
    checks = [SimpleNamespace(target=t, tolerance_dtype=None) for t in (KERNEL, KERNEL, POOL, MODULE)]
    references = [values(i) for i in range(4)]
    records = [{"ok": values(10)}, {"ok": values(11)}, {"ok": values(12)}, {"ok": values(3)}]
    return checks, references, records


def mutant(fails, op="tiled_instead"):
    return {"op": op, "function": KERNEL, "target": "diffs", "fields": {}, "fails": fails}


def diagnose(entries):
    checks, references, records = setting()
    return scoped.diagnose("ex02", entries, [0, 1, 2], checks, references, records, "en",
                           explain.explains, explain.named_slip)


def test_a_slip_of_the_first_failing_function_is_named_from_its_own_checks_alone():
    # the mutant also fails the module's check (the reference's module calls the kernel; the learner's computes
    # it inline) and agrees with the learner on the kernel's checks: named, whatever the pooling's check says
    found = diagnose([mutant({0: values(10), 1: values(11), 3: values(20)})])
    assert found and found[0] == 0 and KERNEL in found[1] and "repeat_interleave" in found[1], found


def test_a_slip_in_some_of_the_functions_cases_only_is_named_when_no_exact_one_is():
    wider = mutant({0: values(10), 1: values(11), 2: values(30)})
    assert diagnose([wider])
    checks, references, records = setting()
    records[1] = {"ok": references[1]}  # the learner passes the kernel's second check: a slip in some cases only
    found = scoped.diagnose("ex02", [mutant({0: values(10), 1: values(21)})], [0, 2], checks, references, records,
                            "en", explain.explains, explain.named_slip)
    assert found and KERNEL in found[1], found


def test_nothing_is_named_when_the_mutant_disagrees_or_two_slips_explain_the_checks():
    assert diagnose([mutant({0: values(10), 1: values(99)})]) is None  # other values on check 1
    assert diagnose([mutant({0: values(10)})]) is None  # it passes check 1, which the learner fails
    other = dict(mutant({0: values(10), 1: values(11)}), op="sign_flipped", target="scores")
    assert diagnose([mutant({0: values(10), 1: values(11)}), other]) is None  # two lines: no guess
