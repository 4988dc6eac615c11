"""The grader's demo stage: a trained checkpoint rebuilt from the learner's module must translate like ours.

Tiny seeded checkpoints (tests/demo_fixtures.py) stand in for the trained ones:
identity of translations does not need good translations.
"""

import re
from pathlib import Path

import pytest
import torch
from demo_fixtures import write_tiny_checkpoints

from course.translation import demos
from course.translation.checkpoint import load_checkpoint
from course.translation.decoding import greedy_decode
from course.translation.vocab import BOS_ID, EOS_ID, PAD_ID, tokenize_en
from grader import checks as checks_registry
from grader.checks.demo import NAME, demo_check
from grader.text import render
from grader.core import Submission, grade_submissions, reference_modules
from grader.harness import load_procedures
from grader.mistakes import apply_mistake

pytestmark = pytest.mark.slow  # writes and translates with tiny checkpoints per module

ROOT = Path(__file__).resolve().parent.parent
PROCEDURES = load_procedures()


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    return write_tiny_checkpoints(tmp_path_factory.mktemp("checkpoints"), names=("bahdanau", "transformer"),
                                  reports=False)


@pytest.fixture
def use_checkpoints(checkpoints, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_CHECKPOINTS", str(checkpoints))
    return checkpoints


def source(module):
    return (ROOT / "solutions" / f"{module}.py").read_text(encoding="utf-8")


def mistaken(ex_id, mistake_id):
    mistake = next(m for m in checks_registry.for_exercise(ex_id).MISTAKES if m.id == mistake_id)
    module = {"ex04": "ex04_bahdanau", "ex06": "ex06_positional_encoding", "ex07": "ex07_transformer"}[ex_id]
    return apply_mistake(source(module), mistake)


def probes_agreeing(check_result):
    """The k of 'k/8 probe sentences ...' in a demo check's message."""
    match = re.match(r"(\d+)/(\d+) probe sentences", check_result.message)
    assert match, check_result.message
    assert int(match[2]) == len(demos.PROBE_SENTENCES)
    return int(match[1])


@pytest.fixture(scope="module")
def graded(checkpoints):
    """One sandbox run: references, known mistakes and a stub, each graded with the demo stage."""
    mp = pytest.MonkeyPatch()
    mp.setenv("ATTENTION_LAB_CHECKPOINTS", str(checkpoints))
    submissions = {
        "ex04 reference": Submission("ex04", source("ex04_bahdanau"), "ex04_bahdanau.py"),
        "ex04 query_bottom_layer": Submission("ex04", mistaken("ex04", "query_bottom_layer"), "ex04_bahdanau.py"),
        "ex04 cat_order": Submission("ex04", mistaken("ex04", "cat_order"), "ex04_bahdanau.py"),
        "ex04 stub": Submission("ex04", (ROOT / "exercises" / "ex04_bahdanau.py").read_text(), "ex04_bahdanau.py"),
        "ex06 reference": Submission("ex06", source("ex06_positional_encoding"), "ex06_positional_encoding.py"),
        "ex06 sin_cos_swapped": Submission("ex06", mistaken("ex06", "sin_cos_swapped"), "ex06.py"),
        "ex07 reference": Submission("ex07", source("ex07_transformer"), "ex07_transformer.py"),
        "ex07 cross_attention_on_x": Submission("ex07", mistaken("ex07", "cross_attention_on_x"), "ex07.py"),
    }
    try:
        results = grade_submissions(list(submissions.values()))
    finally:
        mp.undo()
    return {label: _demo_of(result.checks) for label, result in zip(submissions, results)}


def _demo_of(checks):
    """The demo stage's check among an exercise's (not always the last: checks added later are appended); for a
    file that was never started, its one 'not started' check."""
    demos_ = [check for check in checks if check.name in (NAME, render(NAME))]
    assert len(demos_) == 1 or (not demos_ and len(checks) == 1), [check.name for check in checks]
    return demos_[0] if demos_ else checks[0]


@pytest.mark.parametrize("label", ["ex04 reference", "ex06 reference", "ex07 reference"])
def test_reference_modules_translate_every_probe_identically(graded, label):
    check = graded[label]
    assert check.name == render(NAME)
    assert check.passed, check.message
    assert probes_agreeing(check) == len(demos.PROBE_SENTENCES)


@pytest.mark.parametrize("label", ["ex04 query_bottom_layer", "ex04 cat_order", "ex06 sin_cos_swapped",
                                   "ex07 cross_attention_on_x"])
def test_a_known_mistake_fails_the_demo_stage(graded, label):
    check = graded[label]
    assert not check.passed and check.kind == "mismatch"
    assert probes_agreeing(check) < len(demos.PROBE_SENTENCES)
    assert "first difference" in check.message and "'" in check.message


def test_an_unwritten_module_is_reported_as_not_written(graded):
    check = graded["ex04 stub"]
    assert not check.passed and check.kind == "not_implemented"


def test_without_a_checkpoint_the_stage_is_skipped_with_the_training_command(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_CHECKPOINTS", str(tmp_path))
    for ex_id, model in (("ex04", "bahdanau"), ("ex07", "transformer")):
        check = _demo_of(checks_registry.for_exercise(ex_id).build())
        got = PROCEDURES[check.procedure](reference_modules, check.spec)
        passed, message = check.judge(got, got, check.spec)
        message = render(message)
        assert passed and message.startswith("skipped")
        assert f"python -m course.translation.train --model {model}" in message and str(tmp_path) in message


def test_the_procedure_decodes_like_course_decoding(use_checkpoints):
    """Independent derivation: ids from decoding.greedy_decode, logits from a teacher-forced forward."""
    for ex_id, model_name in (("ex04", "bahdanau"), ("ex07", "transformer")):
        check = demo_check(ex_id, model_name)
        got = PROCEDURES[check.procedure](reference_modules, check.spec)
        loaded = load_checkpoint(demos.checkpoint_path(model_name))
        for i, sentence in enumerate(demos.PROBE_SENTENCES):
            ids = loaded.src_vocab.encode_words(tokenize_en(sentence))
            src, lens = torch.tensor([ids]), torch.tensor([len(ids)])
            expected = greedy_decode(loaded.model, src, lens, max_len=check.spec["max_len"])[0][0]
            have = got[f"ids.{i}"].tolist()
            assert have[: len(expected)] == expected
            assert have[len(expected):] in ([EOS_ID], [])  # <eos> when emitted within max_len
            tgt_in = torch.tensor([[BOS_ID] + have[:-1]])  # (1, T)
            with torch.no_grad():
                logits = loaded.model(src, lens, tgt_in)[0]  # (T, V)
            torch.testing.assert_close(got[f"logits.{i}"], logits, rtol=1e-4, atol=1e-4)
            assert PAD_ID not in have


def test_the_judge_counts_disagreeing_probes(use_checkpoints):
    check = demo_check("ex04", "bahdanau")
    reference = PROCEDURES[check.procedure](reference_modules, check.spec)
    learner = dict(reference)
    last = int(reference["ids.2"][-1])
    learner["ids.2"] = torch.cat([reference["ids.2"][:-1], torch.tensor([4 if last != 4 else 5])])  # another last char
    learner["logits.5"] = reference["logits.5"] + 0.01  # the same characters, slightly different logits
    passed, message = check.judge(reference, learner, check.spec)
    message = render(message)
    assert not passed and message.startswith(f"{len(demos.PROBE_SENTENCES) - 2}/")
    assert demos.PROBE_SENTENCES[2] in message
    assert check.judge(reference, dict(reference), check.spec)[0]


def test_a_checkpoint_trained_again_is_read_again(tmp_path, monkeypatch):
    """The warm grading server keeps one process: a checkpoint replaced at the same path must not be served
    from the cache of the one it replaced."""
    monkeypatch.setenv("ATTENTION_LAB_CHECKPOINTS", str(tmp_path))
    write_tiny_checkpoints(tmp_path, names=("bahdanau",), reports=False, seed=0)
    before = demo_check("ex04", "bahdanau").spec["state_dict"]
    write_tiny_checkpoints(tmp_path, names=("bahdanau",), reports=False, seed=7)
    after = demo_check("ex04", "bahdanau").spec["state_dict"]
    written = load_checkpoint(tmp_path / "bahdanau.pt").model.state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before)
    assert all(torch.equal(after[k], written[k].float()) for k in written)
