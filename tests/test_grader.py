"""The autograder end to end: references pass, stubs are 'not written yet',
known mistakes get their hints, and misbehaving code is contained."""

import json
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from course.app import progress
from course.common.exercise_index import EXERCISES
from grader import checks as checks_registry
from grader.core import Submission, grade, grade_submissions
from grader.mistakes import MistakeVariants, apply_mistake
from grader.sandbox import SandboxLimits
from grader.text import hint_text
from tests.grading_support import known_mistake_results

pytestmark = pytest.mark.slow  # grades the references, stubs and every known mistake in child processes; CLI runs

ROOT = Path(__file__).resolve().parent.parent
ALL_IDS = [ex.id for ex in EXERCISES]


def reference_source(ex):
    return (ROOT / "solutions" / ex.filename).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def reference_report(tmp_path_factory):
    target = tmp_path_factory.mktemp("references")
    for ex in EXERCISES:
        shutil.copy(ROOT / "solutions" / ex.filename, target / ex.filename)
    return grade(target)


@pytest.fixture(scope="module")
def stub_report():
    return grade(ROOT / "exercises")


def test_references_pass_every_check(reference_report):
    for ex in reference_report.exercises:
        failing = [c for c in ex.checks if not c.passed]
        assert ex.passed and ex.status == "passed" and ex.score == 1.0, (ex.id, failing[:1])
    assert reference_report.passed


@pytest.mark.parametrize("ex_id", ALL_IDS)
def test_every_exercise_has_several_checks(ex_id, reference_report):
    ex = next(e for e in reference_report.exercises if e.id == ex_id)
    assert len(ex.checks) >= 4


def test_pristine_stubs_are_not_written_yet(stub_report):
    for ex in stub_report.exercises:
        assert ex.status == "not_written", (ex.id, ex.summary)
        assert not ex.passed and ex.score == 0.0, (ex.id, ex.score)  # a check or two may pass: still 0
        # one line naming what to write, not one failure per check
        assert ex.summary == f"not started: write {', '.join(ex_names(ex.id))} in exercises/{ex.file}", ex.summary
        failing = [c for c in ex.checks if not c.passed]
        assert [c.id for c in failing] == [f"{ex.id}.not_started"] and failing[0].kind == "not_implemented"
        assert ex.checks_total >= 4 and ex.checks_passed == len(ex.checks) - 1


def ex_names(ex_id):
    """The stubs' NotImplementedError messages of an exercise, in the order the checks reach them."""
    return {"ex00": ["receptive_field", "max_path_length"], "ex01": ["softmax", "masked_softmax"],
            "ex02": ["gaussian_kernel_weights", "nadaraya_watson", "NWKernelRegression.forward"],
            "ex03": ["AdditiveAttention.forward", "DotProductAttention.forward"],
            "ex04": ["Seq2SeqAttentionDecoder.forward"],
            "ex05": ["transpose_qkv", "transpose_output", "MultiHeadAttention.forward"],
            "ex06": ["PositionalEncoding.__init__ (build the table P)"],
            "ex07": ["PositionWiseFFN.forward", "AddNorm.forward", "TransformerEncoderBlock.forward",
                     "TransformerDecoderBlock.forward"],
            "ex08": ["sliding_window_mask", "graph_mask", "softmax_with_mask", "MaskedDotProductAttention.forward"],
            "ex09": ["RotaryEmbedding.__init__ (build cos and sin)"],
            "ex10": ["key_blocks", "block_mask", "online_softmax_update", "tiled_attention"],
            "ex11": ["repeat_kv", "GroupedQueryAttention.__init__"]}[ex_id]


def _mistake_items():
    items = []
    for ex in EXERCISES:
        for mistake in checks_registry.for_exercise(ex.id).MISTAKES:
            items.append((ex, mistake))
    return items


MISTAKE_ITEMS = _mistake_items()


@pytest.fixture(scope="module")
def mistake_results():
    return known_mistake_results()  # graded once per run, shared with test_weight_diff


def test_at_least_three_known_mistakes_per_exercise():
    for ex in EXERCISES:
        assert len(checks_registry.for_exercise(ex.id).MISTAKES) >= 3, ex.id


@pytest.mark.parametrize("ex,mistake", MISTAKE_ITEMS, ids=[f"{e.id}-{m.id}" for e, m in MISTAKE_ITEMS])
def test_known_mistake_is_caught_with_its_hint(ex, mistake, mistake_results):
    result = mistake_results[ex.id, mistake.id]
    # a mistake that stops the import (an absolute import) is a file-level error, the rest fail checks
    assert result.status == ("error" if "import" in mistake.id else "failed") and not result.passed
    hints = [c.hint for c in result.checks if c.hint]
    assert hints == [hint_text(ex.id, mistake)], (result.summary, hints)  # its own hint, once
    assert mistake.id in [c.mistake for c in result.checks]
    first = next(c for c in result.checks if not c.passed)
    assert first.message and (first.call or first.id in (f"{ex.id}.file", f"{ex.id}.rule.{mistake.id}"))


def test_mistake_ids_are_unique_per_exercise():
    for ex in EXERCISES:
        ids = [m.id for m in checks_registry.for_exercise(ex.id).MISTAKES]
        assert len(ids) == len(set(ids))


def test_a_mistake_that_no_longer_matches_the_reference_is_reported():
    mistake = checks_registry.for_exercise("ex03").MISTAKES[0]
    with pytest.raises(ValueError, match="occurs 0 times"):
        apply_mistake("nothing to see here", mistake)


def test_mistaken_variants_live_only_as_long_as_their_grading_run():
    mistake = checks_registry.for_exercise("ex03").MISTAKES[0]
    with MistakeVariants() as run:
        module = run.modules("ex03", mistake)("ex03_scoring")
        built = Path(module.__file__)
        package = module.__name__.partition(".")[0]
        assert built.name == "ex03_scoring.py" and "attention-lab-mistake-" in str(built)
        reference = (ROOT / "solutions" / "ex03_scoring.py").read_text(encoding="utf-8")
        assert built.read_text(encoding="utf-8") == apply_mistake(reference, mistake) != reference
        assert run.modules("ex03", mistake)("ex03_scoring") is module  # built once per run
    assert not built.parent.parent.exists()
    assert not [name for name in sys.modules if name.startswith(package)]
    with MistakeVariants() as next_run:  # a new run builds its own
        assert next_run.modules("ex03", mistake)("ex03_scoring").__name__.partition(".")[0] != package


def test_a_variants_results_are_cached_per_run_and_per_check_index():
    ex = checks_registry.for_exercise("ex03")
    mistake, checks = ex.MISTAKES[0], ex.build()
    with MistakeVariants() as run:
        first = run.results("ex03", mistake, 0, checks[0])
        assert run.results("ex03", mistake, 0, checks[0]) is first
        assert run.results("ex03", mistake, 1, checks[1]) is not first
    with MistakeVariants() as other:
        assert other.results("ex03", mistake, 0, checks[0]) is not first


# ---- isolation: misbehaving learner code fails alone, with a clear message -----------------

DOT = "d = queries.shape[-1]"
ISOLATION_CASES = {
    "infinite loop": (DOT, DOT + "\n        while True:\n            pass", "timed out after 4 s"),
    "sleeps past the timeout": (DOT, "import time; time.sleep(60)", "timed out after 4 s"),
    "exception at import": ("import math\n", "import math\nraise RuntimeError('boom at import')\n",
                            "importing"),
    "syntax error": ("def forward(self, queries, keys, values, valid_lens=None):\n        \"\"\"queries (B, n_q, d)",
                     "def forward(self, queries, keys, values, valid_lens=None)\n        \"\"\"queries (B, n_q, d)",
                     "syntax error"),
    "sys.exit": (DOT, "import sys; sys.exit(3)", "sys.exit(3)"),
    "os._exit": (DOT, "import os; os._exit(0)", "exited (code 0)"),
    "segfault": (DOT, "import ctypes; ctypes.string_at(0)", "segmentation fault"),
    "memory bomb": (DOT, "x = torch.ones(2**32, dtype=torch.float64); " + DOT, "ran out of memory"),
    "print flood": (DOT, "while True: print('spam' * 100)", "printed more than"),
    "NaN outputs": ("return torch.bmm(self.dropout(self.attention_weights), values)  # (B, n_q, v)\n\n\nclass Dot",
                    "return torch.bmm(self.dropout(self.attention_weights), values) * float('nan')\n\n\nclass Dot",
                    "got NaN"),
}


@pytest.fixture(scope="module")
def isolation_results():
    source = (ROOT / "solutions" / "ex03_scoring.py").read_text()
    submissions = []
    for name, (old, new, _) in ISOLATION_CASES.items():
        assert source.count(old) >= 1, name
        submissions.append(Submission("ex03", source.replace(old, new, 1), f"{name}.py"))
    submissions.append(Submission("ex01", (ROOT / "solutions" / "ex01_softmax.py").read_text(), "ok.py"))
    results = grade_submissions(submissions, SandboxLimits(timeout_s=4))
    return dict(zip(list(ISOLATION_CASES) + ["neighbour"], results))


@pytest.mark.parametrize("case", list(ISOLATION_CASES))
def test_misbehaving_code_fails_with_a_clear_message(case, isolation_results):
    result = isolation_results[case]
    assert not result.passed
    first = next(c for c in result.checks if not c.passed)
    assert ISOLATION_CASES[case][2] in first.message, first.message
    assert "Traceback" not in first.message


def test_other_exercises_are_still_graded_after_misbehaviour(isolation_results):
    assert isolation_results["neighbour"].passed


def test_child_cannot_import_solutions(tmp_path):
    source = reference_source(EXERCISES[0]).replace(
        "ARCHITECTURES = (", "import solutions  # must fail in the sandbox\nARCHITECTURES = (")
    [result] = grade_submissions([Submission("ex00", source, "peek.py")])
    assert result.status == "error"
    assert "No module named 'solutions'" in result.checks[0].message


def test_missing_file_is_reported_and_others_graded(tmp_path):
    shutil.copy(ROOT / "solutions" / "ex00_paths.py", tmp_path / "ex00_paths.py")
    report = grade(tmp_path, ["ex00", "ex01"])
    assert report.exercises[0].passed
    assert report.exercises[1].status == "error"
    assert "cannot read" in report.exercises[1].summary


# ---- the command line ---------------------------------------------------------------------


def run_cli(*args, home):
    env = {"PATH": "/usr/bin:/bin", "ATTENTION_LAB_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def test_cli_json_report_progress_and_exit_code(tmp_path):
    shutil.copy(ROOT / "solutions" / "ex00_paths.py", tmp_path / "ex00_paths.py")
    shutil.copy(ROOT / "exercises" / "ex06_positional_encoding.py", tmp_path / "ex06_positional_encoding.py")
    done = run_cli("ex00", "ex06", "--target", str(tmp_path), "--json", home=tmp_path / "home")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["version"] == 1 and report["passed"] is False
    by_id = {ex["id"]: ex for ex in report["exercises"]}
    assert by_id["ex00"]["passed"] and by_id["ex00"]["score"] == 1.0
    assert by_id["ex06"]["status"] == "not_written"
    for ex in report["exercises"]:
        assert {"id", "title", "file", "status", "passed", "score", "duration_s", "summary", "checks"} <= set(ex)
        for check in ex["checks"]:
            assert {"name", "passed", "message", "hint", "id", "mistake"} <= set(check)
    assert report["lang"] == "en"
    assert "progress: 2/2 ex06 not_written" in done.stderr
    assert not (tmp_path / "home").exists()  # the grader only reports: a --json run's reader records it


def test_a_terminal_run_is_recorded_by_the_app_not_the_grader(tmp_path, monkeypatch):
    shutil.copy(ROOT / "solutions" / "ex00_paths.py", tmp_path / "ex00_paths.py")
    shutil.copy(ROOT / "exercises" / "ex06_positional_encoding.py", tmp_path / "ex06_positional_encoding.py")
    done = run_cli("ex00", "ex06", "--target", str(tmp_path), home=tmp_path / "home")
    assert done.returncode == 1, done.stderr
    assert not (tmp_path / "home" / "progress.json").exists()  # the grader wrote a report, no progress
    assert len(list((tmp_path / "home" / "reports").glob("*.json"))) == 1
    monkeypatch.setenv("ATTENTION_LAB_HOME", str(tmp_path / "home"))
    entry = progress.load_results(tmp_path)  # the app's read records the waiting report, then removes it
    assert entry["ex00"]["passed"] is True and entry["ex06"]["status"] == "not_written"
    assert list((tmp_path / "home" / "reports").glob("*")) == []
    (tmp_path / "home" / "reports" / "1-2.json").write_text("{ not a report")
    assert progress.load_results(tmp_path)["ex00"]["passed"] is True  # a damaged one is set aside, not fatal
    assert [p.name for p in (tmp_path / "home" / "reports").iterdir()] == ["1-2.json.unreadable"]


def test_a_no_save_run_leaves_nothing_to_record(tmp_path):
    """`--no-save` (checking the references, a trial run) reports as usual and leaves no report for the app."""
    done = run_cli("ex00", "--target", str(ROOT / "solutions"), "--no-save", home=tmp_path / "home")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1/1 exercise passed." in done.stdout
    assert list((tmp_path / "home").rglob("*.json")) == []
    done = run_cli("ex00", "--target", str(ROOT / "solutions"), home=tmp_path / "home")
    assert len(list((tmp_path / "home" / "reports").glob("*.json"))) == 1  # without it, the run is left to record


def test_cli_table_and_success_exit_code(tmp_path):
    shutil.copy(ROOT / "solutions" / "ex00_paths.py", tmp_path / "ex00_paths.py")
    done = run_cli("ex00", "--target", str(tmp_path), home=tmp_path / "home")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ex00" in done.stdout and "passed" in done.stdout and "1/1 exercise passed." in done.stdout


def test_cli_shows_the_first_problem_and_hint(tmp_path):
    mistake = checks_registry.for_exercise("ex03").MISTAKES[0]
    (tmp_path / "ex03_scoring.py").write_text(apply_mistake(reference_source(EXERCISES[3]), mistake))
    done = run_cli("ex03", "--target", str(tmp_path), home=tmp_path / "home")
    assert done.returncode == 1
    assert "called:" in done.stdout and "problem:" in done.stdout
    assert hint_text("ex03", mistake) in done.stdout
    assert not (tmp_path / "home" / "progress.json").exists()


def test_cli_usage_errors(tmp_path):
    done = run_cli("ex99", home=tmp_path)
    assert done.returncode == 2 and "unknown exercise 'ex99'" in done.stderr
    done = run_cli("--target", str(tmp_path / "nope"), home=tmp_path)
    assert done.returncode == 2 and "not a directory" in done.stderr


def test_cli_hint_lists_known_pitfalls(tmp_path):
    done = run_cli("hint", "ex05", home=tmp_path)
    assert done.returncode == 0
    for mistake in checks_registry.for_exercise("ex05").MISTAKES:
        assert hint_text("ex05", mistake) in done.stdout


def test_watch_regrades_a_saved_file(tmp_path):
    target = tmp_path / "work"
    target.mkdir()
    shutil.copy(ROOT / "exercises" / "ex00_paths.py", target / "ex00_paths.py")
    env = {"PATH": "/usr/bin:/bin", "ATTENTION_LAB_HOME": str(tmp_path / "home")}
    proc = subprocess.Popen([sys.executable, "-u", "-m", "grader", "ex00", "--target", str(target),
                             "--watch", "--watch-max-runs", "2"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    killer = threading.Timer(240, proc.kill)  # a watch that never sees the save fails here instead of hanging
    killer.start()
    lines, summaries = [], 0
    try:
        for line in proc.stdout:
            lines.append(line)
            if re.search(r"\d+/\d+ exercises? passed", line):
                summaries += 1
                if summaries == 1:  # the first run is over: save the learner's fixed file
                    shutil.copy(ROOT / "solutions" / "ex00_paths.py", target / "ex00_paths.py")
        proc.wait(timeout=30)
    finally:
        killer.cancel()
    text = "".join(lines)
    assert proc.returncode == 0, text
    assert "0/1 exercise passed" in text and "ex00 changed" in text and "1/1 exercise passed" in text, text


def test_progress_file_is_replaced_atomically(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_HOME", str(tmp_path))
    progress.save_results(tmp_path / "t", {"ex00": {"passed": True, "score": 1.0}})
    progress.save_results(tmp_path / "t", {"ex01": {"passed": False, "score": 0.5}})
    loaded = progress.load_results(tmp_path / "t")
    assert loaded["ex00"]["passed"] and loaded["ex01"]["score"] == 0.5
    assert sorted(p.name for p in tmp_path.iterdir()) == [".progress.lock", "progress.json"]  # no temp files left
    (tmp_path / "progress.json").write_text("{ truncated")
    assert progress.load_results(tmp_path / "t") == {}
    progress.save_results(tmp_path / "t", {"ex02": {"passed": True, "score": 1.0}})
    damaged = [p for p in tmp_path.iterdir() if p.name.startswith("progress.json.damaged-")]
    assert len(damaged) == 1 and damaged[0].read_text() == "{ truncated"  # kept, not lost
    assert progress.load_results(tmp_path / "t") == {"ex02": progress.load_results(tmp_path / "t")["ex02"]}
