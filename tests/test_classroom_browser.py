"""Class mode in headless Chromium: a learner signs in by link and submits; an instructor's pages.

Starts `streamlit run app.py` with a class database (SQLite), signs in with
one-time links, and runs a grading worker between steps. Skipped without
Chromium, except in CI (see tests/test_browser.py).
"""

import os
import subprocess
import sys

import pytest

from classroom import store as store_ops
from course.common.i18n import t
from tests.browser_support import ERROR_SELECTOR, ROOT, SHOTS, full_page_screenshot, main_text, require_browser, \
    running_app, wait_for, wait_for_text, wait_until_rendered
from tests.classroom_support import INSTRUCTOR, add_graded, make_class

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def hosted(tmp_path_factory):
    """(server URL, store, database URL) of a class app."""
    require_browser()
    folder = tmp_path_factory.mktemp("class")
    url = f"sqlite:///{folder / 'class.db'}"
    store = make_class(url, folder)
    add_graded(store, "bob@class.test", "ex03", 0.4, "failed", ["dot_no_scale"])
    env = dict(os.environ, ATTENTION_LAB_HOME=str(folder / "home"), ATTENTION_LAB_CLASS_DB=url)
    with running_app(env) as server:
        yield server, store, url


def _errors(driver):
    from selenium.webdriver.common.by import By

    return [e.text[:300] for e in driver.find_elements(By.CSS_SELECTOR, ERROR_SELECTOR)]


def _picked_learner(driver):
    """The learner shown by the gradebook's learner picker."""
    from selenium.webdriver.common.by import By

    label = t("classroom.learner", "zh")
    picker = driver.find_elements(By.CSS_SELECTOR, f'[data-testid="stSelectbox"] input[aria-label="{label}"]')
    return picker[0].get_attribute("value") if picker else None


def _sign_in(driver, store, email, server, page):
    link, _ = store_ops.create_sign_in_link(store, email, f"{server}/{page}")
    driver.get(link)
    wait_until_rendered(driver)


def test_a_learner_submits_and_reads_the_feedback(hosted, browsers):
    from selenium.webdriver.common.by import By

    server, store, url = hosted
    driver = browsers("en")
    _sign_in(driver, store, "ann@class.test", server, "practice")
    assert driver.find_elements(By.CSS_SELECTOR, "h1")[0].text == t("classroom.practice_title", "en")
    assert "token=" not in driver.current_url  # a used link leaves the address bar
    driver.find_element(By.CSS_SELECTOR, '[data-testid="stBaseButton-primary"]').click()  # the ex00 stub
    wait_for_text(driver, t("classroom.state_queued", "en", position=1))
    worker = subprocess.run([sys.executable, "-m", "classroom", "worker", "--db", url, "--once",
                             "--sandbox", "process"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert worker.returncode == 0, worker.stderr
    wait_for_text(driver, "not started: write receptive_field")  # the grader's words, pushed to the page
    wait_until_rendered(driver)
    assert _errors(driver) == []
    full_page_screenshot(driver, SHOTS / "en_class_practice.png")
    assert "bob@class.test" not in main_text(driver)
    driver.get(f"{server}/gradebook")  # not this learner's page, even by its address
    wait_until_rendered(driver)
    assert t("classroom.gradebook_title", "en") not in main_text(driver) and "bob@class.test" not in main_text(driver)


def test_an_instructor_filters_the_gradebook_and_opens_analytics(hosted, browsers):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    server, store, _ = hosted
    driver = browsers("zh")
    _sign_in(driver, store, INSTRUCTOR, server, "gradebook")
    assert driver.find_elements(By.CSS_SELECTOR, "h1")[0].text == t("classroom.gradebook_title", "zh")
    assert _errors(driver) == []
    wait_for(driver, lambda d: _picked_learner(d) == "ann@class.test",  # the picker starts with the first learner
             lambda: f"the picker shows {_picked_learner(driver)!r}", 60)
    box = [b for b in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stTextInput"] input')
           if b.is_displayed()][0]
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", box)
    box.click()
    box.send_keys("bob" + Keys.ENTER)
    wait_for(driver, lambda d: _picked_learner(d) == "bob@class.test",  # the only learner left after filtering
             lambda: f"the picker shows {_picked_learner(driver)!r}", 60)
    wait_until_rendered(driver)
    full_page_screenshot(driver, SHOTS / "zh_class_gradebook.png")
    session = driver.current_url.split("session=")[1]  # a reload or a new tab stays signed in
    driver.get(f"{server}/analytics?session={session}")
    wait_until_rendered(driver)
    wait_for_text(driver, t("classroom.analytics_title", "zh"))
    assert driver.find_elements(By.CSS_SELECTOR, '[data-testid="stVegaLiteChart"]')
    assert "100%" in main_text(driver) and _errors(driver) == []
    full_page_screenshot(driver, SHOTS / "zh_class_analytics.png")
