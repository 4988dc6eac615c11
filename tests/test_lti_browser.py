"""An LMS launch in headless Chromium, to the signed-in class app: the local LMS, the tool endpoint, Streamlit."""

import os

import pytest

from classroom.lti import config
from classroom.lti.launch import create_app
from course.common.i18n import t
from tests.browser_support import main_text, require_browser, running_app, wait_for, wait_until_rendered
from tests.classroom_support import make_class
from tests.lti_platform import LocalLms, ServerThread, free_port

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


@pytest.fixture
def hosted_with_lms(tmp_path):
    """(app URL, LMS) of a class app whose tool endpoint a local LMS launches."""
    require_browser()
    url = f"sqlite:///{tmp_path / 'class.db'}"
    store = make_class(url, tmp_path)
    env = dict(os.environ, ATTENTION_LAB_HOME=str(tmp_path / "home"), ATTENTION_LAB_CLASS_DB=url)
    with running_app(env) as server:
        port = free_port()
        tool = ServerThread(create_app(store, server), port).start()  # the app's root: a learner lands on Practice
        lms = LocalLms(f"http://127.0.0.1:{port}").start()
        lms.add_person("ann", "ann@class.test")
        config.register_platform(store, **lms.register_args())
        try:
            yield server, lms
        finally:
            lms.stop()
            tool.stop()
            store.close()


def test_a_launch_from_the_lms_opens_the_class_app_signed_in(hosted_with_lms, browsers):
    server, lms = hosted_with_lms
    driver = browsers("en")
    driver.delete_all_cookies()
    driver.get(f"{lms.url}/start/ann")  # the LMS's link: login, the LMS's form post, the launch, the app
    wait_for(driver, lambda d: d.current_url.startswith(server), "the launch did not reach the app")
    wait_until_rendered(driver)
    wait_for(driver, lambda d: t("classroom.practice_title", "en") in main_text(d),
             "the app did not open signed in on Practice")
    assert "token=" not in driver.current_url  # the one-time link left the address bar
    wait_for(driver, lambda d: (d.get_cookie("attention_lab_session") or {}).get("value"),
             "the page wrote no session cookie")
