"""The gradebook and analytics pages of a large class (1,000 learners x 10 exercises x 10 submissions) are drawn
in headless Chromium within 3 s of the navigation (the class is seeded as bench/classroom.py seeds it)."""

import os
import statistics

import pytest

from bench.classroom import ANALYTICS_SHOWN, GRADEBOOK_SHOWN, fill_class
from classroom.data.roster import init_class
from classroom.data.sessions import create_sign_in_link
from course.common.exercise_index import EXERCISES
from tests.browser_support import require_browser, running_app, seconds_until_shown, wait_for

pytestmark = pytest.mark.timeout(900)
PROF = "prof@bench.test"


@pytest.mark.slow
@pytest.mark.timing
def test_a_thousand_learners_gradebook_and_analytics_are_drawn_within_three_seconds(browsers, tmp_path):
    from selenium.webdriver.common.by import By

    require_browser()
    url = f"sqlite:///{tmp_path / 'class.db'}"
    store = init_class(url, PROF)
    assert fill_class(store, learners=1000) == 1000 * len(EXERCISES) * 10  # every learner, exercise, attempt
    env = dict(os.environ, ATTENTION_LAB_HOME=str(tmp_path / "home"), ATTENTION_LAB_CLASS_DB=url)
    driver = browsers("en")
    driver.delete_all_cookies()
    try:
        with running_app(env) as server:
            link, _ = create_sign_in_link(store, PROF, f"{server}/gradebook")
            seconds_until_shown(driver, link, GRADEBOOK_SHOWN)  # signs in; the first run of a fresh server
            grid = '[data-testid="stDataFrame"] [role="grid"][aria-rowcount]'
            rows = wait_for(driver, lambda d: [g.get_attribute("aria-rowcount") for g in d.find_elements(By.CSS_SELECTOR, grid)],
                            "the gradebook's grid was not drawn", 60)
            assert rows[0] == "1001"  # a header row and every learner
            gradebook = [seconds_until_shown(driver, f"{server}/gradebook", GRADEBOOK_SHOWN) for _ in range(3)]
            analytics = [seconds_until_shown(driver, f"{server}/analytics", ANALYTICS_SHOWN) for _ in range(3)]
    finally:
        store.close()
    print(f"gradebook {gradebook}, analytics {analytics} (load {os.getloadavg()})")
    assert statistics.median(gradebook) < 3.0, gradebook
    assert statistics.median(analytics) < 3.0, analytics
