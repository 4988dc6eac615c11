"""An LMS account is bound to one roster member for good: an email changed in the LMS never moves it.

A local LMS (tests/lti_platform.py) over real HTTP, on SQLite and Postgres:
ann's account carrying bob's email (bob never launched, or bob linked), an
unknown email, the email changed back, the roster sync (NRPS), and staff's
lti-relink / lti-unlink.
"""

import re
import pytest
import requests
from sqlalchemy import select

from classroom.line import queue
from classroom.web import signin
from classroom.data.roster import user_by_email
from classroom.data.submissions import submit
from classroom.lti import config, passback, roster
from classroom.lti.launch import create_app
from classroom.data.models import LtiMember, User
from tests.classroom_support import BACKENDS, make_class, run_cli
from tests.lti_platform import LocalLms, ServerThread, free_port, launch_form

pytestmark = pytest.mark.slow  # two real HTTP servers per test (and Postgres)


@pytest.fixture(params=BACKENDS)
def lms(request, tmp_path):
    """A class (SQLite, then Postgres) with a tool endpoint and a local LMS where ann has launched once."""
    url = f"sqlite:///{tmp_path / 'class.db'}" if request.param == "sqlite" else request.getfixturevalue("pg_url")
    store = make_class(url, tmp_path)
    port = free_port()
    tool = ServerThread(create_app(store, "http://app.test/"), port).start()
    platform = LocalLms(f"http://127.0.0.1:{port}").start()
    platform.add_person("ann", "ann@class.test")
    config.register_platform(store, **platform.register_args())
    platform.store, platform.db_url = store, url
    try:
        assert signed_in_as(platform, "ann") == "ann@class.test"
        yield platform
    finally:
        platform.stop()
        tool.stop()
        store.close()


def launch(lms, login):
    """One launch of `login`'s LMS account -> the tool's answer."""
    browser = requests.Session()
    action, fields = launch_form(browser.get(f"{lms.url}/start/{login}", timeout=20).text)
    return browser.post(action, data=fields, allow_redirects=False, timeout=20)


def signed_in_as(lms, login):
    """The roster email a launch signs in as (its one-time link used), or the refusal's problem key."""
    answer = launch(lms, login)
    if answer.status_code != 303:
        return re.search(r"data-problem='(\w+)'", answer.text).group(1)
    token = answer.headers["location"].split("token=", 1)[1]
    return signin.resolve(lms.store, link_token=token).user.email


def links(store):
    """{LMS sub: roster email} of every course link."""
    with store.session() as session:
        return {sub: email for sub, email in session.execute(
            select(LtiMember.sub, User.email).join(User, User.id == LtiMember.user_id))}


def test_an_account_whose_email_became_an_unlaunched_members_is_refused_and_moves_nothing(lms):
    lms.people["ann"]["email"] = "bob@class.test"  # bob never launched
    answer = launch(lms, "ann")
    assert answer.status_code == 403 and "data-problem='account_moved'" in answer.text
    assert "lti-relink --issuer" in answer.text and "--sub lms-ann" in answer.text  # what staff run
    assert links(lms.store) == {"lms-ann": "ann@class.test"}  # bob's user was not re-linked
    lms.add_person("bob", "bob@class.test")
    assert signed_in_as(lms, "bob") == "bob@class.test"  # the real bob is not locked out
    assert links(lms.store) == {"lms-ann": "ann@class.test", "lms-bob": "bob@class.test"}


def test_an_account_whose_email_became_a_linked_members_is_refused(lms):
    lms.add_person("bob", "bob@class.test")
    assert signed_in_as(lms, "bob") == "bob@class.test"
    lms.people["ann"]["email"] = "bob@class.test"
    assert signed_in_as(lms, "ann") == "account_moved"
    assert signed_in_as(lms, "bob") == "bob@class.test"
    assert links(lms.store) == {"lms-ann": "ann@class.test", "lms-bob": "bob@class.test"}


def test_an_unknown_email_adds_nobody_even_when_learners_may_join_and_changed_back_it_signs_in_again(lms):
    config.register_platform(lms.store, **lms.register_args(), auto_add_learners=True)
    lms.people["ann"]["email"] = "stranger@class.test"
    assert signed_in_as(lms, "ann") == "account_moved"
    assert user_by_email(lms.store, "stranger@class.test") is None
    lms.people["ann"]["email"] = "ANN@class.test"  # changed back (any case)
    assert signed_in_as(lms, "ann") == "ann@class.test"


def test_the_refusal_is_worded_in_chinese_for_a_chinese_browser(lms):
    lms.people["ann"]["email"] = "bob@class.test"
    browser = requests.Session()
    action, fields = launch_form(browser.get(f"{lms.url}/start/ann", timeout=20).text)
    answer = browser.post(action, data=fields, headers={"Accept-Language": "zh-CN"}, timeout=20)
    assert "这个 LMS 账号已关联到" in answer.text and "lti-relink" in answer.text


def test_the_roster_sync_never_moves_an_account_to_the_email_it_now_carries(lms):
    lms.add_person("cy", "cy@class.test")
    lms.people["ann"]["email"] = "bob@class.test"
    (context_pk,) = roster.courses_with_roster(lms.store)
    report = roster.sync_course(lms.store, context_pk)
    assert report.linked == 1 and report.not_admitted == ["bob@class.test: account_moved"]
    assert links(lms.store) == {"lms-ann": "ann@class.test", "lms-cy": "cy@class.test"}


def test_staff_relink_moves_the_account_and_its_scores_go_to_the_new_member(lms):
    store = lms.store
    bob = user_by_email(store, "bob@class.test")
    submit(store, bob.id, "ex01", "# x", "x.py")
    claim = queue.claim(store, "w1")
    assert queue.finish(store, claim, dict(status="passed", passed=True, raw_score=1.0, score=1.0, summary="",
                                           checks=[], mistake_ids=[], report={}, sandbox="process",
                                           grader_version="test", run_s=0.0))
    lms.people["ann"]["email"] = "bob@class.test"
    assert signed_in_as(lms, "ann") == "account_moved"
    done = run_cli("lti-relink", "--db", lms.db_url, "--issuer", lms.issuer, "--sub", "lms-ann",
                   "--email", "bob@class.test")
    assert done.returncode == 0, done.stderr
    assert links(store) == {"lms-ann": "bob@class.test"}
    assert signed_in_as(lms, "ann") == "bob@class.test"
    for _ in range(3):
        if not passback.push_due(store).pushed:
            break
    assert lms.held_scores() == {("ex01", "lms-ann"): 1.0}
    again = run_cli("lti-relink", "--db", lms.db_url, "--issuer", lms.issuer, "--sub", "lms-x",
                    "--email", "bob@class.test")
    assert again.returncode == 1 and "no course" in again.stderr


def test_staff_unlink_lets_the_next_launch_link_afresh(lms):
    lms.add_person("ann2", "ann@class.test")
    assert signed_in_as(lms, "ann2") == "other_account"
    done = run_cli("lti-unlink", "--db", lms.db_url, "--email", "ann@class.test")
    assert done.returncode == 0 and "1 course link" in done.stdout, done.stderr
    assert signed_in_as(lms, "ann2") == "ann@class.test"
    assert links(lms.store) == {"lms-ann2": "ann@class.test"}


def test_a_control_character_in_an_lms_name_or_course_title_is_refused_not_a_server_error(lms):
    config.register_platform(lms.store, **lms.register_args(), auto_add_learners=True)
    lms.add_person("zed", "zed@class.test", name="Z\x00ed")
    answer = launch(lms, "zed")
    assert answer.status_code == 403 and "data-problem='bad_text'" in answer.text and "U+0000" in answer.text
    assert user_by_email(lms.store, "zed@class.test") is None
    (context_pk,) = roster.courses_with_roster(lms.store)
    assert roster.sync_course(lms.store, context_pk).not_admitted == ["zed@class.test: bad_text"]
    lms.tamper = {"claims": {"https://purl.imsglobal.org/spec/lti/claim/context": {"id": "c-1",
                                                                                    "title": "Week\x1b1"}}}
    answer = launch(lms, "ann")
    assert answer.status_code == 403 and "data-problem='bad_text'" in answer.text and "U+001B" in answer.text
    lms.tamper = {}
    lms.people["zed"]["name"] = "=HYPERLINK(\"https://evil.test\")"  # a formula is text: stored as sent
    assert signed_in_as(lms, "zed") == "zed@class.test"
    assert user_by_email(lms.store, "zed@class.test").name == "=HYPERLINK(\"https://evil.test\")"
