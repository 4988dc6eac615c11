"""Gradebook, analytics and the CSV export, on a small class whose numbers are worked out by hand."""

import csv
import math

import pytest

from classroom.analytics import analytics, frames
from classroom.data.roster import import_roster
from classroom.data.exercise_table import EXERCISE_IDS
from tests.classroom_support import add_graded, run_cli


@pytest.fixture
def graded_class(class_store):
    ids = {
        "ann1": add_graded(class_store, "ann@class.test", "ex03", 0.4, "failed", ["dot_no_scale"], minutes=0),
        "ann2": add_graded(class_store, "ann@class.test", "ex03", 0.6, "failed", ["dot_scale_by_d"], minutes=1),
        "ann3": add_graded(class_store, "ann@class.test", "ex03", 1.0, "passed", minutes=2),
        "bob1": add_graded(class_store, "bob@class.test", "ex03", 0.3, "failed", ["dot_no_scale"], minutes=0),
        "bob2": add_graded(class_store, "bob@class.test", "ex03", 1.0, "passed", minutes=3),
        "cy1": add_graded(class_store, "cy@class.test", "ex03", 0.3, "failed", minutes=0),
        "cy2": add_graded(class_store, "cy@class.test", "ex03", 0.0, "not_written", minutes=1),
        "cy3": add_graded(class_store, "cy@class.test", "ex01", 0.9, "passed", minutes=5, late=True),
    }
    return class_store, ids


def test_exercise_summary(graded_class):
    store, _ = graded_class
    summary = analytics.exercise_summary(frames.submissions_frame(store), ["ex01", "ex03", "ex05"])
    ex03 = summary.set_index("exercise_id").loc["ex03"]
    assert (ex03["learners"], ex03["passed"], ex03["submissions"]) == (3, 2, 7)
    assert ex03["pass_rate"] == pytest.approx(2 / 3)
    assert ex03["median_attempts_to_pass"] == 2.5  # ann on her 3rd, bob on his 2nd
    assert ex03["submission_pass_rate"] == pytest.approx(2 / 7)
    ex05 = summary.set_index("exercise_id").loc["ex05"]
    assert ex05["learners"] == 0 and math.isnan(ex05["pass_rate"])


def test_mistake_bars_name_the_submissions_behind_each_bar(graded_class):
    store, ids = graded_class
    bars = analytics.mistake_bars(frames.submissions_frame(store), "ex03", {"dot_no_scale": "forgot 1/sqrt(d)"})
    assert bars["mistake_id"].tolist() == ["dot_no_scale", "dot_scale_by_d"]
    assert bars["count"].tolist() == [2, 1]
    assert bars["share"].tolist() == [0.5, 0.25]  # of the 4 failing ex03 submissions
    assert bars["submission_ids"].tolist() == [sorted([ids["ann1"], ids["bob1"]]), [ids["ann2"]]]
    assert analytics.mistake_bars(frames.submissions_frame(store), "ex07").empty


def test_export_csv(graded_class, sqlite_url, tmp_path):
    out = tmp_path / "grades.csv"
    result = run_cli("export", "--db", sqlite_url, "--out", out)
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(out.open(encoding="utf-8-sig")))
    assert [r["email"] for r in rows] == ["ann@class.test", "bob@class.test", "cy@class.test"]
    header = list(rows[0])
    assert header[:6] == ["email", "name", "removed", "ex00", "ex00_attempts", "ex00_late"]
    assert header[6:9] == ["ex00_variant", "ex00_source", "ex00_extended_until"]
    assert len(header) == 3 + 6 * len(EXERCISE_IDS) + 1
    assert header[-1] == "total"  # the mean of the best scores, an exercise never graded counting 0
    ann, bob, cy = rows
    assert (ann["ex03"], ann["ex03_attempts"], ann["ex03_late"]) == ("1", "3", "0")
    assert (cy["ex03"], cy["ex03_attempts"]) == ("0.3", "2")
    assert (cy["ex01"], cy["ex01_late"]) == ("0.9", "1")
    assert (bob["ex01"], bob["ex01_attempts"], bob["ex01_late"]) == ("", "0", "0")
    assert (ann["ex03_variant"], bob["ex01_variant"]) == ("0", "")  # stored with each submission; none: blank
    assert (ann["ex03_source"], bob["ex01_source"], ann["ex03_extended_until"]) == ("graded", "", "")


def test_gradebook_lists_learners_who_never_submitted(class_store):
    book = analytics.gradebook(frames.submissions_frame(class_store), EXERCISE_IDS, frames.learners(class_store))
    assert book["email"].tolist() == ["ann@class.test", "bob@class.test", "cy@class.test"]
    assert book["ex01_attempts"].tolist() == [0, 0, 0] and book["ex01"].isna().all()


@pytest.mark.slow  # SQLite and Postgres
def test_one_learner_resubmitting_a_mistake_does_not_outrank_three_learners_mistake(any_store, tmp_path):
    """Ten failing resubmissions of one chosen mistake by one learner, against one failing submission each of
    another mistake by three learners (and one more of both by one of them): counted by submissions the one
    learner's came first (11 of the 14 failing submissions against 4); by learners, the three learners' mistake
    comes first, 3 of the 4 learners who failed."""
    roster = tmp_path / "more.csv"
    roster.write_text("email,name,role\nmal@class.test,Mal,learner\n")
    import_roster(any_store, roster)
    for minute in range(10):
        add_graded(any_store, "mal@class.test", "ex03", 0.2, "failed", ["dot_scale_by_d"], minutes=minute)
    for email in ("ann@class.test", "bob@class.test", "cy@class.test"):
        add_graded(any_store, email, "ex03", 0.4, "failed", ["dot_no_scale"], minutes=20)
    add_graded(any_store, "ann@class.test", "ex03", 0.5, "failed", ["dot_no_scale", "dot_scale_by_d"], minutes=21)
    frame = frames.class_frame(any_store)
    bars = analytics.mistake_bars(frame, "ex03").set_index("mistake_id")
    assert bars.index.tolist() == ["dot_no_scale", "dot_scale_by_d"]
    assert bars["learners"].tolist() == [3, 2]  # ann's second mistake counts her once; mal's ten count once
    assert bars["learner_share"].tolist() == [0.75, 0.5]  # of the 4 learners with a failing ex03 submission
    assert bars["count"].tolist() == [4, 11]  # the submissions are still listed behind each bar
    assert analytics.failing_learners(frame, "ex03") == 4 and analytics.failing_learners(frame, "ex01") == 0


def test_mistakes_with_as_many_learners_go_by_mistake_id_not_by_resubmissions(class_store):
    for minute in range(5):
        add_graded(class_store, "cy@class.test", "ex03", 0.2, "failed", ["dot_scale_by_d"], minutes=minute)
    add_graded(class_store, "ann@class.test", "ex03", 0.2, "failed", ["dot_no_scale"])
    bars = analytics.mistake_bars(frames.submissions_frame(class_store), "ex03")
    assert bars["mistake_id"].tolist() == ["dot_no_scale", "dot_scale_by_d"] and bars["learners"].tolist() == [1, 1]
