"""The training loops and models of today reproduce what the code before their rebuild on one loop and one
Transformer composition computed (tests/golden/training.json, recorded from that older code by
tests/golden/record_training.py): the lab's runs (baseline, every ablation, decoder-only, the sentence-pair and
character tasks, a stopped run), the bottleneck and scaling experiments, chapter 2's fit and the translators'
training command, each to 1e-6."""

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


@pytest.fixture(scope="module")
def golden():
    return json.loads((GOLDEN / "training.json").read_text(encoding="utf-8"))


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


def test_the_comparison_can_fail():
    assert differences({"a": [1.0, 2.0]}, {"a": [1.0, 2.00001]}) == [".a[1]: expected 2.0, found 2.00001"]
    assert differences({"a": 1}, {"b": 1}) and differences([1], [1, 2]) and differences("x", "y")
    assert not differences({"a": [1.0, "s"]}, {"a": [1.0 + 1e-9, "s"]})
