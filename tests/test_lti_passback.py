"""Scores to a local LMS (AGS) and its roster (NRPS): equal to the gradebook, never duplicated, never lost."""

import time
from contextlib import contextmanager
from datetime import timedelta

import pytest
import requests
from sqlalchemy import func, select, update

from classroom.data import adjustments, exercise_table
from classroom.analytics import analytics, frames
from classroom.line import queue
from classroom.data.roster import user_by_email
from classroom.data.settings import set_rule
from classroom.data.submissions import submit
from classroom.lti import config, passback, roster
from classroom.lti.launch import create_app
from classroom.data.models import LtiLineItem, LtiScore, utcnow
from tests.classroom_support import make_class
from tests.lti_platform import LocalLms, ServerThread, free_port, launch_form

pytestmark = pytest.mark.slow  # two real HTTP servers per test


@contextmanager
def hosted_lms(url, tmp_path):
    """A class at `url` with a tool endpoint and a local LMS whose course ann and bob have launched from."""
    store = make_class(url, tmp_path)
    port = free_port()
    tool = ServerThread(create_app(store, "http://app.test/"), port).start()
    platform = LocalLms(f"http://127.0.0.1:{port}").start()
    for login in ("ann", "bob"):
        platform.add_person(login, f"{login}@class.test")
    config.register_platform(store, **platform.register_args())
    platform.store = store
    try:
        for login in ("ann", "bob"):
            launch(platform, login)
        yield platform
    finally:
        platform.stop()
        tool.stop()
        store.close()


@pytest.fixture
def lms(tmp_path):
    with hosted_lms(f"sqlite:///{tmp_path / 'class.db'}", tmp_path) as platform:
        yield platform


def launch(lms, login):
    browser = requests.Session()
    action, fields = launch_form(browser.get(f"{lms.url}/start/{login}", timeout=20).text)
    assert browser.post(action, data=fields, allow_redirects=False, timeout=20).status_code == 303


def grade(store, email, ex_id, score, passed, worker="w1"):
    """Submit and store a verdict through the queue, as a worker does (no grader run)."""
    user = user_by_email(store, email)
    submit(store, user.id, ex_id, "# x", "x.py")
    claim = queue.claim(store, worker)
    assert claim is not None
    verdict = dict(status="passed" if passed else "failed", passed=passed, raw_score=score,
                   score=round(score * (1 - claim.penalty), 4), summary="", checks=[], mistake_ids=[], report={},
                   sandbox="process", grader_version="test", run_s=0.0)
    assert queue.finish(store, claim, verdict)


def drain(store):
    """Push until nothing is due now -> the reports."""
    reports = []
    while True:
        reports.append(passback.push_due(store))
        if not (reports[-1].pushed or reports[-1].unchanged):
            return reports


def gradebook_scores(store):
    """{(exercise id, email): the score that counts} of the gradebook (blank cells left out)."""
    book = analytics.gradebook(frames.submissions_frame(store), exercise_table.EXERCISE_IDS, frames.learners(store),
                               adjustments=adjustments.current(store))
    return {(ex_id, row["email"]): row[ex_id] for _, row in book.iterrows() for ex_id in exercise_table.EXERCISE_IDS
            if row[ex_id] == row[ex_id]}


def lms_scores(lms):
    emails = {person["sub"]: person["email"] for person in lms.people.values()}
    return {(ex_id, emails[sub]): score for (ex_id, sub), score in lms.held_scores().items()}


def test_the_lms_holds_the_gradebooks_best_scores(lms):
    store = lms.store
    set_rule(store, "ex03", utcnow() - timedelta(hours=1), "accept", 48, 0.25)
    grade(store, "ann@class.test", "ex01", 0.5, False)
    grade(store, "ann@class.test", "ex01", 1.0, True)
    grade(store, "ann@class.test", "ex01", 0.25, False)  # a worse one later: the pass stays the best
    grade(store, "bob@class.test", "ex03", 1.0, True)  # late: 0.75
    grade(store, "bob@class.test", "ex01", 0.9, False)
    drain(store)
    assert lms_scores(lms) == gradebook_scores(store)
    assert lms_scores(lms)[("ex03", "bob@class.test")] == 0.75
    assert sorted(item["resourceId"] for item in lms.line_items.values()) == ["ex01", "ex03"]


def test_three_resyncs_and_a_regrade_add_no_line_item_and_no_score(lms):
    store = lms.store
    grade(store, "ann@class.test", "ex01", 1.0, True)
    grade(store, "bob@class.test", "ex01", 0.5, False)
    drain(store)
    items, posts = dict(lms.line_items), len(lms.score_posts)
    assert posts == 2
    for _ in range(3):
        with store.session() as session:  # as if every row were due again (a re-sync from scratch)
            session.execute(update(LtiScore).values(due=True, version=LtiScore.version + 1))
        drain(store)
    queue.enqueue_regrade(store)
    for _ in range(2):  # the regrade gives the same verdicts
        claim = queue.claim(store, "w1")
        same = dict(status="passed" if claim.user_id == user_by_email(store, "ann@class.test").id
                    else "failed", summary="", checks=[], mistake_ids=[], report={}, sandbox="process",
                    grader_version="test", run_s=0.0)
        same.update(passed=same["status"] == "passed", raw_score=1.0 if same["status"] == "passed" else 0.5)
        same["score"] = same["raw_score"]
        assert queue.finish(store, claim, same)
    drain(store)
    assert lms.line_items == items and len(lms.score_posts) == posts
    with store.session() as session:
        assert session.scalar(select(func.count(LtiLineItem.id))) == 1
    grade(store, "bob@class.test", "ex01", 1.0, True)  # a real change: exactly one more score
    drain(store)
    assert len(lms.score_posts) == posts + 1 and lms_scores(lms) == gradebook_scores(store)
    assert lms.token_requests == 1  # one access token for every pass: the course's client is kept with the store


def test_extensions_and_overrides_reach_the_lms_a_regrade_keeps_them_and_clearing_restores_the_computed_score(lms):
    store = lms.store
    staff = "prof@class.test"
    set_rule(store, "ex03", utcnow() - timedelta(hours=1), "accept", 48, 0.5)
    grade(store, "ann@class.test", "ex03", 1.0, True)  # late: 0.5
    grade(store, "bob@class.test", "ex03", 1.0, True)  # late: 0.5
    grade(store, "bob@class.test", "ex01", 0.4, False)
    drain(store)
    posts = len(lms.score_posts)
    assert posts == 3 and lms_scores(lms)[("ex03", "ann@class.test")] == 0.5
    adjustments.grant_extension(store, "ann@class.test", "ex03", utcnow() + timedelta(days=1), "ill", staff)
    adjustments.set_override(store, "bob@class.test", "ex01", 0.9, "oral exam", staff)
    adjustments.set_override(store, "bob@class.test", "ex05", 1.0, "excused", staff)  # never submitted
    drain(store)
    held = lms_scores(lms)
    assert held == gradebook_scores(store)
    assert (held[("ex03", "ann@class.test")], held[("ex03", "bob@class.test")]) == (1.0, 0.5)  # hers alone
    assert (held[("ex01", "bob@class.test")], held[("ex05", "bob@class.test")]) == (0.9, 1.0)
    assert len(lms.score_posts) == posts + 3  # the three changed scores, nothing else
    posts = len(lms.score_posts)
    assert queue.enqueue_regrade(store) == 3
    for _ in range(3):  # the grader gives the same raw scores again
        claim = queue.claim(store, "w1")
        raw, passed = (0.4, False) if claim.exercise_id == "ex01" else (1.0, True)
        assert queue.finish(store, claim, dict(
            status="passed" if passed else "failed", passed=passed, raw_score=raw,
            score=round(raw * (1 - claim.penalty), 4), summary="", checks=[], mistake_ids=[], report={},
            sandbox="process", grader_version="test", run_s=0.0))
    drain(store)
    assert lms_scores(lms) == held and len(lms.score_posts) == posts  # the extension and overrides stand
    adjustments.clear_override(store, "bob@class.test", "ex01", "", staff)
    adjustments.clear_override(store, "bob@class.test", "ex05", "", staff)
    adjustments.clear_extension(store, "ann@class.test", "ex03", "", staff)
    drain(store)
    held = lms_scores(lms)
    assert held == gradebook_scores(store)
    assert (held[("ex01", "bob@class.test")], held[("ex03", "ann@class.test")]) == (0.4, 0.5)
    assert ("ex05", "bob@class.test") not in held  # nothing counts there any more: the LMS's score was cleared
    cleared = [score for _item, score in lms.score_posts[posts:] if "scoreGiven" not in score]
    assert [c["gradingProgress"] for c in cleared] == ["NotReady"]


def make_due_now(store):
    with store.session() as session:
        session.execute(update(LtiScore).values(next_try_at=utcnow()))


@pytest.mark.parametrize("outage", ["503", "stopped"])
def test_an_lms_outage_queues_the_scores_and_delivers_each_once_when_it_is_back(lms, outage):
    store = lms.store
    if outage == "503":
        lms.down = True
    else:
        lms.stop()
    grade(store, "ann@class.test", "ex01", 1.0, True)
    grade(store, "bob@class.test", "ex02", 0.5, False)
    report = passback.push_due(store)
    assert report.pushed == 0 and report.failed == 2 and report.errors
    with store.session() as session:
        rows = list(session.scalars(select(LtiScore)))
    assert all(row.due and row.tries == 1 and row.next_try_at > utcnow() for row in rows)
    assert passback.push_due(store).failed == 0  # waiting for the backoff: nothing tried
    grade(store, "ann@class.test", "ex01", 0.5, False)  # more verdicts while it is down: kept too
    make_due_now(store)
    assert passback.push_due(store).failed == 2
    if outage == "503":
        lms.down = False
    else:
        lms.start()
    make_due_now(store)
    drain(store)
    assert lms_scores(lms) == gradebook_scores(store)
    assert len(lms.score_posts) == 2  # each delivered once
    drain(store)
    assert len(lms.score_posts) == 2


def test_a_verdict_of_a_worker_that_lost_its_job_is_not_pushed(lms):
    store = lms.store
    user = user_by_email(store, "ann@class.test")
    submit(store, user.id, "ex01", "# x", "x.py")
    first = queue.claim(store, "w1", lease_s=0.05)
    time.sleep(0.1)  # w1 stalls past its lease; w2 grades the job
    second = queue.claim(store, "w2")
    verdict = dict(status="passed", passed=True, raw_score=1.0, score=1.0, summary="", checks=[], mistake_ids=[],
                   report={}, sandbox="process", grader_version="test", run_s=0.0)
    assert queue.finish(store, second, verdict)
    assert not queue.finish(store, first, dict(verdict, status="failed", passed=False, score=0.0, raw_score=0.0))
    drain(store)
    assert lms_scores(lms) == {("ex01", "ann@class.test"): 1.0} and len(lms.score_posts) == 1


def test_the_roster_comes_from_the_lms_course(lms):
    store = lms.store
    lms.add_person("cy", "cy@class.test")
    lms.add_person("zed", "zed@class.test")
    lms.add_person("tia", "ta@class.test", role="TeachingAssistant")
    lms.add_person("ann2", "ann@class.test")  # a second LMS account with ann's address: not linked to her
    (context_pk,) = roster.courses_with_roster(store)
    report = roster.sync_course(store, context_pk)  # six members, read in pages of two
    assert report.linked == 4
    assert sorted(report.not_admitted) == ["ann@class.test: other_account", "zed@class.test: not_on_roster"]
    assert user_by_email(store, "zed@class.test") is None
    config.register_platform(store, **lms.register_args(), auto_add_learners=True)
    assert roster.sync_course(store, context_pk).linked == 5
    assert user_by_email(store, "zed@class.test").role == "learner"
    grade(store, "zed@class.test", "ex00", 1.0, True)  # known to the LMS by the roster sync alone
    drain(store)
    assert lms_scores(lms)[("ex00", "zed@class.test")] == 1.0


def test_on_postgres_the_lms_holds_the_gradebooks_best_scores(pg_url, tmp_path):
    with hosted_lms(pg_url, tmp_path) as lms:
        grade(lms.store, "ann@class.test", "ex01", 1.0, True)
        grade(lms.store, "ann@class.test", "ex01", 0.5, False)
        grade(lms.store, "bob@class.test", "ex02", 0.5, False)
        drain(lms.store)
        drain(lms.store)
        assert lms_scores(lms) == gradebook_scores(lms.store) and len(lms.score_posts) == 2
        assert len(lms.line_items) == 2


def test_lti_sync_once_says_what_waits_for_a_retry_and_delivers_later(lms, tmp_path):
    from tests.classroom_support import run_cli

    grade(lms.store, "ann@class.test", "ex01", 1.0, True)
    lms.down = True
    url = str(lms.store.engine.url)
    failed = run_cli("lti-sync", "--once", "--db", url)
    assert failed.returncode == 1
    assert "not delivered, retried later" in failed.stderr and "HTTP 503" in failed.stderr
    assert "1 waiting for a retry" in failed.stdout and lms.score_posts == []
    lms.down = False
    make_due_now(lms.store)
    done = run_cli("lti-sync", "--once", "--db", url)
    assert done.returncode == 0 and "1 pushed" in done.stdout
    assert lms_scores(lms) == {("ex01", "ann@class.test"): 1.0}


def test_lti_register_refuses_bad_input_with_a_message(lms):
    from tests.classroom_support import run_cli

    url = str(lms.store.engine.url)
    args = ["lti-register", "--db", url, "--issuer", "https://lms.test", "--client-id", "c",
            "--auth-login-url", "lms.test/authorize", "--auth-token-url", "https://lms.test/token",
            "--key-set-url", "https://lms.test/jwks", "--deployment", "d"]
    bad = run_cli(*args)
    assert bad.returncode == 1 and "--auth-login-url 'lms.test/authorize'" in bad.stderr and "https://" in bad.stderr
    args[args.index("lms.test/authorize")] = "https://lms.test/authorize"
    good = run_cli(*args)
    assert good.returncode == 0 and "registered https://lms.test (client id c" in good.stdout


def test_lti_sync_killed_mid_push_loses_nothing_and_the_lms_holds_one_result_each(lms):
    import os
    import signal
    import subprocess
    import sys

    from tests.classroom_support import ROOT

    store = lms.store
    for ex_id in exercise_table.EXERCISE_IDS:
        for email in ("ann@class.test", "bob@class.test"):
            grade(store, email, ex_id, 0.5, False)
    lms.delay_s = 0.3
    env = dict(os.environ, ATTENTION_LAB_CLASS_DB=str(store.engine.url))
    sync = subprocess.Popen([sys.executable, "-m", "classroom", "lti-sync"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not lms.score_posts and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        sync.send_signal(signal.SIGKILL)  # mid-push: some scores posted, not all recorded
        sync.wait(30)
    assert 0 < len(lms.score_posts) < 2 * len(exercise_table.EXERCISE_IDS)
    lms.delay_s = 0.0
    drain(store)
    assert lms_scores(lms) == gradebook_scores(store)  # nothing lost
    n = len(exercise_table.EXERCISE_IDS)
    assert len(lms.scores) == 2 * n and len(lms.line_items) == n  # one result per learner and line item
    with store.session() as session:
        assert session.scalar(select(func.count(LtiScore.id)).where(LtiScore.due.is_(True))) == 0


def test_a_line_item_deleted_in_the_lms_is_made_again_at_the_retry(lms):
    store = lms.store
    grade(store, "ann@class.test", "ex01", 0.5, False)
    drain(store)
    lms.line_items.clear()  # the instructor deleted the column in the LMS
    lms.scores.clear()
    grade(store, "ann@class.test", "ex01", 1.0, True)
    assert passback.push_due(store).failed == 1  # 404: the stored line item is forgotten
    make_due_now(store)
    drain(store)
    assert lms_scores(lms) == {("ex01", "ann@class.test"): 1.0} and len(lms.line_items) == 1
