"""LTI 1.3 launches from a local LMS (tests/lti_platform.py, real HTTP servers): who gets in, and every refusal."""

import pytest
import requests

from classroom.web import signin
from classroom.data.roster import remove_user, user_by_email
from classroom.lti import config
from classroom.lti.launch import create_app
from tests.classroom_support import INSTRUCTOR, make_class
from tests.lti_platform import LocalLms, ServerThread, free_port, launch_form, new_key

pytestmark = pytest.mark.slow  # two real HTTP servers per test

APP_URL = "http://app.test/"


@pytest.fixture
def lms(tmp_path):
    """A class, its tool endpoint and a registered local LMS with ann (on the roster), zed (not) and the prof."""
    store = make_class(f"sqlite:///{tmp_path / 'class.db'}", tmp_path)
    port = free_port()
    tool = ServerThread(create_app(store, APP_URL), port).start()
    platform = LocalLms(f"http://127.0.0.1:{port}").start()
    platform.add_person("ann", "Ann@Class.test")
    platform.add_person("zed", "zed@class.test")
    platform.add_person("prof", INSTRUCTOR, role="Instructor")
    config.register_platform(store, **platform.register_args())
    platform.store = store
    yield platform
    platform.stop()
    tool.stop()
    store.close()


def begin(lms, login="ann", browser=None):
    """The LMS's launch up to the form its page posts to the tool -> (browser, action, fields)."""
    browser = browser or requests.Session()
    page = browser.get(f"{lms.url}/start/{login}", timeout=20)
    assert page.status_code == 200, page.text
    action, fields = launch_form(page.text)
    return browser, action, fields


def post(browser, action, fields):
    return browser.post(action, data=fields, allow_redirects=False, timeout=20)


def problem(response):
    import re

    return re.search(r"data-problem='(\w+)'", response.text).group(1)


def test_a_valid_launch_signs_the_learner_in_with_a_one_time_link(lms):
    browser, action, fields = begin(lms)
    answer = post(browser, action, fields)
    assert answer.status_code == 303
    link = answer.headers["location"]
    assert link.startswith("http://app.test/practice?token=")  # a learner lands on Practice
    token = link.split("token=", 1)[1]
    first = signin.resolve(lms.store, link_token=token)
    assert first.user.email == "ann@class.test" and first.session_token
    assert signin.resolve(lms.store, link_token=token).problem == "link_invalid"  # the link works once


def test_the_same_launch_posted_again_is_refused_as_replayed(lms):
    browser, action, fields = begin(lms)
    assert post(browser, action, fields).status_code == 303
    again = post(browser, action, fields)
    assert again.status_code == 400 and problem(again) == "replayed"
    assert "already used" in again.text


def test_a_forged_signature_is_refused(lms):
    lms.tamper = {"key": new_key()[0]}  # signed by someone else's key under the platform's kid
    browser, action, fields = begin(lms)
    answer = post(browser, action, fields)
    assert answer.status_code == 400 and problem(answer) == "signature_bad"
    assert "signature" in answer.text


def test_an_edited_payload_fails_its_signature(lms):
    import base64
    import json

    browser, action, fields = begin(lms)
    head, body, sig = fields["id_token"].split(".")
    claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    claims["email"] = INSTRUCTOR  # a learner making themselves the instructor
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    answer = post(browser, action, dict(fields, id_token=f"{head}.{forged}.{sig}"))
    assert problem(answer) == "signature_bad"


@pytest.mark.parametrize("claims, expected", [
    ({"aud": "someone-else", "azp": "someone-else"}, "audience_wrong"),
    ({"iss": "https://other-lms.test"}, "issuer_unknown"),
    ({"https://purl.imsglobal.org/spec/lti/claim/deployment_id": "dep-unknown"}, "deployment_unknown"),
    ({"nonce": "a-nonce-nobody-issued"}, "nonce_unknown"),
])
def test_a_token_for_another_audience_issuer_deployment_or_nonce_is_refused(lms, claims, expected):
    lms.tamper = {"claims": claims}
    browser, action, fields = begin(lms)
    answer = post(browser, action, fields)
    assert answer.status_code == 400 and problem(answer) == expected


def test_an_expired_id_token_is_refused(lms):
    lms.tamper = {"clock": -600, "expiration": 300}  # issued 10 min ago, valid for 5
    browser, action, fields = begin(lms)
    assert problem(post(browser, action, fields)) == "token_expired"


def test_an_expired_state_is_refused(lms):
    from sqlalchemy import update

    from classroom.data.models import LtiLaunchState, utcnow

    browser, action, fields = begin(lms)
    with lms.store.session() as session:
        session.execute(update(LtiLaunchState).values(expires_at=utcnow()))
    answer = post(browser, action, fields)
    assert problem(answer) == "state_expired" and "expired" in answer.text


def test_a_launch_from_another_browser_lacks_the_state_cookie(lms):
    _browser, action, fields = begin(lms)
    answer = post(requests.Session(), action, fields)
    assert problem(answer) == "state_cookie"


def test_the_platform_key_set_down_refuses_with_a_retry_message(lms):
    browser, action, fields = begin(lms)
    lms.down = True
    answer = post(browser, action, fields)
    assert answer.status_code == 502 and problem(answer) == "key_unreachable"


def test_someone_not_on_the_roster_is_refused_unless_learners_may_join(lms):
    browser, action, fields = begin(lms, "zed")
    answer = post(browser, action, fields)
    assert answer.status_code == 403 and problem(answer) == "not_on_roster" and "zed@class.test" in answer.text
    args = lms.register_args()
    config.register_platform(lms.store, **args, auto_add_learners=True)
    browser, action, fields = begin(lms, "zed")
    assert post(browser, action, fields).status_code == 303
    assert user_by_email(lms.store, "zed@class.test").role == "learner"


def test_the_roster_decides_the_role_and_removed_people_stay_out(lms):
    browser, action, fields = begin(lms, "prof")
    link = post(browser, action, fields).headers["location"]
    assert signin.resolve(lms.store, link_token=link.split("token=")[1]).user.role == "instructor"
    assert link.startswith("http://app.test/gradebook?token=")  # staff land on the gradebook
    remove_user(lms.store, "ann@class.test")
    browser, action, fields = begin(lms, "ann")
    answer = post(browser, action, fields)
    assert answer.status_code == 403 and problem(answer) == "removed"


def test_refusals_are_worded_in_chinese_for_a_chinese_browser(lms):
    browser, action, fields = begin(lms)
    post(browser, action, fields)
    again = browser.post(action, data=fields, headers={"Accept-Language": "zh-CN,zh;q=0.9"}, timeout=20)
    assert "已经用过" in again.text


def test_the_tool_publishes_its_public_key_only(lms):
    keys = requests.get(f"{lms.tool_url}/lti/jwks", timeout=10).json()["keys"]
    assert len(keys) == 1 and keys[0]["kty"] == "RSA" and "d" not in keys[0]


def test_an_lms_learner_with_staff_email_or_a_second_account_gets_nowhere(lms):
    lms.add_person("mallory", INSTRUCTOR)  # a learner who put the instructor's address on their LMS account
    browser, action, fields = begin(lms, "mallory")
    answer = post(browser, action, fields)
    assert answer.status_code == 403 and problem(answer) == "staff_as_learner"
    browser, action, fields = begin(lms, "ann")
    assert post(browser, action, fields).status_code == 303  # ann's own account is hers from now on
    lms.add_person("ann2", "ann@class.test")
    browser, action, fields = begin(lms, "ann2")
    answer = post(browser, action, fields)
    assert answer.status_code == 403 and problem(answer) == "other_account"
