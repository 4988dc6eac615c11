"""A file that reads its job input cannot tell its variant's value (grader/variants.py build_checks).

The learner's job holds every case it is called with (grader/core.job_calls), and the learner's code can read
it (its arguments, the harness's stack frames, input.pt). The cases a variant adds used to be built from the
value (ex00: a CNN of n = k positions; ex08: windows of side 2d + 4) or drawn by the variant's number (the others:
a classmate's number named the value), so one file solved for the value and passed every learner's variant.
Now every non-default variant graded with one seed is given the same job input; the attack of
bench/variant_attack.py (value solved from the sizes, or matched against classmates' rebuilt jobs) passes no
variant of another value, while a neighbour's correct file still fails (tests/test_exercise_variants.py).
"""

import random
import sys
from pathlib import Path

import pytest
import torch

from course.common.exercise_index import EXERCISES as EXERCISE_INDEX, get as get_exercise
from grader import checks as checks_registry
from grader import variants
from grader.core import Submission, grade_submissions, job_calls
from grader.sandbox import SandboxLimits

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import variant_attack  # noqa: E402  (bench/variant_attack.py)

EXERCISES = [ex.id for ex in EXERCISE_INDEX]
NUMBERS = variant_attack.sampled_numbers(200, variants.MAX_VARIANT)
MAX_OTHER_PASSES = 0.01  # the attack may pass at most this share of the variants of another value


def _value(ex_id, number):
    return variants.variant(ex_id, number).kwargs()[variants.PARAMETERS[ex_id].name]


def _variant_numbers(ex_id, count):
    """`count` class variant numbers of pairwise different values, the smallest and the largest value included."""
    by_value = {}
    for number in NUMBERS:
        by_value.setdefault(_value(ex_id, number), number)
    ordered = sorted(by_value)
    chosen = [ordered[0], ordered[-1]] + random.Random(ex_id).sample(ordered[1:-1], count - 2)
    return [by_value[v] for v in chosen]


@pytest.mark.slow  # builds the checks of six variants of each exercise
@pytest.mark.parametrize("ex_id", EXERCISES)
def test_a_variants_job_input_does_not_depend_on_its_value(ex_id):
    module = checks_registry.for_exercise(ex_id)
    drawn = getattr(module, "CASES_DRAWN", False)
    for seed in ((3, 2**63 + 5) if drawn else (None,)):
        jobs, given = {}, set()
        for number in _variant_numbers(ex_id, 6):
            checks = variants.build_checks(module, variants.variant(ex_id, number), seed)
            jobs[number] = variant_attack.fingerprint(job_calls(checks))
            given.add(variants.value_of(checks))
            assert any(c.spec.get("variant") for c in checks), (ex_id, number)  # the variant reaches its cases
        assert len(given) == 6, (ex_id, given)  # six values given to the reference ...
        assert len(set(jobs.values())) == 1, (ex_id, seed, jobs)  # ... and one job input for all of them


def test_the_structural_solvers_recover_a_value_from_cases_built_from_it():
    """The attack is no straw man: given cases sized by the value as they were (n = k, then k + 1; windows of
    2d + 2..5, 4d + 3 and a causal 2d + 4), it names the value."""
    def call(fn, args, kwargs=None):
        return {"procedure": "call", "spec": {"fn": fn, "args": list(args), "kwargs": kwargs or {}}}

    for k in (2, 17, 64):
        calls = [call("max_path_length", ("cnn", 9), {"kernel_size": 4}), call("max_path_length", ("cnn", k)),
                 call("max_path_length", ("cnn", k + 1)), call("max_path_length", ("cnn", 4000), {"dilated": True})]
        assert variant_attack.STRUCTURAL["ex00"](calls) == {k}
    for d in (2, 11, 40):
        calls = [call("sliding_window_mask", (5, 5, 1, False)), call("sliding_window_mask", (2 * d + 3, 2 * d + 5, 1, False)),
                 call("sliding_window_mask", (4 * d + 3, 4 * d + 6, 2, False)),
                 call("sliding_window_mask", (2 * d + 4, 2 * d + 4, 1, True))]
        assert variant_attack.STRUCTURAL["ex08"](calls) == {d}
    assert variant_attack.STRUCTURAL["ex08"](calls[:1] + [call("sliding_window_mask", (50, 61, 1, False))] + calls[2:]) \
        == set()


def test_the_table_names_a_classmates_value_from_a_job_input_that_differs():
    """The table route recovers a value whenever a known classmate's job input is this job's and names one value."""
    jobs = {n: (float(n), [{"procedure": "call", "spec": {"args": [torch.full((2,), float(n))]}}]) for n in (1, 2, 3)}
    attacker = variant_attack.Attacker("ex01", 0.5, jobs)
    assert attacker.infer([{"procedure": "call", "spec": {"args": [torch.full((2,), 2.0)]}}]) == (2.0, "table")
    assert attacker.infer([{"procedure": "call", "spec": {"args": [torch.full((2,), 9.0)]}}]) == (0.5, "own")
    same = variant_attack.Attacker("ex01", 0.5, {n: (float(n), jobs[1][1]) for n in (1, 2)})
    assert same.infer(jobs[1][1]) == (0.5, "own")  # one input, two values: nothing named


@pytest.mark.slow  # grades the attack on 200 class variants of an exercise
@pytest.mark.parametrize("ex_id", EXERCISES)
def test_one_file_reading_its_job_input_passes_no_variant_of_another_value(ex_id):
    result = variant_attack.attack(ex_id, NUMBERS, ROOT)
    share = len(result["passed"]) / result["others"]
    print(f"\n{ex_id}: the attack passes {len(result['passed'])}/{result['others']} ({share:.1%}) of the variants of "
          f"another value (routes {dict(result['routes'])}; chance floor {result['floor']:.1%})")
    assert result["others"] >= 190, result["others"]  # the sample is spread over the values
    assert share <= MAX_OTHER_PASSES, (ex_id, result["passed"][:5], dict(result["routes"]))
    # the attack's file, graded the same way, passes where its value is right: its own variant
    assert variant_attack.attack(ex_id, [variant_attack.OWN_NUMBER], ROOT)["own"] == (1, 1), ex_id


ATTACK_PRELUDE = '''

def _solve_from_the_job():
    """Read this job's input from the harness's frames and set the default the cases ask for."""
    import sys
    frame = sys._getframe()
    while frame is not None and not (isinstance(frame.f_locals.get("job"), dict) and "calls" in frame.f_locals["job"]):
        frame = frame.f_back
    if frame is None:
        return
    calls = frame.f_locals["job"]["calls"]
@SOLVE@

_solve_from_the_job()
'''

SOLVERS = {  # per exercise: the structural solver's body, then the default set (the reference's signature)
    "ex00": '''    sizes = [c["spec"]["args"][1] for c in calls if c["spec"].get("fn") == "max_path_length"
             and c["spec"]["args"][:1] == ["cnn"] and "kernel_size" not in c["spec"].get("kwargs", {})
             and not c["spec"].get("kwargs", {}).get("dilated")]
    if len(sizes) >= 2 and sizes[1] == sizes[0] + 1:
        max_path_length.__defaults__ = (sizes[0], False)''',
    "ex08": '''    sides = [c["spec"]["args"][0] for c in calls if c["spec"].get("fn") == "sliding_window_mask"
             and c["spec"]["args"][3:4] == [True] and "dilation" not in c["spec"].get("kwargs", {})]
    if sides and (sides[-1] - 4) % 2 == 0:
        sliding_window_mask.__defaults__ = (False, (sides[-1] - 4) // 2)''',
}


@pytest.mark.slow  # grades in the strict sandbox
@pytest.mark.parametrize("ex_id", sorted(SOLVERS))
def test_a_file_reading_its_job_in_the_sandbox_fails_a_variant_of_another_value(ex_id):
    """The attack as a learner writes it: at import, in the strict sandbox, it finds the job's calls in the
    harness's frames and sets its default from the cases' sizes. Graded on three class variants whose values differ
    from the file's own, it fails all three; the same file left alone (its own value) passes its own variant."""
    from sandbox_helpers import require_strict

    require_strict()
    text = (ROOT / "solutions" / get_exercise(ex_id).filename).read_text(encoding="utf-8")
    attack = text + ATTACK_PRELUDE.replace("@SOLVE@", SOLVERS[ex_id])
    own = variant_attack.OWN_NUMBER
    own_file = _support().with_value(attack, ex_id, _value(ex_id, own))
    others = [n for n in _variant_numbers(ex_id, 4) if _value(ex_id, n) != _value(ex_id, own)][:3]
    needs = {d: (ROOT / "solutions" / get_exercise(d).filename).read_text(encoding="utf-8")
             for d in get_exercise(ex_id).needs}  # the dependencies as a learner who passed them has them
    submissions = [Submission(ex_id, own_file, "attack.py", dependencies=needs, variant=n) for n in others + [own]]
    results = grade_submissions(submissions, SandboxLimits(timeout_s=60, mode="strict"))
    assert [r.status for r in results[:-1]] == ["failed"] * len(others), [r.summary for r in results]
    assert results[-1].passed, results[-1].summary


def _support():
    from tests import exercise_variant_support

    return exercise_variant_support
