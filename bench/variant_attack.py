"""The variant attack: one file, for every learner's variant, that reads its job input and solves for the value.

    python bench/variant_attack.py [--variants 200] [--exercises ex00 ex08 ...] [--root PATH]

A class gives each learner their own value of an exercise's parameter (course/common/exercise_variants.py), which
the learner writes as the parameter's default; the grader adds cases that leave it to that default
(grader/variants.py). Those cases are in the learner's job (grader/core.job_calls: input.pt, which the learner's
code can read from its files or from the harness's stack frames), so a file that can tell its variant's value
from them passes every learner's variant. The attacker here knows the grader's source, their own variant, and
the variant numbers of the classmates it is measured on (a report shows its variant number). Per exercise:

- structural: the value solved from the sizes of the variant's cases, where their sizes were built from it (ex00:
  `max_path_length("cnn", k)` and then k + 1; ex08: the causal window of side 2d + 4 beside one of 4d + 3), taken
  only when every such case agrees with one value;
- table: the job input of each known classmate's variant, rebuilt as the grader builds it (its cases drawn from
  the variant's number), matched against this job's input; taken when it names one value;
- else the attacker's own value (it must pass its own variant too).

The file then behaves as the reference with that value as its default (the reference's parameter default
rewritten, as tests/exercise_variant_support.personalise writes a learner's file). It is graded in process on
the checks its variant changes (tests/exercise_variant_support.judge_in_process, the grader's own procedures and
verdicts), over --variants class variants (the numbers tests/test_exercise_variants.py samples), each graded
with an unknown seed where the exercise draws its cases per run (core._build_checks: the run's nonce).

Prints, per exercise, the share of the other variants (value unlike the attacker's own) the one file passes, the
share it passed by each route, and the chance floor (one value's share of the variants: a plain file written for
the commonest value passes that many, and no grader can do better). --root grades another tree (an export of
main, for the figures before a change); this file and the tests' helpers of that tree are used.
"""

import argparse
import hashlib
import random
import sys
import time
from collections import Counter
from pathlib import Path

DEFAULT_ROOT = Path(__file__).resolve().parent.parent
SAMPLE_SEED = 20261205  # tests/test_exercise_variants.py SAMPLED: the class variants measured
OWN_NUMBER = 1_234_567  # the attacker's own variant number (not among the sampled ones)


def sampled_numbers(count, max_variant):
    """The class variant numbers measured: tests/test_exercise_variants.py's SAMPLED, its first `count`."""
    return random.Random(SAMPLE_SEED).sample(range(1, max_variant + 1), 200)[:count] if count <= 200 else \
        random.Random(SAMPLE_SEED).sample(range(1, max_variant + 1), count)


def fingerprint(value, digest=None):
    """A sha256 hex digest of a job input (nested dicts, lists, tensors, numbers, strings): equal inputs, equal
    digests, whatever object identities they had."""
    import torch

    top = digest is None
    digest = hashlib.sha256() if top else digest
    if isinstance(value, torch.Tensor):
        flat = value.detach().contiguous().reshape(-1)
        digest.update(f"T{value.dtype}{tuple(value.shape)}".encode())
        digest.update(flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b"")
    elif isinstance(value, dict):
        digest.update(b"D")
        for key in sorted(value, key=repr):
            digest.update(repr(key).encode())
            fingerprint(value[key], digest)
    elif isinstance(value, (list, tuple)):
        digest.update(f"L{len(value)}".encode())
        for item in value:
            fingerprint(item, digest)
    else:
        digest.update(f"{type(value).__name__}:{value!r}".encode())
    return digest.hexdigest() if top else None


# ---- structural: the sizes of main's variant cases, solved for the value -------------------------------


def _ex00_kernel(calls):
    """{k} where the undilated CNN path lengths left to the default have sizes k, k + 1 first (main's cases)."""
    sizes = [c["spec"]["args"][1] for c in calls
             if c["spec"].get("fn") == "max_path_length" and c["spec"]["args"][:1] == ["cnn"]
             and "kernel_size" not in c["spec"].get("kwargs", {}) and not c["spec"].get("kwargs", {}).get("dilated")]
    if len(sizes) >= 2 and isinstance(sizes[0], int) and sizes[0] >= 2 and sizes[1] == sizes[0] + 1:
        return {sizes[0]}
    return set()


def _ex08_dilation(calls):
    """{d} where the windows left to the default dilation are main's three: sides 2d+2..2d+5 (half width 1),
    4d+3 by 4d+1..4d+6 (half width 2), and a causal 2d+4 square (half width 1)."""
    windows = [tuple(c["spec"]["args"]) for c in calls
               if c["spec"].get("fn") == "sliding_window_mask" and "dilation" not in c["spec"].get("kwargs", {})]
    if len(windows) < 3:
        return set()
    (q1, k1, h1, c1), (q2, k2, h2, c2), (q3, k3, h3, c3) = windows[-3:]
    if not (h1, h2, h3, c1, c2, c3) == (1, 2, 1, False, False, True) or q3 != k3 or (q3 - 4) % 2:
        return set()
    d = (q3 - 4) // 2
    agree = d >= 1 and 2 * d + 2 <= q1 <= 2 * d + 5 and 2 * d + 2 <= k1 <= 2 * d + 5 and q2 == 4 * d + 3 \
        and 4 * d + 1 <= k2 <= 4 * d + 6
    return {d} if agree else set()


STRUCTURAL = {"ex00": _ex00_kernel, "ex08": _ex08_dilation}


class Attacker:
    """One learner's file for every variant of an exercise: the value it uses for a job input, and by which route."""

    def __init__(self, ex_id, own_value, known_jobs):
        """known_jobs: {number: (value, job calls the attacker rebuilt for it)}."""
        self.ex_id, self.own_value = ex_id, own_value
        self.table = {}
        for value, calls in known_jobs.values():
            self.table.setdefault(fingerprint(calls), set()).add(value)

    def infer(self, calls):
        """(value, route): route "structural", "table" or "own"."""
        solved = STRUCTURAL.get(self.ex_id, lambda calls: set())(calls)
        if len(solved) == 1:
            return next(iter(solved)), "structural"
        named = self.table.get(fingerprint(calls), set())
        if len(named) == 1:
            return next(iter(named)), "table"
        return self.own_value, "own"


def attack(ex_id, numbers, root=DEFAULT_ROOT, own_number=OWN_NUMBER):
    """{"passed": [numbers passed among those of another value than the attacker's], "others": their count,
    "routes": Counter of the routes of those passes, "own": (passed, count) of the numbers of the attacker's own
    value, "floor": the commonest value's share of `numbers`, "seconds": time}."""
    import torch

    from course.common.exercise_index import get as get_exercise
    from grader import checks as checks_registry
    from grader import core, variants
    from tests import exercise_variant_support as support

    start = time.perf_counter()
    torch.set_num_threads(1)
    module = checks_registry.for_exercise(ex_id)
    drawn = getattr(module, "CASES_DRAWN", False)
    job_calls = getattr(core, "job_calls", None) or (
        lambda checks: [{"procedure": c.procedure, "spec": variants.learner_spec(c.spec)} for c in checks])

    def value(number):
        return variants.variant(ex_id, number).kwargs()[variants.PARAMETERS[ex_id].name]

    def graded_checks(number):
        # a run's seed from its nonce where the exercise draws its cases (unknown to the attacker), else none
        seed = random.Random(f"attack-run:{ex_id}:{number}").getrandbits(64) if drawn else None
        return [c for c in variants.build_checks(module, variants.variant(ex_id, number), seed)
                if c.procedure != "demo_translations"]

    graded = {n: graded_checks(n) for n in numbers}
    # the attacker rebuilds its classmates' jobs as the grader builds them, with no seed (a run's is unknown)
    rebuilt = {n: (value(n), job_calls(graded[n] if not drawn else
                                       [c for c in variants.build_checks(module, variants.variant(ex_id, n))
                                        if c.procedure != "demo_translations"]))
               for n in numbers}
    own = value(own_number)
    attacker = Attacker(ex_id, own, rebuilt)
    source = (root / "solutions" / get_exercise(ex_id).filename).read_text(encoding="utf-8")
    files, passed, routes, own_passed = {}, [], Counter(), []
    others = [n for n in numbers if value(n) != own]
    for n in numbers:
        guess, route = attacker.infer(job_calls(graded[n]))
        if guess not in files:
            files[guess] = support.load_module(ex_id, support.with_value(source, ex_id, guess),
                                               f"attack_{len(files)}")
        touched = [c for c in graded[n] if c.spec.get("variant")]
        if not support.judge_in_process(files[guess], touched, support.References(touched), first_only=True):
            if n in others:
                passed.append(n)
                routes[route] += 1
            else:
                own_passed.append(n)
    floor = max(Counter(value(n) for n in numbers).values()) / len(numbers)
    return {"passed": passed, "others": len(others), "routes": routes, "floor": floor,
            "own": (len(own_passed), len(numbers) - len(others)), "seconds": time.perf_counter() - start}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", type=int, default=200, help="class variants measured per exercise")
    parser.add_argument("--exercises", nargs="*", default=[f"ex{i:02d}" for i in range(10)])
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="the tree graded (default: this one)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    sys.path.insert(0, str(root))
    from grader import variants

    assert Path(variants.__file__).resolve().is_relative_to(root), variants.__file__  # the tree asked for
    numbers = sampled_numbers(args.variants, variants.MAX_VARIANT)
    print(f"tree: {root}; {len(numbers)} class variants per exercise")
    print(f"{'exercise':8}  {'passes other variants':>22}  {'by route':28}  {'chance floor':>12}  {'seconds':>7}")
    for ex_id in args.exercises:
        result = attack(ex_id, numbers, root)
        share = len(result["passed"]) / max(result["others"], 1)
        routes = ", ".join(f"{k} {v}" for k, v in sorted(result["routes"].items())) or "-"
        print(f"{ex_id:8}  {len(result['passed']):>4}/{result['others']:<4} {share:>7.1%}      {routes:28}  "
              f"{result['floor']:>12.1%}  {result['seconds']:>7.1f}", flush=True)


if __name__ == "__main__":
    main()
