"""The class frame (gradebook, analytics) is kept between page runs and read again whenever it may have changed."""

import pandas as pd
from sqlalchemy import event

from classroom.analytics import frames
from classroom.line import queue
from classroom.data.roster import import_roster, user_by_email
from classroom.data.submissions import submit
from tests.classroom_support import add_graded


def _selects(store):
    seen = []
    event.listen(store.engine, "before_cursor_execute", lambda conn, cursor, statement, *rest:
                 seen.append(statement) if statement.lstrip().upper().startswith("SELECT") else None)
    return seen


def _columns(frame):
    return frame.drop(columns=["mistake_ids"]).reset_index(drop=True)


def test_the_class_frame_equals_a_fresh_read_after_every_kind_of_change(class_store, tmp_path):
    add_graded(class_store, "ann@class.test", "ex03", 0.4, "failed", ["dot_no_scale"])

    def same():
        pd.testing.assert_frame_equal(_columns(frames.class_frame(class_store)),
                                      _columns(frames.submissions_frame(class_store)), check_like=True)

    same()
    add_graded(class_store, "bob@class.test", "ex01", 1.0, "passed")  # a submission with its verdict
    same()
    sid = submit(class_store, user_by_email(class_store, "cy@class.test").id, "ex00", "x = 1\n",
                           "ex00_paths.py")  # queued, no verdict yet
    same()
    claim = queue.claim(class_store, "w")
    queue.finish(class_store, claim, dict(status="passed", passed=True, raw_score=1.0, score=1.0, summary="",
                                          checks=[], mistake_ids=[], report={}, sandbox="process",
                                          grader_version="t", run_s=0.0))
    same()
    assert frames.class_frame(class_store).set_index("submission_id").loc[sid, "status"] == "passed"
    roster = tmp_path / "renamed.csv"
    roster.write_text("email,name,role\nann@class.test,Annabel,learner\n")
    import_roster(class_store, roster)  # a name changes: no submission or verdict does
    same()
    assert set(frames.class_frame(class_store).query("email == 'ann@class.test'")["name"]) == {"Annabel"}
    queue.enqueue_regrade(class_store)  # lateness decided again, jobs queued
    same()


def test_an_unchanged_class_is_not_read_again(class_store):
    for i in range(5):
        add_graded(class_store, "ann@class.test", "ex03", 0.1 * i, "failed", minutes=i)
    frames.class_frame(class_store)
    seen = _selects(class_store)
    frame = frames.class_frame(class_store)
    assert len(frame) == 5
    assert len(seen) == 2, seen  # the version and the names; not the submissions with their verdicts
    assert not any("JOIN" in statement.upper() for statement in seen)
