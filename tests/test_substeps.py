"""Sub-step localisation inside multi-head attention (ex05) and the Transformer blocks (ex07): when a
module's output differs, the feedback names the first intermediate value that differs (the queries after
transpose_qkv, the per-head output, the merged heads, an AddNorm's input, a sub-layer's output, the state
returned). The values are recorded where the learner's code runs (the sandbox child) and checked before
they are read.

tests/step_bugs/exNN/*.py are learner-written buggy files: line 2 is
`# located: <part of a failing check's name> | <phrase the location must contain>`.
"""

import re
from pathlib import Path

import pytest
import torch

from grader import checks as checks_registry
from grader.core import Submission, grade_submissions, reference_modules
from grader.harness import load_procedures, seed_call

ROOT = Path(__file__).resolve().parent
BUGS = sorted((ROOT / "step_bugs").glob("ex*/*.py"))
VARIANTS = sorted((ROOT / "variants" / "ex05").glob("*.py")) + sorted((ROOT / "variants" / "ex07").glob("*.py"))
PROCEDURES = load_procedures()


def expectation(path):
    line = path.read_text(encoding="utf-8").splitlines()[1]
    check, phrase = line.split(":", 1)[1].split("|")
    return check.strip(), phrase.strip()


def grade(paths, lang="en", sandbox=None):
    submissions = [Submission(p.parent.name, p.read_text(encoding="utf-8"), p.name) for p in paths]
    return dict(zip(paths, grade_submissions(submissions, lang=lang, sandbox=sandbox)))


@pytest.fixture(scope="module")
def graded():
    return grade(BUGS + VARIANTS)


def test_there_are_located_bugs_for_both_exercises():
    assert {p.parent.name for p in BUGS} == {"ex05", "ex07"}
    assert len(BUGS) >= 8


@pytest.mark.slow  # grades every file
@pytest.mark.parametrize("path", BUGS, ids=[f"{p.parent.name}/{p.stem}" for p in BUGS])
def test_the_first_differing_value_is_named(path, graded):
    result = graded[path]
    assert result.status == "failed"
    check, phrase = expectation(path)
    located = [c.message for c in result.checks if not c.passed and check in c.name and "Located:" in c.message]
    assert located, [(c.name, c.message) for c in result.checks if not c.passed]
    for message in located:
        assert phrase in message.split("Located:", 1)[1], message


@pytest.mark.slow  # grades every file
@pytest.mark.parametrize("path", VARIANTS, ids=[f"{p.parent.name}/{p.stem}" for p in VARIANTS])
def test_a_correct_variant_still_passes_without_hint_or_location(path, graded):
    result = graded[path]
    assert result.passed, [(c.name, c.message) for c in result.checks if not c.passed][:2]
    assert not [c for c in result.checks if c.hint or "Located:" in c.message]


@pytest.mark.slow  # grades in Chinese
def test_the_location_in_chinese_uses_full_width_punctuation():
    paths = [ROOT / "step_bugs" / "ex05" / "heads_merged_head_major.py",
             ROOT / "step_bugs" / "ex07" / "decoder_returns_old_state.py"]
    results = grade(paths, lang="zh")
    wanted = {paths[0]: "合并后的各头", paths[1]: "各块返回的状态"}
    for path, result in results.items():
        messages = [c.message for c in result.checks if not c.passed and "定位：" in c.message]
        assert messages, [c.message for c in result.checks if not c.passed]
        for message in messages:  # every location in full-width punctuation
            assert not re.search(r"[\u4e00-\u9fff][,;:]", message.split("定位：", 1)[1]), message
        # the module check's location (a function check before it may locate its own output, without a ；)
        located = next((m.split("定位：", 1)[1] for m in messages if wanted[path] in m.split("定位：", 1)[1]
                        and "；" in m.split("定位：", 1)[1]), messages)
        assert wanted[path] in located, located
        assert "；" in located and not re.search(r"[\u4e00-\u9fff][,;:]", located), located


@pytest.mark.slow  # the strict sandbox
def test_the_values_are_recorded_in_the_strict_sandbox_too():
    path = ROOT / "step_bugs" / "ex05" / "split_wrong_axis.py"
    deps = {ex: (ROOT.parent / "solutions" / f).read_text(encoding="utf-8")
            for ex, f in (("ex01", "ex01_softmax.py"), ("ex03", "ex03_scoring.py"))}
    submission = Submission("ex05", path.read_text(encoding="utf-8"), path.name, dependencies=deps)
    result = grade_submissions([submission], sandbox="strict")[0]
    messages = [c.message for c in result.checks if not c.passed and "MultiHeadAttention" in c.name]
    assert messages and all("the queries after transpose_qkv" in m for m in messages), messages


# ---- the locator reads the learner's values as untrusted data ---------------------------------------


def _mha_check():
    return next(c for c in checks_registry.for_exercise("ex05").build()
                if c.target == "MultiHeadAttention" and c.procedure == "module_forward" and c.locate)


def _reference(check, index=0):
    seed_call(index)
    return PROCEDURES[check.procedure](reference_modules, check.spec)


def test_the_reference_records_every_probe_it_is_asked_for():
    check = _mha_check()
    results = _reference(check)
    for name, _, _ in check.spec["probes"]:
        assert isinstance(results.get(f"probe.{name}"), torch.Tensor), name
    # what the attention gets: (B * heads, n_q, d) for the 2 examples, 4 queries and 3 heads of 4 values
    assert results["probe.mha_queries"].shape == (6, 4, 4)
    assert results["probe.mha_merged"].shape == (2, 4, 12)


def test_the_locator_names_the_first_difference_and_survives_odd_values():
    check = _mha_check()
    reference = _reference(check)
    got = dict(reference)
    assert check.locate(reference, got, check.spec) is None  # nothing differs
    got["probe.mha_heads"] = reference["probe.mha_heads"] + 1.0
    got["output"] = reference["output"] + 1.0
    assert check.locate(reference, got, check.spec)[1]["step"][0] == "step.name.mha_heads"
    got["probe.mha_keys"] = "<Evil>"  # not a tensor: said missing, nothing raised
    assert check.locate(reference, got, check.spec)[0] == "step.first_missing"
    got["probe.mha_keys"] = torch.zeros(1, 2)
    assert check.locate(reference, got, check.spec)[0] == "step.first_shape"
    del got["probe.mha_keys"]  # not recorded (the learner's code has no such call): passed over
    assert check.locate(reference, got, check.spec)[1]["step"][0] == "step.name.mha_heads"


def test_recording_changes_no_result():
    for ex_id in ("ex05", "ex07"):
        for index, check in enumerate(checks_registry.for_exercise(ex_id).build()):
            if not check.spec.get("probes"):
                continue
            seed_call(index)
            bare = PROCEDURES[check.procedure](reference_modules, dict(check.spec, probes=(), probe_state=False))
            probed = _reference(check, index)
            assert set(probed) - set(bare) == {k for k in probed if k.startswith("probe.")}
            for key, value in bare.items():
                if isinstance(value, torch.Tensor):
                    assert torch.equal(value, probed[key]), (check.id, key)
                else:
                    assert value == probed[key], (check.id, key)


# ---- every other exercise: the sub-step said from the parts, the weights, the values and the cases -----


def test_the_parts_each_function_uses_come_from_the_references_tree():
    from grader.diagnosis import substeps

    assert substeps.uses("ex00")["max_path_length"] == {"receptive_field"}
    assert "softmax" in substeps.uses("ex01")["masked_softmax"]
    assert substeps.uses("ex02")["NWKernelRegression"] == {"gaussian_kernel_weights"}
    assert substeps.uses("ex09")["RotaryDotProductAttention"] == {"RotaryEmbedding"}


def _located_output(want, have):
    """What `locate` says of one failing check of ex01's masked_softmax (no part of it tested, no other call to
    compare with) whose reference output is `want` and the learner's `have`."""
    from types import SimpleNamespace

    from grader.diagnosis import substeps

    check = SimpleNamespace(target="masked_softmax", spec={}, tolerance_dtype=None)
    return substeps.locate("ex01", 0, [check], [{"output": want}], [{"ok": {"output": have}}],
                           [SimpleNamespace(passed=False)], "en")


def test_weights_that_differ_only_at_masked_keys_point_at_the_mask():
    from grader.text import render

    want = torch.tensor([[[0.25, 0.75, 0.0], [1.0, 0.0, 0.0]]])  # (1, 2, 3): the last keys masked
    leaked = torch.tensor([[[0.25, 0.75, 0.0], [1.0, 0.0, 0.5]]])
    assert _located_output(want, leaked) == render(("step.masked_only", {"result": "output", "index": "(0, 1, 2)"}),
                                                   "en")
    spread = torch.tensor([[[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]]])  # first off at (0, 0, 0), a readable key
    assert _located_output(want, spread) == render(("step.readable_only", {"result": "output", "index": "(0, 0, 0)"}),
                                                   "en")
    assert _located_output(want, want.clone()) == render(("step.values_agree", {}), "en")  # no weights step said
