"""`--sandbox strict` against hostile submissions (tests/hostile/): each attack fails alone.

Each case grades, in one strict run, the learner's own correct ex01, the hostile
ex03 (which builds on it) and a correct ex00, then checks: ex03 fails with a
clear message, ex00 and ex01 are still graded, no reference line reached the
report, solutions/, grader/, exercises/ and the progress file are unchanged,
no process of the submission is alive, a listener on 127.0.0.1 got nothing,
and the machine's free memory never dropped by more than the cap (+ margin).
Needs root, bubblewrap and setpriv; skipped elsewhere, an error in CI.
"""

import json
import shutil
import subprocess
import sys
import time

import nbformat
import pytest
from sandbox_helpers import (ROOT, Listener, MemoryWatch, hostile_source, leaked_reference, reference,
                             report_text, require_strict, sandbox_uid_processes, seed_progress, snapshot)

from course.app import grading_client
from grader.core import Submission, grade, grade_submissions
from grader.notebook_submit import answer_tag
from grader.sandbox import SandboxLimits

pytestmark = [pytest.mark.slow, pytest.mark.alone, pytest.mark.usefixtures("strict_available")]  # alone: it checks that
# no process of a sandbox uid is left and /tmp is as it was, which another worker's grading would upset
LIMITS = SandboxLimits(timeout_s=10, mode="strict")
HANG_LIMITS = SandboxLimits(timeout_s=4, mode="strict")  # for a hostile file that hangs or stops its server: the
# test checks containment, and waits out the limit; a correct job took under 1 s in the serial phase
MEMORY_MARGIN_MB = 1024  # other work on a shared machine, the grader's own references


@pytest.fixture(scope="module")
def strict_available():
    require_strict()


def run_case(submissions, grade_fn=None, limits=LIMITS):
    """Grade under watch -> (results, report text, what changed, listener bytes, memory drop MB)."""
    seed_progress()
    before = snapshot()
    listener = Listener()
    watch = MemoryWatch()
    try:
        results = (grade_fn or (lambda subs: grade_submissions(subs, limits)))(
            [s(listener.port) if callable(s) else s for s in submissions])
    finally:
        drop = watch.drop_mb()
        listener.close()  # grading has ended: what any process of it connected is in the listener's backlog by now
    after = snapshot()
    changed = sorted(k for k in before if before[k] != after.get(k))
    return results, report_text(results), changed, listener.received, drop


def three(name):
    """The standard case: own ex01, hostile ex03, correct ex00."""
    return [Submission("ex01", reference("ex01_softmax.py"), "ex01_softmax.py"),
            lambda port: Submission("ex03", hostile_source(name, port), f"{name}.py"),
            Submission("ex00", reference("ex00_paths.py"), "ex00_paths.py")]


def assert_contained(outcome, hostile_index=1, graded=(0, 2)):
    results, text, changed, received, drop = outcome
    hostile = results[hostile_index]
    assert not hostile.passed, hostile.summary
    first = next(c for c in hostile.checks if not c.passed)
    assert first.message and "Traceback" not in first.message, first.message
    for i in graded:
        assert results[i].passed, (results[i].id, results[i].summary)
    assert not leaked_reference(text), leaked_reference(text)[:2]
    assert "FOUND REFERENCE" not in text and "FORGED" not in text
    assert changed == [], f"changed by the submission: {changed}"
    assert sandbox_uid_processes() == [], "a process of the submission is still alive"
    assert received == [], f"the loopback listener received {received}"
    assert drop < LIMITS.memory_mb + MEMORY_MARGIN_MB, f"free memory dropped by {drop:.0f} MB"
    return hostile


@pytest.mark.parametrize("name", ["read_solutions", "proc_cwd", "write_progress", "edit_grader",
                                  "kill_server", "hold_pipe", "network", "rewrite_results"])
def test_attack_fails_alone(name):
    hostile = assert_contained(run_case(three(name), limits=HANG_LIMITS if name == "kill_server" else LIMITS))
    assert hostile.status in ("not_written", "failed", "error")


def test_no_reference_from_a_notebook_answer_cell(tmp_path):
    notebook = nbformat.v4.new_notebook()
    for ex_id, source in (("ex01", reference("ex01_softmax.py")), ("ex03", hostile_source("read_solutions"))):
        cell = nbformat.v4.new_code_cell(source.replace("from .ex01_softmax", "from .ex01_softmax"))
        cell.metadata["tags"] = [answer_tag(ex_id)]
        notebook.cells.append(cell)
    path = tmp_path / "answers.ipynb"
    nbformat.write(notebook, path)

    def by_notebook(_):
        report = grade(path, ["ex01", "ex03"], LIMITS)
        shutil.copy(ROOT / "solutions" / "ex00_paths.py", tmp_path / "ex00_paths.py")
        return report.exercises + grade(tmp_path, ["ex00"], LIMITS).exercises

    assert_contained(run_case([], by_notebook), graded=(0, 2))


def test_neighbour_jobs_hold_no_reference():
    stub_ex05 = (ROOT / "exercises" / "ex05_multihead.py").read_text(encoding="utf-8")
    submissions = three("neighbour_jobs") + [Submission("ex05", stub_ex05, "ex05_multihead.py")]
    outcome = run_case(submissions)
    assert_contained(outcome)
    ex05 = outcome[0][3]
    assert ex05.status == "blocked" and "pass ex03 first" in ex05.summary


def test_a_daemon_does_not_outlive_its_exercise():
    assert_contained(run_case(three("daemon")))  # no process of a sandbox uid is left, none to start another


def test_memory_and_disk_are_capped_for_all_processes_together():
    outcome = run_case(three("memory_forks"), limits=HANG_LIMITS)
    hostile = assert_contained(outcome)
    assert outcome[4] < 2048 + MEMORY_MARGIN_MB
    assert "No space left on device" in hostile.output, hostile.output


def test_files_are_capped_for_the_whole_job():
    hostile = assert_contained(run_case(three("fill_disk")))
    [said] = [line for line in hostile.output.splitlines() if line.startswith("WRITTEN_MB")]
    assert 0 < int(said.split()[1]) <= LIMITS.files_mb, said


def test_a_stopped_server_is_only_the_learners_own_process():
    started = time.monotonic()
    hostile = assert_contained(run_case(three("stop_server"), limits=HANG_LIMITS))
    assert "timed out" in hostile.summary or "stopped" in hostile.summary
    assert time.monotonic() - started < 120


def test_dependencies_are_the_learners_own_and_must_have_passed():
    stub_ex01 = (ROOT / "exercises" / "ex01_softmax.py").read_text(encoding="utf-8")
    own = {"ex01": reference("ex01_softmax.py")}
    results = grade_submissions([
        Submission("ex03", reference("ex03_scoring.py"), "ex03_scoring.py", dependencies=own),
        Submission("ex03", reference("ex03_scoring.py"), "ex03_scoring.py", dependencies={}),
        Submission("ex01", stub_ex01, "ex01_softmax.py"),
        Submission("ex05", reference("ex05_multihead.py"), "ex05_multihead.py"),
    ], LIMITS)
    assert results[0].passed, results[0].summary
    assert results[1].status == "blocked" and results[1].summary.startswith("pass ex01 first")
    assert results[3].status == "blocked" and results[3].summary.startswith("pass ex01 first")
    with pytest.raises(ValueError, match="never puts a reference"):
        grade_submissions([], LIMITS, references_for_dependencies=True)


def test_the_grading_client_reads_a_report_no_one_can_rewrite(tmp_path):
    (tmp_path / "ex01_softmax.py").write_text(reference("ex01_softmax.py"))
    (tmp_path / "ex03_scoring.py").write_text(hostile_source("forge_report"))
    seed_progress()
    before = snapshot()
    report = grading_client.run_grader(["ex01", "ex03"], tmp_path, sandbox="strict")
    by_id = {e["id"]: e for e in report["exercises"]}
    assert by_id["ex01"]["passed"] and not by_id["ex03"]["passed"]
    assert "FORGED" not in by_id["ex03"]["summary"] and report["passed"] is False
    assert snapshot() == before and sandbox_uid_processes() == []


def test_cli_strict_run_with_a_killer_prints_a_full_report(tmp_path):
    (tmp_path / "ex01_softmax.py").write_text(reference("ex01_softmax.py"))
    (tmp_path / "ex03_scoring.py").write_text(hostile_source("kill_server"))
    (tmp_path / "ex00_paths.py").write_text(reference("ex00_paths.py"))
    done = subprocess.run([sys.executable, "-m", "grader", "ex00", "ex01", "ex03", "--target", str(tmp_path),
                           "--sandbox", "strict", "--json", "--timeout", str(HANG_LIMITS.timeout_s)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    by_id = {e["id"]: e for e in json.loads(done.stdout)["exercises"]}
    assert by_id["ex00"]["passed"] and by_id["ex01"]["passed"] and not by_id["ex03"]["passed"]
