"""Hostile results, feedback and rules (tests/hostile/), in both sandbox modes.

The result attacks (tensors declaring more elements than they hold, a deflated
3 GiB tensor and a pickle opcode bomb in torch archives, wrong structures, meta
and sparse tensors, 100 KB messages, fake report lines) are graded in one run
per mode beside a correct ex00 and ex01: each fails with a clear message,
the others pass, the report is complete and bounded, the grader's own peak
memory (VmHWM, reset before the run) stays under 1.5 GiB, and nothing but the
verdict changes. Then: the ex01 softmax taken by a reversed name, a lookup
table of one report's ex00 values replayed in the next run, and a notebook
nested 100,000 levels deep.
"""

import io
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sandbox_helpers import (HOSTILE, ROOT, RunFolderWatch, hostile_source, reference, require_strict, seed_progress,
                             snapshot)

from grader.core import Submission, grade, grade_submissions
from grader.report import Report, print_table
from grader.sandbox import SandboxLimits

pytestmark = pytest.mark.slow
MODES = ["process", "strict"]
RESULT_ATTACKS = {  # fixture -> words its first failing message must hold
    "stride0_batch": "but the file holds 4 bytes for it",
    "stride0_weights": "but the file holds 4 bytes for it",
    "deflate_bomb": "not one the grader's harness writes",
    "pickle_bomb": "not one the grader's harness writes",
    "wrong_structure": "is a dict",
    "meta_sparse": "is a meta tensor",
    "huge_messages": "more characters",
    "line_separator": "wrong",
}
PEAK_MB = 1536
BOMB_EXTRA_MB = 200  # the pickle bomb's grade over a correct one's: unpickled, it took 1.2 GiB more
FOLDER_MB = 64 + 16  # a job's results (SandboxLimits.files_mb) and the rest of a run folder
MESSAGE_CAP = 2000 + 40  # a capped message and its "... N more characters"
INVISIBLE = "\u2028\u2029\u202e\u200b\u200c\u200d\ufeff\u061c\u2066\U000e0041"


def limits(mode):
    if mode == "strict":
        require_strict()
    return SandboxLimits(timeout_s=10, mode=mode)


def peak_mb_during(fn):
    """(fn(), this process's peak resident memory in MiB while it ran, seconds)."""
    Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current resident size
    started = time.monotonic()
    value = fn()
    took = time.monotonic() - started
    line = next(x for x in Path("/proc/self/status").read_text().splitlines() if x.startswith("VmHWM:"))
    return value, int(line.split()[1]) / 1024, took


def other(name):
    return (HOSTILE / "other" / name).read_text(encoding="utf-8")


@pytest.fixture(scope="module", params=MODES)
def result_attacks(request):
    """One run per mode: own ex01, every result attack as ex03, a correct ex00 -> (mode, results, peak, took)."""
    run_limits = limits(request.param)
    submissions = [Submission("ex01", reference("ex01_softmax.py"), "ex01_softmax.py")]
    submissions += [Submission("ex03", hostile_source(name), f"{name}.py") for name in RESULT_ATTACKS]
    submissions.append(Submission("ex00", reference("ex00_paths.py"), "ex00_paths.py"))
    seed_progress()
    before = snapshot()
    results, peak, took = peak_mb_during(lambda: grade_submissions(submissions, run_limits))
    assert snapshot() == before, "a submission changed something outside its verdict"
    return request.param, dict(zip(["ex01", *RESULT_ATTACKS, "ex00"], results)), peak, took


def own_ex01_and(ex03_source):
    return [Submission("ex01", reference("ex01_softmax.py"), "ex01_softmax.py"),
            Submission("ex03", ex03_source, "ex03_scoring.py")]


@pytest.fixture(scope="module", params=MODES)
def control_and_bomb(request):
    """One mode: a correct ex03 and the pickle bomb, each graded beside a correct ex01
    -> (mode, {"control" | "bomb": (ex03 result, grader's peak MiB, seconds)})."""
    run_limits = limits(request.param)
    graded = {}
    for case, source in (("control", reference("ex03_scoring.py")), ("bomb", hostile_source("pickle_bomb"))):
        (own, ex03), peak, took = peak_mb_during(lambda: grade_submissions(own_ex01_and(source), run_limits))
        assert own.passed, own.summary
        graded[case] = (ex03, peak, took)
    return request.param, graded


def test_a_pickle_bomb_is_refused_unread_without_the_graders_memory(control_and_bomb):
    mode, graded = control_and_bomb
    (control, control_peak, _), (bomb, bomb_peak, _) = graded["control"], graded["bomb"]
    assert control.passed and not bomb.passed, (control.summary, bomb.summary)
    first = next(c for c in bomb.checks if not c.passed)
    assert "not one the grader's harness writes" in first.message, first.message
    assert bomb_peak < control_peak + BOMB_EXTRA_MB, f"{mode}: {bomb_peak:.0f} MiB against {control_peak:.0f} MiB"


@pytest.mark.timing
def test_a_pickle_bomb_costs_no_more_time_than_a_correct_grade(control_and_bomb):
    mode, graded = control_and_bomb
    control_took, bomb_took = graded["control"][2], graded["bomb"][2]
    assert bomb_took < control_took + 15, f"{mode}: {bomb_took:.1f} s against {control_took:.1f} s"


@pytest.mark.parametrize("mode", MODES)
def test_a_sparse_file_with_255_hard_links_is_refused_before_any_copy(mode):
    watch = RunFolderWatch()
    (own, farm), peak, _ = peak_mb_during(lambda: grade_submissions(own_ex01_and(hostile_source("sparse_links")),
                                                                    limits(mode)))
    folder_mb = watch.peak_mb()
    assert own.passed, own.summary
    assert "LINKED 255" in farm.output, farm.output[-400:]  # the farm was made
    first = next(c for c in farm.checks if not c.passed)
    assert "names (hard links to the same bytes); none of its results were taken" in first.message, first.message
    assert folder_mb < FOLDER_MB, f"{mode}: the run folder held {folder_mb:.0f} MiB on disk"
    assert peak < PEAK_MB


@pytest.mark.parametrize("name", list(RESULT_ATTACKS))
def test_a_hostile_result_fails_alone_with_a_clear_message(result_attacks, name):
    mode, results, peak, _ = result_attacks
    assert results["ex01"].passed and results["ex00"].passed, (results["ex01"].summary, results["ex00"].summary)
    hostile = results[name]
    assert not hostile.passed and hostile.checks, hostile.summary
    first = next(c for c in hostile.checks if not c.passed)
    assert RESULT_ATTACKS[name] in first.message and "Traceback" not in first.message, first.message
    assert peak < PEAK_MB, f"{mode}: the grader's own peak memory was {peak:.0f} MiB"


def test_meta_and_sparse_tensors_are_both_named(result_attacks):
    messages = " ".join(c.message for c in result_attacks[1]["meta_sparse"].checks)
    assert "is a meta tensor" in messages and "is a sparse_coo tensor" in messages


def test_wrong_shapes_are_the_learners_mistake_with_the_shapes(result_attacks):
    failing = [c for c in result_attacks[1]["stride0_weights"].checks if not c.passed]
    assert "(1, 32768, 32768)" in failing[0].message and failing[0].kind == "error", failing[0].message
    shape = [c for c in failing if c.kind == "mismatch"]
    assert shape and "expected shape (" in shape[0].message and "got (2, 3, 6)" in shape[0].message, shape[:1]


def test_every_message_and_the_whole_report_are_bounded(result_attacks):
    results = result_attacks[1]
    hostile = results["huge_messages"]
    assert all(len(c.message) <= MESSAGE_CAP and len(c.call) <= MESSAGE_CAP for c in hostile.checks)
    assert len(hostile.summary) <= MESSAGE_CAP + 200
    size = len(json.dumps([r.to_dict() for r in results.values()], ensure_ascii=False))
    assert size < 400_000, f"the report is {size} characters"


def test_no_fake_line_or_invisible_character_reaches_the_report(result_attacks):
    results = result_attacks[1]
    hostile = results["line_separator"]
    assert "printed" in hostile.output and "ex07 passed 23/23" in hostile.output  # kept, on the same line
    text = io.StringIO()
    print_table(Report("", list(results.values())), out=text)
    report = text.getvalue() + json.dumps([r.to_dict() for r in results.values()], ensure_ascii=False)
    assert not set(INVISIBLE) & set(report), [hex(ord(c)) for c in set(INVISIBLE) & set(report)]
    assert not [line for line in text.getvalue().splitlines() if line.strip().startswith(("ex07 passed", "ex06"))]


@pytest.mark.timing
def test_a_hanging_result_costs_no_more_than_the_timeout():
    run_limits = limits("process")
    submissions = [Submission("ex03", hostile_source("stride0_batch"), "stride0_batch.py")]
    [result], peak, took = peak_mb_during(lambda: grade_submissions(submissions, run_limits))
    assert not result.passed and peak < PEAK_MB
    assert took < run_limits.timeout_s + 30, f"{took:.1f} s"  # the sandbox server's start included (loaded CI)


@pytest.mark.parametrize("mode", MODES)
def test_softmax_by_a_computed_name_is_refused_from_the_source(mode):
    [result] = grade_submissions([Submission("ex01", other("ex01_reversed_getattr.py"), "ex01_softmax.py")],
                                 limits(mode))
    assert not result.passed
    first = next(c for c in result.checks if not c.passed)
    assert first.id == "ex01.rule.builtin_softmax" and "`getattr` looks a name up at run time" in first.message
    [zh] = grade_submissions([Submission("ex01", other("ex01_reversed_getattr.py"), "ex01_softmax.py")],
                             limits(mode), lang="zh")
    assert "在运行时才查找名字" in next(c for c in zh.checks if not c.passed).message


def _table_source(report_checks):
    """The lookup-table ex00 filled with the expected values (and raising calls) a report showed."""
    table, raises = {}, []
    for check in report_checks:
        if "raises ValueError" in check.name:
            raises.append(check.call)
        elif not check.passed and "expected " in check.message:
            table[check.call] = int(check.message.split("expected ")[1].split(",")[0])
    assert len(table) >= 25 and raises, (table, raises)
    return (other("ex00_lookup_table.py").replace("TABLE = {}", f"TABLE = {table!r}")
            .replace("RAISES = []", f"RAISES = {raises!r}"))


@pytest.mark.parametrize("mode", MODES)
def test_a_table_of_one_reports_values_does_not_pass_the_next_run(mode):
    empty = other("ex00_lookup_table.py")
    [first] = grade_submissions([Submission("ex00", empty, "ex00_paths.py")], limits(mode))
    table = _table_source(first.checks)
    [replayed] = grade_submissions([Submission("ex00", table, "ex00_paths.py")], limits(mode))
    failing = [c for c in replayed.checks if not c.passed]
    assert not replayed.passed and len(failing) >= 20, replayed.summary
    shown = failing[0]  # the failing case is still shown fully: the call, what was expected, what came
    assert shown.call.startswith(("receptive_field(", "max_path_length(")) and "expected " in shown.message
    assert ", got -1" in shown.message, shown.message
    [honest] = grade_submissions([Submission("ex00", reference("ex00_paths.py"), "ex00_paths.py")], limits(mode))
    assert honest.passed, honest.summary


def _deep_notebook(path, levels=100_000):
    path.write_text('{"nbformat": 4, "nbformat_minor": 5, "cells": [], "metadata": '
                    + '{"a": ' * levels + "1" + "}" * levels + "}")
    return path


@pytest.mark.timing
def test_a_notebook_nested_too_deep_is_not_a_readable_notebook(tmp_path):
    path = _deep_notebook(tmp_path / "ex03_scoring.ipynb")
    report, peak, took = peak_mb_during(lambda: grade(path, ["ex03"], SandboxLimits(timeout_s=10)))
    [result] = report.exercises
    assert result.status == "error" and "not a readable notebook" in result.summary, result.summary
    assert peak < PEAK_MB and took < 30
    done = subprocess.run([sys.executable, "-m", "grader", "ex03", "--target", str(path), "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    [entry] = json.loads(done.stdout)["exercises"]
    assert "nests deeper than 64 levels" in entry["summary"]
