"""A followed Practice page in Chromium: each queue change shows within a second, and a poll costs the app server
little CPU (50 open pages poll twice a second each)."""

import os
import time

import pytest

from bench.classroom import SHOWN_AT_JS, server_cpu_s, shown_after
from classroom.line import queue
from classroom.data.sessions import create_sign_in_link
from classroom.data.submissions import submit
from course.common.i18n import t
from tests.browser_support import running_app, wait_for_text
from tests.classroom_support import make_class, user_id
from tests.waiting import wait_until

pytestmark = pytest.mark.timeout(600)
VERDICT = dict(status="passed", passed=True, raw_score=1.0, score=1.0, checks=[], mistake_ids=[], report={},
               sandbox="process", grader_version="test", run_s=0.0)
POLLS = 10  # the page's polls the CPU cost is measured over
# Counts the page's polls: each is a BackMsg rerun_script (field 11, length-delimited: first byte 11 << 3 | 2).
COUNT_POLLS_JS = """
window.polls = 0;
const send = WebSocket.prototype.send;
WebSocket.prototype.send = function (data) {
  const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : data;
  if (bytes && bytes[0] === 0x5a) window.polls += 1;
  return send.call(this, data);
};
"""


@pytest.mark.slow
@pytest.mark.timing
def test_a_followed_page_shows_each_change_within_a_second_and_polls_cheaply(browsers, tmp_path):
    from selenium.webdriver.common.by import By

    url = f"sqlite:///{tmp_path / 'class.db'}"
    store = make_class(url, tmp_path)
    env = dict(os.environ, ATTENTION_LAB_HOME=str(tmp_path / "home"), ATTENTION_LAB_CLASS_DB=url)
    driver = browsers("en")
    driver.delete_all_cookies()
    with running_app(env) as server:
        link, _ = create_sign_in_link(store, "ann@class.test", f"{server}/practice")
        driver.get(link)
        wait_for_text(driver, t("classroom.practice_title", "en"))
        ahead = submit(store, user_id(store, "bob@class.test"), "ex00", "x = 1\n", "ex00_paths.py")
        driver.find_element(By.CSS_SELECTOR, '[data-testid="stBaseButton-primary"]').click()
        wait_for_text(driver, t("classroom.state_queued", "en", position=2))
        driver.execute_script(COUNT_POLLS_JS)
        start_cpu = server_cpu_s(server)
        polls = wait_until(lambda: (n := driver.execute_script("return window.polls")) >= POLLS and n,
                           120, f"{POLLS} polls of the page")  # measuring: the page polls, nothing changes
        per_poll = (server_cpu_s(server) - start_cpu) / polls
        texts = [t("classroom.state_queued", "en", position=1), t("classroom.state_running", "en"), "graded by the test"]
        driver.execute_script(SHOWN_AT_JS, texts)
        shown = []
        first = queue.claim(store, "test")
        assert first.submission_id == ahead
        shown.append(shown_after(driver, texts[0], time.time()))
        mine = queue.claim(store, "test")
        shown.append(shown_after(driver, texts[1], time.time()))
        queue.finish(store, mine, dict(VERDICT, summary=texts[2]))
        shown.append(shown_after(driver, texts[2], time.time()))
    store.close()
    print(f"change -> shown {shown}; {1000 * per_poll:.1f} CPU ms per poll over {polls} polls (load {os.getloadavg()})")
    assert max(shown) < 1.0, shown
    assert per_poll < 0.05, f"{1000 * per_poll:.0f} ms of the server's CPU per poll of one page"
