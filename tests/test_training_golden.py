"""The training loops and models of today reproduce what the code before their rebuild on one loop and one
Transformer composition computed (tests/golden/training.json, recorded from that older code by
tests/golden/record_training.py): the lab's runs (baseline, every ablation, decoder-only, the sentence-pair and
character tasks, a stopped run), the bottleneck and scaling experiments, chapter 2's fit and the translators'
training command, each to 1e-6. The lab's parameters are compared under the names its blocks have today
(LAB_OLD_TO_NEW)."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # trains about fifty small models

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).with_name("golden")


@pytest.fixture(scope="module")
def today(tmp_path_factory):
    """The recorder's output for this checkout (hash seed fixed as when the golden file was written)."""
    out = tmp_path_factory.mktemp("golden") / "today.json"
    env = dict(os.environ, PYTHONHASHSEED="0")
    subprocess.run([sys.executable, str(GOLDEN / "record_training.py"), str(ROOT), str(out)], check=True, env=env,
                   cwd=ROOT, stdout=subprocess.DEVNULL)
    return json.loads(out.read_text(encoding="utf-8"))


# The lab's blocks were its own when the golden file was recorded; they are exercise 7's now, whose parameters have
# other names (the same tensors: course.lessons.lab_blocks). Within a block, an old name's part -> the new one.
LAB_OLD_TO_NEW = {
    "sub1.norm": "addnorm1.ln",  # SubLayer's LayerNorm -> AddNorm's, for each sub-layer
    "sub2.norm": "addnorm2.ln",
    "sub3.norm": "addnorm3.ln",
    "self_attention": "attention1",  # the decoder block's causal self-attention
    "cross_attention": "attention2",  # its attention over the encoder
}


def lab_name(key):
    """A parameter's name in the lab's model today, from its name when the golden file was recorded."""
    for old, new in LAB_OLD_TO_NEW.items():
        key = key.replace(f".{old}.", f".{new}.")
    return key


def renamed_lab(lab):
    """The golden file's lab part with every parameter name as the model names it today: the weights'
    summaries under the new keys (sorted, as the recorder's JSON writes every object's keys), init_keys in
    their recorded order. Only names change; every expected number is the recorded one."""
    out = {}
    for name, record in lab.items():
        if name == "init_keys":
            out[name] = [lab_name(k) for k in record]
        else:
            weights = {lab_name(k): v for k, v in record["weights"].items()}
            assert len(weights) == len(record["weights"]), "two old names map to one new name"
            out[name] = dict(record, weights=dict(sorted(weights.items())))
    return out


@pytest.fixture(scope="module")
def golden():
    data = json.loads((GOLDEN / "training.json").read_text(encoding="utf-8"))
    return dict(data, lab=renamed_lab(data["lab"]))


def differences(expected, found, where=""):
    """['where: expected X, found Y', ...]: numbers may differ by 1e-6 (relative for large ones), all else exactly."""
    if isinstance(expected, dict) and isinstance(found, dict):
        if list(expected) != list(found):
            return [f"{where}: keys {sorted(set(expected) ^ set(found))} differ"]
        return [d for k in expected for d in differences(expected[k], found[k], f"{where}.{k}")]
    if isinstance(expected, list) and isinstance(found, list):
        if len(expected) != len(found):
            return [f"{where}: {len(expected)} items expected, {len(found)} found"]
        return [d for i, (a, b) in enumerate(zip(expected, found)) for d in differences(a, b, f"{where}[{i}]")]
    numbers = (int, float)
    if isinstance(expected, numbers) and isinstance(found, numbers) and not isinstance(expected, bool):
        if math.isclose(expected, found, rel_tol=1e-6, abs_tol=1e-6):
            return []
    elif expected == found:
        return []
    return [f"{where}: expected {expected!r}, found {found!r}"]


@pytest.mark.parametrize("part", ["lab", "bottleneck", "scaling", "ch02", "translation"])
def test_training_reproduces_the_numbers_recorded_before_the_rebuild(part, today, golden):
    assert golden["torch"] == today["torch"], "recorded with another torch: rerun the recorder on the old commit"
    found = differences(golden[part], today[part], part)
    assert not found, "\n".join(found[:20])


def test_the_renaming_touches_only_the_lab_blocks_old_parts():
    assert lab_name("decoder.1.sub3.norm.weight") == "decoder.1.addnorm3.ln.weight"
    assert lab_name("decoder.0.cross_attention.W_q.weight") == "decoder.0.attention2.W_q.weight"
    assert lab_name("encoder.0.attention.W_q.weight") == "encoder.0.attention.W_q.weight"
    assert lab_name("encoder.0.ffn.dense1.bias") == "encoder.0.ffn.dense1.bias"
    lab = {"init_keys": ["b.0.sub1.norm.weight", "a.0.ffn.x"], "r": {"run": {"loss": [1.0]},
                                                                     "weights": {"b.0.sub1.norm.weight": [2.0]}}}
    assert renamed_lab(lab) == {"init_keys": ["b.0.addnorm1.ln.weight", "a.0.ffn.x"],
                                "r": {"run": {"loss": [1.0]}, "weights": {"b.0.addnorm1.ln.weight": [2.0]}}}


def test_the_comparison_can_fail():
    assert differences({"a": [1.0, 2.0]}, {"a": [1.0, 2.00001]}) == [".a[1]: expected 2.0, found 2.00001"]
    assert differences({"a": 1}, {"b": 1}) and differences([1], [1, 2]) and differences("x", "y")
    assert not differences({"a": [1.0, "s"]}, {"a": [1.0 + 1e-9, "s"]})
