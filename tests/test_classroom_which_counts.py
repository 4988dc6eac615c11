"""Which verdict counts, defined once (classroom/data/which_counts.py) and used by every reader of the store."""

from sqlalchemy import select

from classroom import cli
from classroom.analytics import frames
from classroom.line import grading
from classroom.web import learner_records
from classroom.data.models import Job, Result, Submission
from classroom.data.which_counts import best_result, newest_results
from tests.classroom_support import add_graded, user_id


def regrade(store, submission_id, score, status):
    """Store one more verdict for a submission, as a regrade job would."""
    with store.session() as session:
        job = Job(submission_id=submission_id, reason="regrade", state="done", attempts=1)
        session.add(job)
        session.flush()
        session.add(Result(submission_id=submission_id, job_id=job.id, status=status, passed=status == "passed",
                           raw_score=score, score=score, summary=status, checks=[], mistake_ids=[], report={}))


def set_source(store, submission_id, source):
    with store.session() as session:
        session.get(Submission, submission_id).source = source


def best_id(store, email, ex_id):
    with store.session() as session:
        best = best_result(newest_results(session, user_id=user_id(store, email), exercise_id=ex_id))
        return best and best[0].id


def test_a_submissions_newest_result_is_its_verdict_everywhere(class_store):
    sid = add_graded(class_store, "ann@class.test", "ex01", 1.0, "passed")
    regrade(class_store, sid, 0.5, "failed")  # a stricter grader
    other = add_graded(class_store, "ann@class.test", "ex02", 0.0, "not_written")
    with class_store.session() as session:
        assert [(s.id, r.status) for s, r in newest_results(session)] == [(sid, "failed"), (other, "not_written")]
        assert {k: r.score for k, r in cli.newest_results(session, [sid]).items()} == {sid: 0.5}
    frame = frames.submissions_frame(class_store)
    assert frame.set_index("submission_id").loc[sid, "status"] == "failed"
    assert learner_records.best_results(class_store, user_id(class_store, "ann@class.test"))["ex01"]["passed"] is False
    with class_store.session() as session:
        assert grading.passed_dependencies(session, user_id(class_store, "ann@class.test"), "ex03") == {}


def test_a_late_pass_beats_an_on_time_fail_with_a_higher_score(class_store):
    failed = add_graded(class_store, "ann@class.test", "ex01", 0.9, "failed")
    late_pass = add_graded(class_store, "ann@class.test", "ex01", 0.7, "passed", minutes=1, late=True)
    add_graded(class_store, "ann@class.test", "ex01", 0.95, "failed", minutes=2)
    assert best_id(class_store, "ann@class.test", "ex01") == late_pass != failed
    record = learner_records.best_results(class_store, user_id(class_store, "ann@class.test"))["ex01"]
    assert (record["passed"], record["score"]) == (True, 0.7)


def test_then_the_higher_score_then_the_newer_submission(class_store):
    add_graded(class_store, "ann@class.test", "ex03", 0.4, "failed")
    higher = add_graded(class_store, "ann@class.test", "ex03", 0.6, "failed", minutes=1)
    add_graded(class_store, "ann@class.test", "ex03", 0.2, "failed", minutes=2)
    assert best_id(class_store, "ann@class.test", "ex03") == higher
    add_graded(class_store, "bob@class.test", "ex03", 1.0, "passed")
    newer = add_graded(class_store, "bob@class.test", "ex03", 1.0, "passed", minutes=1)
    assert best_id(class_store, "bob@class.test", "ex03") == newer
    assert best_id(class_store, "cy@class.test", "ex03") is None


def test_a_dependency_is_graded_with_the_best_passed_submission(class_store):
    ann = user_id(class_store, "ann@class.test")
    early = add_graded(class_store, "ann@class.test", "ex01", 1.0, "passed")
    late = add_graded(class_store, "ann@class.test", "ex01", 0.8, "passed", minutes=1, late=True)
    add_graded(class_store, "ann@class.test", "ex01", 0.3, "failed", minutes=2)
    for sid in (early, late):
        set_source(class_store, sid, f"# submission {sid}\n")
    with class_store.session() as session:
        deps = grading.passed_dependencies(session, ann, "ex03")
        assert {dep: s.id for dep, s in deps.items()} == {"ex01": early}
        assert session.scalar(select(Submission.source).where(Submission.id == early)) == deps["ex01"].source
    assert learner_records.best_results(class_store, ann)["ex01"]["score"] == 1.0  # the same one the pages show
