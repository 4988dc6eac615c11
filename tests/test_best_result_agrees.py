"""Every view of a learner's best result agrees: one rule (course/common/ranking.py), written down here by hand.

The measured bug: an on-time fail scoring 0.9 and a late pass scoring 0.7 showed the pass (0.7) in the learner's
sidebar but 0.9 in the gradebook and its CSV export, and on ties the late flag came from the oldest submission.
Each history below is graded in order; the expected best is worked out by hand from the rule (a pass beats a fail,
then the higher score, then the newer), never by the code under test.
"""

import csv

import pandas as pd
import pytest

from classroom.analytics import analytics, frames
from classroom import cli
from classroom.data import exercise_table
from classroom.line import grading
from classroom.web import learner_records
from course.app import progress
from course.common import ranking
from course.common.exercise_index import status_of
from tests.classroom_support import add_graded, user_id

ANN = "ann@class.test"

# (history of (score, status, late), expected best (score, passed, late), what the case is about)
HISTORIES = [
    ([(0.9, "failed", False), (0.7, "passed", True)], (0.7, True, True), "a late pass beats an on-time fail"),
    ([(0.7, "passed", True), (0.9, "failed", False)], (0.7, True, True), "and still does when the fail is newer"),
    ([(0.5, "failed", False), (0.5, "failed", True)], (0.5, False, True), "a tie: the newer (late) one counts"),
    ([(0.8, "passed", True), (0.8, "passed", False)], (0.8, True, False), "a tie: the newer (on time) one counts"),
    ([(0.6, "failed", False), (0.95, "failed", True), (0.3, "failed", False)], (0.95, False, True),
     "of fails, the highest score"),
    ([(1.0, "passed", False), (0.2, "failed", False)], (1.0, True, False), "a later fail does not undo a pass"),
]
IDS = [case[2] for case in HISTORIES]


def graded_class(store, history):
    for minutes, (score, status, late) in enumerate(history):
        add_graded(store, ANN, "ex01", score, status, minutes=minutes, late=late)


def exported(store, sqlite_url, tmp_path):
    out = tmp_path / "grades.csv"
    assert cli.main(["export", "--db", sqlite_url, "--out", str(out)]) == 0
    return {row["email"]: row for row in csv.DictReader(out.read_text(encoding="utf-8-sig").splitlines())}[ANN]


@pytest.mark.parametrize(("history", "expected", "why"), HISTORIES, ids=IDS)
def test_every_class_view_shows_the_same_best(class_store, sqlite_url, tmp_path, history, expected, why):
    score, passed, late = expected
    graded_class(class_store, history)
    uid = user_id(class_store, ANN)
    sidebar = learner_records.best_results(class_store, uid)["ex01"]  # sidebar, chapter footers, Practice, ch09
    assert (sidebar["score"], sidebar["passed"]) == (score, passed), why
    assert status_of("ex01", {"ex01": sidebar}) == ("passed" if passed else "failed")
    with class_store.session() as session:
        unlocked = grading.passed_dependencies(session, uid, "ex03")  # ex03 builds on ex01
    assert bool(unlocked) == passed, why
    book = analytics.gradebook(frames.class_frame(class_store), exercise_table.EXERCISE_IDS,
                               frames.learners(class_store)).set_index("email")
    assert (book.loc[ANN, "ex01"], book.loc[ANN, "ex01_late"]) == (score, int(late)), why
    row = exported(class_store, sqlite_url, tmp_path)
    assert (float(row["ex01"]), row["ex01_late"]) == (score, str(int(late))), why


@pytest.mark.parametrize(("history", "expected", "why"), HISTORIES, ids=IDS)
def test_self_study_progress_keeps_the_same_best_and_the_newest(lab_home, history, expected, why):
    target = progress.PROJECT_ROOT / "exercises"
    for score, status, _ in history:
        progress.save_results(target, {"ex01": {"passed": status == "passed", "score": score, "status": status}})
    best = progress.load_results()["ex01"]
    assert (best["score"], best["passed"]) == expected[:2], why
    newest = progress.load_newest()["ex01"]
    assert (newest["score"], newest["status"]) == history[-1][:2]  # the demos run the file as it stands


def test_the_frame_order_and_the_python_order_are_one_rule():
    rows = [(True, 0.7, 2), (False, 0.9, 1), (False, None, 5), (True, 0.7, 3), (False, 0.9, 4), (True, float("nan"), 6)]
    # by hand: passes first (0.7 newer id 3, then 2, then the pass without a score), then fails (0.9 newer 4, then 1,
    # then the fail without a score)
    by_hand = [3, 2, 6, 4, 1, 5]
    frame = pd.DataFrame(rows, columns=["passed", "score", "submission_id"])
    assert ranking.best_first(frame, "submission_id")["submission_id"].tolist() == by_hand
    assert sorted(rows, key=lambda r: ranking.rank(*r), reverse=True) == [
        next(r for r in rows if r[2] == i) for i in by_hand]
    assert ranking.best(rows, lambda r: r)[2] == 3


def test_a_version_1_progress_file_reads_as_both_best_and_newest(lab_home):
    progress.progress_path().parent.mkdir(parents=True, exist_ok=True)
    key = progress.target_key(progress.PROJECT_ROOT / "exercises")
    progress.progress_path().write_text(
        '{"version": 1, "targets": {"%s": {"ex02": {"passed": true, "score": 1.0, "status": "passed"}}}}' % key)
    assert progress.load_results()["ex02"]["passed"] and progress.load_newest()["ex02"]["passed"]
    progress.save_results(progress.PROJECT_ROOT / "exercises", {"ex02": {"passed": False, "score": 0.4,
                                                                          "status": "failed"}})
    assert progress.load_results()["ex02"]["score"] == 1.0 and progress.load_newest()["ex02"]["score"] == 0.4
