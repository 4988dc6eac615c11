"""The LMS passback's bookkeeping without an LMS: outbox rows per verdict, timestamps, roles, the migration."""

from datetime import datetime

from sqlalchemy import select

from classroom.line import queue
from classroom.data.submissions import submit
from classroom.lti import accounts, config, outbox
from classroom.lti.passback import score_timestamp
from classroom.data.models import LtiPlatform, LtiScore, User
from tests.classroom_support import user_id

LINEITEMS = "https://lms.test/ags/course-1/lineitems"


def join(store, email, with_ags=True):
    """Make `email` a member of an LMS course (as a launch does)."""
    config.register_platform(store, "https://lms.test", "c", "https://lms.test/a", "https://lms.test/t",
                             "https://lms.test/k", ["d"])
    claims = {accounts.CONTEXT_CLAIM: {"id": "course-1"}, accounts.DEPLOYMENT_CLAIM: "d"}
    if with_ags:
        claims[accounts.AGS_CLAIM] = {"lineitems": LINEITEMS, "scope": []}
    member = user_id(store, email)  # read before the transaction: SQLite has one writer at a time
    with store.session() as session:
        platform = session.scalar(select(LtiPlatform))
        context = accounts.course(session, platform, claims)
        accounts.link_member(session, context, session.get(User, member), f"lms-{email}")


def store_verdict(store, email, ex_id, score):
    submit(store, user_id(store, email), ex_id, "# x", "x.py")
    claim = queue.claim(store, "w")
    assert queue.finish(store, claim, dict(status="failed", passed=False, raw_score=score, score=score, summary="",
                                           checks=[], mistake_ids=[], report={}, sandbox="process",
                                           grader_version="t", run_s=0.0))


def rows(store):
    with store.session() as session:
        return {(r.user_id, r.exercise_id): (r.version, r.due) for r in session.scalars(select(LtiScore))}


def test_each_stored_verdict_bumps_its_outbox_row_for_lms_members_only(class_store):
    join(class_store, "ann@class.test")
    store_verdict(class_store, "ann@class.test", "ex01", 0.5)
    store_verdict(class_store, "ann@class.test", "ex01", 0.7)
    store_verdict(class_store, "bob@class.test", "ex01", 0.5)  # bob is in no LMS course
    ann = user_id(class_store, "ann@class.test")
    assert rows(class_store) == {(ann, "ex01"): (2, True)}
    queue.enqueue_regrade(class_store)
    for _ in range(3):
        claim = queue.claim(class_store, "w")
        queue.finish(class_store, claim, dict(status="failed", passed=False, raw_score=0.1, score=0.1, summary="",
                                              checks=[], mistake_ids=[], report={}, sandbox="process",
                                              grader_version="t", run_s=0.0))
    assert rows(class_store) == {(ann, "ex01"): (4, True)}  # the regrade of ann's two submissions


def test_a_course_without_a_gradebook_service_gets_no_rows(class_store):
    join(class_store, "ann@class.test", with_ags=False)
    store_verdict(class_store, "ann@class.test", "ex01", 0.5)
    assert rows(class_store) == {}


def test_joining_a_course_makes_earlier_work_due(class_store):
    store_verdict(class_store, "ann@class.test", "ex01", 0.5)
    store_verdict(class_store, "ann@class.test", "ex03", 0.5)
    join(class_store, "ann@class.test")
    ann = user_id(class_store, "ann@class.test")
    assert rows(class_store) == {(ann, "ex01"): (1, True), (ann, "ex03"): (1, True)}


def test_pushed_rows_stay_done_unless_a_newer_verdict_came(class_store):
    join(class_store, "ann@class.test")
    store_verdict(class_store, "ann@class.test", "ex01", 0.5)
    with class_store.session() as session:
        (row,) = session.scalars(select(LtiScore))
        outbox.record_pushed(session, [(row.id, 1, 0.5, datetime(2026, 1, 1))])
    assert rows(class_store)[(row.user_id, "ex01")] == (1, False)
    store_verdict(class_store, "ann@class.test", "ex01", 0.9)
    with class_store.session() as session:
        outbox.record_pushed(session, [(row.id, 1, 0.5, datetime(2026, 1, 1))])  # a push of the older version
    assert rows(class_store)[(row.user_id, "ex01")] == (2, True)
    with class_store.session() as session:
        assert outbox.best_scores(session, [row.user_id]) == {(row.user_id, "ex01"): 0.9}


def test_score_timestamps_only_go_forward():
    previous = datetime(2026, 12, 4, 12, 0, 0, 5000)
    when, stamp = score_timestamp(previous, datetime(2026, 12, 4, 11, 0))  # a clock that went back
    assert when > previous and stamp == "2026-12-04T12:00:00.006Z"
    assert score_timestamp(None, datetime(2026, 12, 4, 11, 0, 0, 123456))[1] == "2026-12-04T11:00:00.123Z"


def test_lms_roles_map_to_class_roles():
    lis = "http://purl.imsglobal.org/vocab/lis/v2/membership"
    assert accounts.lms_role([f"{lis}#Learner"]) == "learner"
    assert accounts.lms_role([f"{lis}#Learner", f"{lis}/Instructor#TeachingAssistant"]) == "ta"
    assert accounts.lms_role([f"{lis}#Instructor"]) == "instructor"
    assert accounts.lms_role(["Instructor"]) == "instructor" and accounts.lms_role(["Learner"]) == "learner"
    assert accounts.lms_role(["http://purl.imsglobal.org/vocab/lis/v2/institution/person#Student"]) is None


def test_the_migration_goes_down_and_up_again(class_store):
    from alembic import command

    from classroom.data.db import alembic_config, schema_versions

    config_ = alembic_config(class_store.engine)
    command.downgrade(config_, "0004")
    assert schema_versions(class_store.engine)[0] == "0004"
    command.upgrade(config_, "head")
    current, head = schema_versions(class_store.engine)
    assert current == head and current >= "0005"
