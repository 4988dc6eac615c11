"""The training lab's child processes: a live run with the reference modules, and with a learner's
exercises/ (a passing copy of the solutions; failing copies give a clear message naming the file)."""

import json
import shutil
from dataclasses import replace

import pytest
from sandbox_helpers import leave_grandchild, pid_gone

from course.app import lab_runner
from course.common.paths import PROJECT_ROOT
from course.lessons import training_lab as tl
from tests.waiting import wait_until

pytestmark = pytest.mark.slow  # each test starts a training child process

TINY = tl.LabConfig(task="copy", num_hiddens=16, num_heads=2, ffn_num_hiddens=32, seq_len=5, batch_size=16,
                    steps=30, warmup=5, log_every=10, snapshot_every=15, eval_size=16)
PASSED = {ex: {"passed": True} for ex in ("ex01", "ex03", "ex05", "ex06", "ex07")}


def finished(live, timeout=300):
    """The child's run once it ends (LabRunError passes through)."""
    return wait_until(lambda: lab_runner.result(live), timeout, "the training child to finish", interval=0.1)


@pytest.fixture
def learner_dir(tmp_path):
    """A learner's exercises/ folder holding a copy of the reference solutions."""
    folder = tmp_path / "exercises"
    shutil.copytree(PROJECT_ROOT / "solutions", folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def test_only_ex05_to_ex07_passing_makes_the_learner_ready():
    assert lab_runner.learner_ready(PASSED)
    assert not lab_runner.learner_ready(dict(PASSED, ex06={"passed": False}))
    assert not lab_runner.learner_ready({"ex05": {"passed": True}, "ex07": {"passed": True}})
    chosen = lab_runner.learner_modules({"ex05": {"passed": True}, "ex06": {"passed": True}, "ex07": {"passed": True}})
    assert chosen["ex05_multihead"] == "learner" and chosen["ex01_softmax"] == "reference"


def test_a_passing_copy_of_the_solutions_trains_the_same_curve_as_the_reference(learner_dir):
    run = finished(lab_runner.start(TINY, "baseline", learner=PASSED, exercises_dir=learner_dir))
    reference = tl.train(TINY, keep_maps=False)
    assert run["learner"] and run["steps_done"] == TINY.steps
    assert run["loss"] == reference["loss"] and run["tests"] == reference["tests"]
    assert run["snapshots"] == []


def test_the_learners_code_really_runs_in_the_child(learner_dir):
    ffn = learner_dir / "ex07_transformer.py"
    text = ffn.read_text()
    marker = "        return self.dense2(self.relu(self.dense1(X)))"
    assert marker in text
    ffn.write_text(text.replace(marker, "        return 0.0 * self.dense2(self.relu(self.dense1(X)))"))
    run = finished(lab_runner.start(TINY, "baseline", learner=PASSED, exercises_dir=learner_dir))
    assert run["loss"] != tl.train(TINY, keep_maps=False)["loss"]


def test_the_unfinished_exercise_files_give_a_message_naming_the_file():
    with pytest.raises(lab_runner.LabRunError, match=r"not finished.*ex0[567]_\w+\.py, line \d+"):
        finished(lab_runner.start(TINY, "baseline", learner=PASSED, exercises_dir=PROJECT_ROOT / "exercises"))


def test_a_crashing_learner_module_is_reported_with_its_line(learner_dir):
    mha = learner_dir / "ex05_multihead.py"
    text = mha.read_text()
    mha.write_text(text.replace("def transpose_output(X, num_heads):\n",
                                "def transpose_output(X, num_heads):\n    X = X.reshape(-1, 7, 3)\n", 1))
    with pytest.raises(lab_runner.LabRunError, match=r"RuntimeError.*ex05_multihead\.py, line \d+"):
        finished(lab_runner.start(TINY, "baseline", learner=PASSED, exercises_dir=learner_dir))


def test_a_process_the_learners_module_leaves_running_ends_with_the_run(learner_dir, tmp_path):
    marker = tmp_path / "left.pid"
    ffn = learner_dir / "ex07_transformer.py"
    ffn.write_text(ffn.read_text() + leave_grandchild(marker))  # it outlives the training unless its group is killed
    run = finished(lab_runner.start(TINY, "baseline", learner=PASSED, exercises_dir=learner_dir))
    assert run["steps_done"] == TINY.steps
    assert pid_gone(int(marker.read_text())), "the learner's process outlived its training run"


def test_a_live_reference_run_in_a_child_keeps_its_maps():
    run = finished(lab_runner.start(replace(TINY, task="reverse"), "one_head"))
    assert run["variant"] == "one_head" and not run.get("learner")
    assert [s["step"] for s in run["snapshots"]] == [0, 15, 30]


def test_a_run_that_is_not_as_train_writes_it_is_refused():
    good = tl.train(replace(TINY, steps=10), keep_maps=False)
    assert tl.check_run(json.loads(json.dumps(good)), 10) is not None
    for bad, where in ((dict(good, loss=[float("nan")]), "loss"), (dict(good, loss="x"), "loss"),
                       (dict(good, steps_done=11), "steps_done"), (dict(good, tests=[{"step": 0}]), r"tests\[0\]"),
                       (dict(good, final_seq_acc=2), "final_seq_acc"), (dict(good, snapshots=[{}]), "snapshots"),
                       ([], "the run")):
        with pytest.raises(ValueError, match=where):
            tl.check_run(bad, 10)
