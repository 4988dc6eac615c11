"""Class mode grades ex08 and ex09 like the others: with the learner's own ex01, in the strict sandbox,
known mistakes by id, and "pass ex01 first" without it."""

import os

import pytest
from sqlalchemy import select

from classroom.line import grading
from classroom.data.settings import set_setting
from classroom.data.submissions import submit
from classroom.data.models import Result, Submission
from classroom.line.worker import run_worker
from tests.classroom_support import own_solution, user_id

MARK = "ann's own softmax was imported"


@pytest.mark.slow  # a worker grades five submissions in the strict sandbox
def test_ex08_and_ex09_are_graded_in_class_with_the_learners_own_ex01(class_store, sqlite_url):
    if grading.strict_problem():
        if os.environ.get("ATTENTION_LAB_REQUIRE_STRICT") == "1" or os.environ.get("CI") == "true":
            pytest.fail(grading.strict_problem())
        pytest.skip(grading.strict_problem())
    set_setting(class_store, "variants", 1)  # each learner writes every file for their own variant
    ann, bob = user_id(class_store, "ann@class.test"), user_id(class_store, "bob@class.test")
    ann_ex08 = own_solution(class_store, ann, "ex08")
    transposed = ann_ex08.replace("mask = adjacency != 0", "mask = adjacency.transpose(-2, -1) != 0")
    assert transposed != ann_ex08
    ids = {
        "ann_ex01": submit(class_store, ann, "ex01", own_solution(class_store, ann, "ex01")
                                     + f"\nprint({MARK!r})\n", "ex01_softmax.py"),
        "ann_ex08": submit(class_store, ann, "ex08", ann_ex08, "ex08_structured_masks.py"),
        "ann_ex08_transposed": submit(class_store, ann, "ex08", transposed, "ex08_structured_masks.py"),
        "ann_ex09": submit(class_store, ann, "ex09", own_solution(class_store, ann, "ex09"), "ex09_rotary.py"),
        "bob_ex09": submit(class_store, bob, "ex09", own_solution(class_store, bob, "ex09"), "ex09_rotary.py"),
    }
    assert run_worker(sqlite_url, sandbox="strict", once=True, log=lambda _: None) == 5
    with class_store.session() as session:
        rows = session.execute(select(Submission.id, Result.status, Result.summary, Result.mistake_ids, Result.report)
                               .join(Result, Result.submission_id == Submission.id)).all()
    results = {sid: (status, summary, mistakes, report) for sid, status, summary, mistakes, report in rows}
    for name in ("ann_ex08", "ann_ex09"):
        status, summary, _, report = results[ids[name]]
        assert status == "passed", (name, summary)
        assert MARK in report["exercises"][0]["output"]  # graded with ann's own ex01
    status, _, mistakes, _ = results[ids["ann_ex08_transposed"]]
    assert status == "failed" and mistakes == ["graph_transposed"]
    status, summary, _, _ = results[ids["bob_ex09"]]
    assert status == "blocked" and summary.startswith("pass ex01 first")
