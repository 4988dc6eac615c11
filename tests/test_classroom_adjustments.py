"""Per-learner extensions and score overrides (classroom/data/adjustments.py): what they change, where, and the log."""

import csv
from datetime import timedelta

import pytest
from sqlalchemy import select

from classroom.web import access, learner_records
from classroom.data import adjustments, exercise_table
from classroom import cli
from classroom.analytics import frames
from classroom.line import queue
from classroom.data.settings import set_rule
from classroom.data.submissions import SubmitRefused, submit
from classroom.lti import outbox
from classroom.data.models import AdjustmentLog, Result, Submission, utcnow
from tests.classroom_support import INSTRUCTOR, solution, user_id

ANN, BOB = "ann@class.test", "bob@class.test"


def grade(store, email, ex_id, raw, passed=None, worker="w1"):
    """Submit now and store a verdict through the queue as a worker does (no grader run): the score is the raw
    score less the penalty the claim carries -> submission id."""
    sid = submit(store, user_id(store, email), ex_id, "# x", "x.py")
    claim = queue.claim(store, worker)
    assert claim.submission_id == sid
    assert queue.finish(store, claim, verdict(raw, claim.penalty, passed))
    return sid


def verdict(raw, penalty=0.0, passed=None):
    passed = raw == 1.0 if passed is None else passed
    return dict(status="passed" if passed else "failed", passed=passed, raw_score=raw,
                score=round(raw * (1 - penalty), 4), summary="", checks=[], mistake_ids=[], report={},
                sandbox="process", grader_version="test", run_s=0.0)


def lateness(store, sid):
    """(late, penalty, the newest verdict's score) of a submission."""
    with store.session() as session:
        submission = session.get(Submission, sid)
        score = session.scalars(select(Result.score).where(Result.submission_id == sid)
                                .order_by(Result.id.desc())).first()
        return bool(submission.late), submission.penalty, score


def book(store):
    """The gradebook as the page and the export build it, indexed by email."""
    return access.gradebook(store, user_id(store, INSTRUCTOR)).set_index("email")


def exported(store, tmp_path):
    out = tmp_path / "grades.csv"
    assert cli.main(["export", "--db", store.engine.url.render_as_string(hide_password=False), "--out", str(out)]) == 0
    return {row["email"]: row for row in csv.DictReader(out.read_text(encoding="utf-8-sig").splitlines())}


def log_rows(store):
    with store.session() as session:
        return [(r.kind, r.action, r.before, r.after, r.reason, r.actor)
                for r in session.scalars(select(AdjustmentLog).order_by(AdjustmentLog.id))]


def test_an_extension_takes_the_penalty_off_that_learners_exercise_only_everywhere(any_store, tmp_path):
    store = any_store
    deadline = utcnow() - timedelta(hours=1)
    for ex_id in ("ex00", "ex01"):
        set_rule(store, ex_id, deadline, "accept", 48, 0.5)
    ann_ex00, ann_ex01, bob_ex00 = grade(store, ANN, "ex00", 1.0), grade(store, ANN, "ex01", 1.0), \
        grade(store, BOB, "ex00", 1.0)
    assert {lateness(store, sid) for sid in (ann_ex00, ann_ex01, bob_ex00)} == {(True, 0.5, 0.5)}
    until = (utcnow() + timedelta(days=2)).replace(microsecond=0)
    outcome = adjustments.grant_extension(store, ANN, "ex00", until, "  medical\nnote ", INSTRUCTOR)
    assert (outcome.action, outcome.before, outcome.after, outcome.relabelled) == ("grant", 0.5, 1.0, 1)
    assert lateness(store, ann_ex00) == (False, 0.0, 1.0)  # on time now: the stored score lost its penalty
    assert lateness(store, ann_ex01) == lateness(store, bob_ex00) == (True, 0.5, 0.5)  # not her other exercise, not bob
    grades = book(store)
    assert (grades.loc[ANN, "ex00"], grades.loc[ANN, "ex00_late"], grades.loc[ANN, "ex01"]) == (1.0, 0, 0.5)
    assert (grades.loc[BOB, "ex00"], grades.loc[BOB, "ex00_late"]) == (0.5, 1)
    assert learner_records.best_results(store, user_id(store, ANN))["ex00"]["score"] == 1.0  # the learner's pages
    history = frames.submissions_frame(store, user_id(store, ANN)).set_index("submission_id")
    assert (bool(history.loc[ann_ex00, "late"]), history.loc[ann_ex00, "score"]) == (False, 1.0)
    ann = user_id(store, ANN)
    with store.session() as session:
        assert outbox.best_scores(session, [ann])[(ann, "ex00")] == 1.0  # what the LMS is sent
    rows = exported(store, tmp_path)
    assert (rows[ANN]["ex00"], rows[ANN]["ex00_late"], rows[ANN]["ex00_extended_until"]) == \
        ("1", "0", f"{until:%Y-%m-%d %H:%M}")
    assert (rows[BOB]["ex00"], rows[BOB]["ex00_extended_until"], rows[ANN]["ex01_extended_until"]) == ("0.5", "", "")
    # submitting now: on time for ann's ex00 alone
    late_now = submit(store, user_id(store, ANN), "ex01", "# x", "x.py")
    on_time = submit(store, user_id(store, ANN), "ex00", "# x", "x.py")
    assert lateness(store, on_time)[:2] == (False, 0.0) and lateness(store, late_now)[:2] == (True, 0.5)
    # an exercise that closed at its deadline stays open to the learner until her extended one
    set_rule(store, "ex02", deadline, "close")
    adjustments.grant_extension(store, ANN, "ex02", until, "medical note", INSTRUCTOR)
    assert lateness(store, submit(store, user_id(store, ANN), "ex02", "# x", "x.py"))[:2] == (False, 0.0)
    with pytest.raises(SubmitRefused, match="ex02 closed at"):
        submit(store, user_id(store, BOB), "ex02", "# x", "x.py")
    # cleared: the exercise's deadline holds for her again, and the penalty is back
    outcome = adjustments.clear_extension(store, ANN, "ex00", "", INSTRUCTOR)
    assert (outcome.action, outcome.before, outcome.after) == ("clear", 1.0, 0.5)
    assert lateness(store, ann_ex00) == (True, 0.5, 0.5) and book(store).loc[ANN, "ex00"] == 0.5
    assert [row[:5] for row in log_rows(store)] == [
        ("extension", "grant", "", f"{until:%Y-%m-%d %H:%M:%S}", "medical note"),
        ("extension", "grant", "", f"{until:%Y-%m-%d %H:%M:%S}", "medical note"),
        ("extension", "clear", f"{until:%Y-%m-%d %H:%M:%S}", "", "")]


def test_a_regrade_decides_lateness_with_the_extension_and_a_verdict_finished_after_a_grant_has_no_penalty(any_store):
    store = any_store
    set_rule(store, "ex00", utcnow() - timedelta(hours=1), "accept", 48, 0.25)
    ann_sid, bob_sid = grade(store, ANN, "ex00", 1.0), grade(store, BOB, "ex00", 1.0)
    submit(store, user_id(store, ANN), "ex00", "# x", "x.py")
    running = queue.claim(store, "w1")  # graded while the extension is granted: its claim carries the penalty
    assert running.penalty == 0.25
    adjustments.grant_extension(store, ANN, "ex00", utcnow() + timedelta(days=1), "flood", INSTRUCTOR)
    assert queue.finish(store, running, verdict(0.8, running.penalty, passed=False))
    assert lateness(store, running.submission_id) == (False, 0.0, 0.8)  # not 0.6
    assert queue.enqueue_regrade(store) == 3
    for _ in range(3):
        claim = queue.claim(store, "w1")
        assert claim.penalty == (0.0 if claim.user_id == user_id(store, ANN) else 0.25)
        assert queue.finish(store, claim, verdict(1.0, claim.penalty))
    assert lateness(store, ann_sid) == (False, 0.0, 1.0) and lateness(store, bob_sid) == (True, 0.25, 0.75)


def test_an_override_replaces_the_score_everywhere_outlives_regrades_and_clearing_restores_it(any_store, tmp_path):
    store = any_store
    ann = user_id(store, ANN)
    grade(store, ANN, "ex01", 0.4)
    outcome = adjustments.set_override(store, ANN, "ex01", "0.9", "oral exam made up for it", INSTRUCTOR)
    assert (outcome.action, outcome.before, outcome.after) == ("grant", 0.4, 0.9)
    adjustments.set_override(store, BOB, "ex02", 1, "excused: exchange semester", "ta@class.test")  # never submitted
    grades = book(store)
    assert (grades.loc[ANN, "ex01"], grades.loc[ANN, "ex01_source"]) == (0.9, "override")
    assert (grades.loc[BOB, "ex02"], grades.loc[BOB, "ex02_source"], grades.loc[BOB, "ex02_attempts"]) == \
        (1.0, "override", 0)
    assert grades.loc[ANN, "total"] == pytest.approx(0.9 / len(exercise_table.EXERCISE_IDS))
    assert learner_records.best_results(store, ann)["ex01"]["score"] == 0.9
    with store.session() as session:
        scores = outbox.best_scores(session, [ann, user_id(store, BOB)])
    assert (scores[(ann, "ex01")], scores[(user_id(store, BOB), "ex02")]) == (0.9, 1.0)
    rows = exported(store, tmp_path)
    assert (rows[ANN]["ex01"], rows[ANN]["ex01_source"], rows[BOB]["ex02"], rows[BOB]["ex02_source"]) == \
        ("0.9", "override", "1", "override")
    assert (rows[ANN]["ex00"], rows[ANN]["ex00_source"], rows["cy@class.test"]["ex01_source"]) == ("", "", "")
    # a class-wide regrade (and a new submission) changes the computed score, not the one that counts
    assert queue.enqueue_regrade(store) == 1
    claim = queue.claim(store, "w1")
    assert queue.finish(store, claim, verdict(0.3))
    grade(store, ANN, "ex01", 0.5)
    assert book(store).loc[ANN, "ex01"] == 0.9
    adjustments.set_override(store, ANN, "ex01", 0.7, "oral exam, second look", INSTRUCTOR)
    assert book(store).loc[ANN, "ex01"] == 0.7
    outcome = adjustments.clear_override(store, ANN, "ex01", "marked wrongly", INSTRUCTOR)
    assert (outcome.before, outcome.after) == (0.7, 0.5)  # the computed best again: the newer 0.5
    grades = book(store)
    assert (grades.loc[ANN, "ex01"], grades.loc[ANN, "ex01_source"]) == (0.5, "graded")
    assert learner_records.best_results(store, ann)["ex01"]["score"] == 0.5
    assert log_rows(store) == [
        ("override", "grant", "", "0.9", "oral exam made up for it", INSTRUCTOR),
        ("override", "grant", "", "1", "excused: exchange semester", "ta@class.test"),
        ("override", "change", "0.9", "0.7", "oral exam, second look", INSTRUCTOR),
        ("override", "clear", "0.7", "", "marked wrongly", INSTRUCTOR)]
    # the same grant twice changes nothing and logs nothing
    assert adjustments.set_override(store, BOB, "ex02", 1.0, "excused: exchange semester", INSTRUCTOR).action is None
    assert len(log_rows(store)) == 4


def test_the_adjustments_listing_and_the_cached_class_frame_follow_every_change(class_store):
    store = class_store
    set_rule(store, "ex00", utcnow() - timedelta(hours=1), "accept", 48, 0.5)
    grade(store, ANN, "ex00", 1.0)
    staff = user_id(store, INSTRUCTOR)
    assert access.gradebook(store, staff).set_index("email").loc[ANN, "ex00"] == 0.5  # the frame is now kept
    adjustments.grant_extension(store, ANN, "ex00", utcnow() + timedelta(days=1), "sick", INSTRUCTOR)
    assert access.gradebook(store, staff).set_index("email").loc[ANN, "ex00"] == 1.0  # read again, not the kept one
    listed = access.class_adjustments(store, staff)
    assert listed[["email", "exercise_id", "extension_reason", "extension_by"]].values.tolist() == \
        [[ANN, "ex00", "sick", INSTRUCTOR]]
    with pytest.raises(access.AccessDenied):
        access.class_adjustments(store, user_id(store, ANN))
    class_deadline, bobs, override = access.own_arrangements(store, user_id(store, BOB), "ex00")
    assert class_deadline is not None and (bobs, override) == (class_deadline, None)
    class_deadline, anns, override = access.own_arrangements(store, user_id(store, ANN), "ex00")
    assert anns > utcnow() > class_deadline and override is None


def run(capsys, *args):
    """cli.main in this process -> (exit code, stdout, stderr)."""
    code = cli.main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_commands_refuse_bad_input_with_what_to_do_and_store_nothing(class_store, sqlite_url, capsys):
    store = class_store
    deadline = utcnow() - timedelta(days=1)
    set_rule(store, "ex03", deadline, "accept", 48, 0.2)
    later = f"{deadline + timedelta(days=3):%Y-%m-%d %H:%M}"
    base = ["--db", sqlite_url]
    refused = {
        ("extend", "--user", "zed@class.test", "--exercise", "ex03", "--until", later, "--reason", "r"):
            "zed@class.test is not on this class's roster",
        ("extend", "--user", ANN, "--exercise", "ex99", "--until", later, "--reason", "r"):
            "unknown exercise 'ex99': use one of ex00,",
        ("extend", "--user", ANN, "--exercise", "ex03", "--until", later, "--reason", "   "):
            "--reason is empty",
        ("extend", "--user", ANN, "--exercise", "ex03", "--until", later, "--reason", "a\x00b"):
            "control character U+0000",
        ("extend", "--user", ANN, "--exercise", "ex03", "--until", f"{deadline - timedelta(hours=1):%Y-%m-%d %H:%M}",
         "--reason", "r"): "is not later than ex03's deadline",
        ("extend", "--user", ANN, "--exercise", "ex04", "--until", later, "--reason", "r"):
            "ex04 has no deadline, so there is nothing to extend",
        ("extend", "--user", ANN, "--exercise", "ex03", "--until", "2026-12-30", "--reason", "r"):
            "write a date and time",
        ("extend", "--user", ANN, "--exercise", "ex03", "--until", "next friday", "--reason", "r"):
            "write a date and time",
        ("extend", "--user", "ta@class.test", "--exercise", "ex03", "--until", later, "--reason", "r"):
            "ta@class.test is a ta, not a learner",
        ("extend", "--user", ANN, "--exercise", "ex03", "--until", later, "--reason", "r", "--by", BOB):
            "--by bob@class.test: name a TA or instructor",
        ("extend", "--user", ANN, "--exercise", "ex03", "--clear"): "has no extension of ex03: nothing to clear",
        ("override", "--user", ANN, "--exercise", "ex03", "--score", "1.5", "--reason", "r"):
            "--score 1.5: give a fraction of the full score from 0 to 1",
        ("override", "--user", ANN, "--exercise", "ex03", "--score", "-0.1", "--reason", "r"):
            "--score -0.1: give a fraction",
        ("override", "--user", ANN, "--exercise", "ex03", "--score", "nan", "--reason", "r"): "--score nan",
        ("override", "--user", ANN, "--exercise", "ex03", "--score", "80%", "--reason", "r"):
            "--score '80%' is not a number",
        ("override", "--user", ANN, "--exercise", "ex03", "--score", "0.8"): "--reason is empty",
        ("override", "--user", ANN, "--exercise", "ex03", "--clear"): "has no score override of ex03",
        ("adjustments", "--user", ANN): "--user and --exercise choose log rows: add --log",
    }
    for args, message in refused.items():
        code, out, err = run(capsys, *args, *base)
        assert (code, out) == (1, ""), (args, code, out, err)
        assert err.startswith("error: ") and message in err, (args, err)
    for args in (("extend", "--user", ANN, "--exercise", "ex03", "--reason", "r"),  # neither --until nor --clear
                 ("override", "--user", ANN, "--exercise", "ex03", "--score", "1", "--clear")):
        code, _out, err = run(capsys, *args, *base)
        assert code == 2 and "--clear" in err, err
    assert log_rows(store) == [] and adjustments.current(store).empty

    code, out, err = run(capsys, "extend", "--user", "ANN@class.test ", "--exercise", "ex03", "--until",
                         f"{deadline + timedelta(days=3):%Y-%m-%dT%H:%M}+08:00", "--reason", "sick", *base)
    assert code == 0, err
    until = f"{deadline + timedelta(days=3) - timedelta(hours=8):%Y-%m-%d %H:%M}"  # +08:00 read as such, kept in UTC
    assert f"deadline extended to {until} UTC" in out and f"the exercise's being {deadline:%Y-%m-%d %H:%M}" in out
    code, out, _ = run(capsys, "override", "--user", ANN, "--exercise", "ex03", "--score", "0.75", "--reason",
                       "regraded by hand", "--by", "ta@class.test", *base)
    assert code == 0 and "score set to 0.75" in out and "none -> 0.75" in out
    code, out, _ = run(capsys, "adjustments", *base)
    listed = list(csv.DictReader(out.splitlines()))
    assert [(r["email"], r["exercise_id"], r["extended_until"][:16], r["override"], r["override_by"]) for r in listed] \
        == [(ANN, "ex03", until, "0.75", "ta@class.test")]
    code, out, _ = run(capsys, "override", "--user", ANN, "--exercise", "ex03", "--clear", *base)
    assert code == 0 and "0.75 -> none" in out
    code, out, _ = run(capsys, "adjustments", "--log", "--user", ANN, *base)
    logged = list(csv.DictReader(out.splitlines()))
    assert [(r["kind"], r["action"], r["after"]) for r in logged] == [
        ("extension", "grant", f"{until}:00"), ("override", "grant", "0.75"), ("override", "clear", "")]
    assert logged[0]["actor"].startswith("command line (") and logged[1]["actor"] == "ta@class.test"


@pytest.mark.slow
def test_regrade_all_keeps_an_override_and_grades_extended_late_work_on_time(class_store, sqlite_url, capsys,
                                                                             tmp_path):
    """The real grader and `python -m classroom regrade --all`: an extension and an override survive it."""
    from classroom.line.worker import run_worker

    store = class_store
    set_rule(store, "ex00", utcnow() - timedelta(hours=1), "accept", 48, 0.2)
    ann_sid, bob_sid = (submit(store, user_id(store, email), "ex00", solution("ex00"), "ex00_paths.py")
                        for email in (ANN, BOB))
    run_worker(sqlite_url, sandbox="process", once=True, log=lambda _: None)
    assert lateness(store, ann_sid) == lateness(store, bob_sid) == (True, 0.2, 0.8)
    base = ["--db", sqlite_url]
    code, out, err = run(capsys, "extend", "--user", ANN, "--exercise", "ex00", "--until",
                         f"{utcnow() + timedelta(days=1):%Y-%m-%d %H:%M}", "--reason", "ill", *base)
    assert code == 0 and "1 submission(s) changed lateness" in out and "0.8 -> 1" in out, (out, err)
    code, out, err = run(capsys, "override", "--user", BOB, "--exercise", "ex00", "--score", "0.5", "--reason",
                         "hearing outcome", *base)
    assert code == 0 and "0.8 -> 0.5" in out, (out, err)
    assert run(capsys, "regrade", "--all", "--here", "--sandbox", "process", *base)[0] == 0
    assert lateness(store, ann_sid) == (False, 0.0, 1.0) and lateness(store, bob_sid) == (True, 0.2, 0.8)
    rows = exported(store, tmp_path)
    assert (rows[ANN]["ex00"], rows[ANN]["ex00_late"], rows[ANN]["ex00_source"]) == ("1", "0", "graded")
    assert (rows[BOB]["ex00"], rows[BOB]["ex00_late"], rows[BOB]["ex00_source"]) == ("0.5", "1", "override")
    assert run(capsys, "override", "--user", BOB, "--exercise", "ex00", "--clear", *base)[0] == 0
    assert exported(store, tmp_path)[BOB]["ex00"] == "0.8"
