"""Strict mode puts nothing of a reference in a job: no line of solutions/ and no tensor a reference computed.

Every exercise is graded in one strict run from its stub with a scanner appended: at import, in the
sandbox, it reads every file of its box (/job, /tmp), every string and tensor of its input and its
environment, and prints the fingerprints that match a secret. Secrets, fingerprinted here: each line of
solutions/ longer than 20 characters that appears nowhere in the learner's own material (exercises/,
course/), and each non-trivial tensor the references return for the checks of that run.

Not counted as reference-derived (decided, see grader/checks/base.reference_state and the demo stage):
the seeded random weights a check loads into the learner's module (random values drawn through the
reference class's constructor, like the seeded random inputs: they hold no answer) and the shipped
translation checkpoint (the trained weights every learner has in checkpoints/).
"""

import hashlib

import pytest
from sandbox_helpers import ROOT, require_strict

import torch
from course.common.exercise_index import EXERCISES
from grader import checks as checks_registry
from grader.checks.demo import strict_variant
from grader.core import Submission, run_reference_check, grade_submissions
from grader.sandbox import SandboxLimits
from grader.text import render

MIN_LINE = 20
SCANNER = '''

def _scan_for_references():
    """Fingerprints of everything this job can read, matched against the secrets' (test_strict_job_inputs)."""
    import hashlib as _hashlib
    import os as _os

    import torch as _torch

    lines, tensors, given = set(@LINES@), set(@TENSORS@), set(@GIVEN@)
    found, seen = [], {"files": 0, "strings": 0, "tensors": 0, "known": 0}

    def text(value, where):
        seen["strings"] += 1
        for line in value.splitlines():
            digest = _hashlib.sha256(line.strip().encode()).hexdigest()[:20]
            if digest in lines:
                found.append(f"line {digest} in {where}")

    def walk(value, where):
        if isinstance(value, str):
            text(value, where)
        elif isinstance(value, bytes):
            text(value.decode("utf-8", "replace"), where)
        elif isinstance(value, _torch.Tensor):
            seen["tensors"] += 1
            flat = value.detach().contiguous().reshape(-1)
            data = flat.view(_torch.uint8).numpy().tobytes() + str(value.dtype).encode()
            digest = _hashlib.sha256(data).hexdigest()[:20]
            if digest in tensors:
                found.append(f"tensor {digest} in {where}")
            seen["known"] += digest in given
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(key, where)
                walk(item, f"{where}.{key}")
        elif isinstance(value, (list, tuple, set)):
            for i, item in enumerate(value):
                walk(item, f"{where}[{i}]")

    for top in ("/job", "/tmp"):
        for folder, _, names in _os.walk(top):
            for name in names:
                path = _os.path.join(folder, name)
                try:
                    with open(path, "rb") as f:
                        data = f.read()
                except OSError:
                    continue
                seen["files"] += 1
                walk(data, path)
                if name.endswith(".pt"):
                    walk(_torch.load(path, weights_only=True), path)
    walk(dict(_os.environ), "environ")
    print("SCANNED", " ".join(f"{k}={v}" for k, v in seen.items()), flush=True)
    print(f"FOUND {len(found)}", *found[:12], sep="\\n", flush=True)


_scan_for_references()
'''


def fingerprint_line(line):
    return hashlib.sha256(line.strip().encode()).hexdigest()[:20]


def fingerprint_tensor(value):
    flat = value.detach().contiguous().reshape(-1)
    return hashlib.sha256(flat.view(torch.uint8).numpy().tobytes() + str(value.dtype).encode()).hexdigest()[:20]


def secret_lines():
    """{fingerprint: line} of the reference lines a learner's own material does not hold."""
    public = set()
    for folder in ("exercises", "course"):
        for path in (ROOT / folder).rglob("*.py"):
            public.update(line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    secrets = {}
    for path in sorted((ROOT / "solutions").glob("*.py")):
        for line in path.read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if len(line) > MIN_LINE and not line.startswith("#") and line not in public:
                secrets[fingerprint_line(line)] = f"{path.name}: {line}"
    return secrets


def spec_tensors(value, out):
    """Fingerprints of every tensor in a spec (what the grader gives the job)."""
    if isinstance(value, torch.Tensor):
        out.add(fingerprint_tensor(value))
    elif isinstance(value, dict):
        for item in value.values():
            spec_tensors(item, out)
    elif isinstance(value, (list, tuple)):
        for item in value:
            spec_tensors(item, out)
    return out


def reference_tensors(built):
    """({fingerprint: where} of the non-trivial tensors the references compute for these checks, but for
    those that only echo an input (`input_after`: the input after the call, for in-place edits),
    {fingerprints of the inputs})."""
    found, given = {}, set()
    for ex_id, checks in built.items():
        for index, check in enumerate(checks):
            spec_tensors(check.spec, given)
            for key, value in run_reference_check(index, check).items():  # seeded as the run seeds call `index`
                if isinstance(value, torch.Tensor) and value.numel() >= 4 and value.unique().numel() > 1:
                    found[fingerprint_tensor(value)] = f"{check.id} {key}"
    return {f: where for f, where in found.items() if f not in given}, given


@pytest.mark.slow
def test_no_strict_job_holds_a_reference_line_or_tensor():
    require_strict()
    built = {ex.id: [strict_variant(c) for c in checks_registry.for_exercise(ex.id).build()] for ex in EXERCISES}
    lines, (tensors, given) = secret_lines(), reference_tensors(built)
    assert len(lines) > 100 and len(tensors) > 50, (len(lines), len(tensors))  # the scan has something to find
    scanner = (SCANNER.replace("@LINES@", repr(sorted(lines))).replace("@TENSORS@", repr(sorted(tensors)))
               .replace("@GIVEN@", repr(sorted(given))))
    stubs = {ex.id: (ROOT / "exercises" / ex.filename).read_text(encoding="utf-8") for ex in EXERCISES}
    # the stubs stand in for the learner's own passed dependencies (as in class mode), so every job runs
    submissions = [Submission(ex.id, stubs[ex.id] + scanner, ex.filename,
                              dependencies={d: stubs[d] for d in ex.needs} or None) for ex in EXERCISES]
    results = grade_submissions(submissions, SandboxLimits(timeout_s=60, mode="strict"))
    for ex, result in zip(EXERCISES, results):
        said = result.output.splitlines()
        scanned = next((line for line in said if line.startswith("SCANNED files=")), None)
        assert scanned, (ex.id, result.summary, result.output)
        # the job's inputs are the ones fingerprinted here (else the tensor comparison would prove nothing)
        assert ex.id == "ex00" or int(scanned.rpartition("known=")[2]) > 0, (ex.id, scanned)
        found = [line.split()[1] for line in said if line.startswith(("line ", "tensor "))]
        named = [lines.get(f) or tensors.get(f) for f in found]
        assert "FOUND 0" in said, (ex.id, named, result.output[-1500:])


def test_the_strict_demo_stage_runs_on_own_modules_or_says_why_not():
    for ex_id, missing in (("ex04", []), ("ex05", ["ex06_positional_encoding.py", "ex07_transformer.py"]),
                           ("ex06", ["ex01_softmax.py", "ex03_scoring.py", "ex05_multihead.py", "ex07_transformer.py"]),
                           ("ex07", ["ex06_positional_encoding.py"])):
        [demo] = [c for c in checks_registry.for_exercise(ex_id).build() if c.procedure == "demo_translations"]
        if demo.spec.get("skip"):
            pytest.skip("no trained checkpoint here")
        strict = strict_variant(demo)
        assert strict.id == demo.id
        if not missing:
            assert strict.spec["reference_sources"] == {} and strict.call[0] == "demo.call_own"
            assert "reference" not in render(strict.call, "en")
            continue
        assert set(strict.spec) == {"skip"}, ex_id
        for lang in ("en", "zh"):
            said = render(strict.spec["skip"], lang)
            assert "--sandbox process" in said and all(name in said for name in missing), (lang, said)
