"""Grading through the class path: the learner's own dependencies, notebooks, mistakes, regrade."""

import json
import os

import pytest

import nbformat
from sqlalchemy import select, update

from classroom.web import feedback
from classroom.line import grading, queue
from classroom.data import verdicts
from classroom.data.submissions import submit
from classroom.data.models import Result, Submission
from classroom.line.worker import run_worker
from tests.classroom_support import run_cli, solution, stub, user_id

MARK = "ann's own softmax was imported"


def _notebook(ex_id, code):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# my answer"),
                nbformat.v4.new_code_cell(code, metadata={"tags": [f"attention-lab:answer:{ex_id}"]})]
    return nbformat.writes(nb)


def _results(store):
    with store.session() as session:
        rows = session.execute(select(Submission.id, Result.status, Result.summary, Result.mistake_ids,
                                      Result.report).join(Result, Result.submission_id == Submission.id)
                               .order_by(Submission.id)).all()
    return {sid: (status, summary, mistakes, report) for sid, status, summary, mistakes, report in rows}


@pytest.mark.parametrize("sandbox", ["process", "strict"])
@pytest.mark.slow
def test_dependencies_are_the_learners_own_and_must_have_passed(class_store, sqlite_url, sandbox):
    if sandbox == "strict" and grading.strict_problem():
        if os.environ.get("ATTENTION_LAB_REQUIRE_STRICT") == "1" or os.environ.get("CI") == "true":
            pytest.fail(grading.strict_problem())
        pytest.skip(grading.strict_problem())
    ann, bob = user_id(class_store, "ann@class.test"), user_id(class_store, "bob@class.test")
    own_ex01 = solution("ex01") + f"\nprint({MARK!r})\n"
    noscale = solution("ex03").replace(" / math.sqrt(d)", "")
    assert noscale != solution("ex03")
    ids = {
        "ann_ex01": submit(class_store, ann, "ex01", own_ex01, "ex01_softmax.py"),
        "ann_ex03_noscale": submit(class_store, ann, "ex03", noscale, "ex03_scoring.py"),
        "ann_ex03_nb": submit(class_store, ann, "ex03", _notebook("ex03", solution("ex03")), "mine.ipynb"),
        "bob_ex01_stub": submit(class_store, bob, "ex01", stub("ex01"), "ex01_softmax.py"),
        "bob_ex03": submit(class_store, bob, "ex03", solution("ex03"), "ex03_scoring.py"),
    }
    assert run_worker(sqlite_url, sandbox=sandbox, once=True, log=lambda _: None) == 5
    results = _results(class_store)
    with class_store.session() as session:  # graded in the mode asked for, not a silent fallback
        assert set(session.scalars(select(Result.sandbox).where(Result.status != "blocked"))) == {sandbox}
    status, summary, mistakes, report = results[ids["ann_ex03_nb"]]
    assert status == "passed", summary
    assert MARK in report["exercises"][0]["output"]  # ex03 ran with ann's ex01, not the reference
    assert report["version"] == 1 and report["exercises"][0]["id"] == "ex03"
    status, summary, mistakes, _ = results[ids["ann_ex03_noscale"]]
    assert status == "failed" and mistakes == ["dot_no_scale"]
    status, summary, _, report = results[ids["bob_ex03"]]
    assert status == "blocked" and summary.startswith("pass ex01 first")
    assert report["exercises"][0]["status"] == "blocked"  # stored as the grader reported it
    assert "BLOCKED" in feedback.feedback_text(report)
    assert results[ids["bob_ex01_stub"]][0] == "not_written"


@pytest.mark.slow
def test_a_notebook_without_an_answer_cell_gets_the_graders_message(class_store, sqlite_url):
    ann = user_id(class_store, "ann@class.test")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1")]
    sid = submit(class_store, ann, "ex00", nbformat.writes(nb), "ex00.ipynb")
    run_worker(sqlite_url, sandbox="process", once=True, log=lambda _: None)
    status, summary, _, _ = _results(class_store)[sid]
    assert status == "error" and "attention-lab:answer:ex00" in summary and "/tmp" not in summary


def test_mistake_ids_come_from_the_ids_never_the_text():
    from grader import checks

    from grader.text import hint_text

    mistake = checks.for_exercise("ex03").MISTAKES[0]
    english_hint_only = {"hint": hint_text("ex03", mistake), "passed": False}
    assert verdicts.mistake_ids([english_hint_only, {"hint": None}]) == []
    zh = {"hint": hint_text("ex03", mistake, "zh"), "mistake": mistake.id, "passed": False}
    assert verdicts.mistake_ids([zh, dict(zh), {"hint": "x", "mistake": "custom"}]) == [mistake.id, "custom"]


def test_the_grader_version_follows_the_sources_of_grader_and_solutions(tmp_path):
    def tree(name, reference):
        root = tmp_path / name
        for rel, text in (("grader/core.py", "GRADE = 1\n"), ("solutions/ex01.py", reference),
                          ("grader/notes.txt", name), ("course/other.py", name)):
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
        return root

    same, changed = tree("a", "X = 1\n"), tree("b", "X = 2\n")
    assert verdicts.source_digest(same) == verdicts.source_digest(tree("c", "X = 1\n"))  # other files don't count
    assert verdicts.source_digest(same) != verdicts.source_digest(changed)
    assert verdicts.source_digest(same).startswith("src-") and len(verdicts.source_digest(same)) == 16


def test_worker_falls_back_to_process_mode_with_a_clear_line():
    lines = []
    mode = grading.choose_sandbox("strict", log=lines.append)
    if grading.strict_problem() is None:
        assert mode == "strict"
    else:
        assert mode == "process" and "STRICT MODE UNAVAILABLE" in lines[0]


@pytest.mark.slow
def test_regrade_reports_every_changed_score(class_store, sqlite_url):
    ann = user_id(class_store, "ann@class.test")
    stubbed = submit(class_store, ann, "ex00", stub("ex00"), "ex00_paths.py")
    good = submit(class_store, ann, "ex00", solution("ex00"), "ex00_paths.py")
    run_worker(sqlite_url, sandbox="process", once=True, log=lambda _: None)
    with class_store.session() as session:  # as if an older grader had been too lenient
        session.execute(update(Result).where(Result.submission_id == stubbed).values(score=0.75, status="failed"))
    result = run_cli("regrade", "--db", sqlite_url, "--all", "--here", "--sandbox", "process")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"submission {stubbed} (ann@class.test, ex00): score 0.75 -> 0 (failed -> not_written)",
        "1 of 2 graded submission(s) changed",
    ]
    assert good
    status = json.loads(run_cli("status", "--db", sqlite_url, "--json").stdout)
    assert status["jobs"] == {"queued": 0, "running": 0, "done": 4, "error": 0}


@pytest.mark.slow
def test_a_submission_that_kills_the_sandbox_gets_its_own_error_verdict(class_store, sqlite_url):
    ann, bob = user_id(class_store, "ann@class.test"), user_id(class_store, "bob@class.test")
    hostile = submit(class_store, ann, "ex00", "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n",
                               "ex00_paths.py")
    honest = submit(class_store, bob, "ex00", solution("ex00"), "ex00_paths.py")
    assert run_worker(sqlite_url, sandbox="process", once=True, log=lambda _: None) == 2
    results = _results(class_store)
    assert results[hostile][0] == "error" and "killed" in results[hostile][1]
    assert results[honest][0] == "passed"


def test_a_job_the_grader_failed_on_gets_a_report_in_the_learners_language(class_store):
    ann = user_id(class_store, "ann@class.test")
    sid = submit(class_store, ann, "ex02", solution("ex02"), "ex02_nadaraya_watson.py", lang="zh")
    claim = queue.claim(class_store, "w1")
    verdict = grading.failure_verdict(claim, OSError("disk full"), "process")
    assert (verdict["status"], verdict["passed"], verdict["score"]) == ("error", False, 0.0)
    assert verdict["summary"].startswith("评分失败（OSError: disk full）")
    assert verdict["report"]["lang"] == "zh" and verdict["report"]["target"] == f"submission {sid}"
    assert verdict["checks"][0]["id"] == "ex02.grading"
    text = feedback.feedback_text(verdict["report"])
    assert "错误" in text and "disk full" in text
    assert queue.finish(class_store, claim, verdict)
