"""Every click of Submit is answered in headless Chromium: the page acknowledges the submission with its id, or says
it was not taken and why; never nothing. Clicked under load while a worker grades (each verdict reruns the page,
the live fragment polls twice a second), and from two browsers at once; and a file the uploader refused sends
nothing. Counts what the database holds against what the pages said."""

import os
import random
import re
import subprocess
import sys
import time

import pytest
from sqlalchemy import func, select

from classroom.data.sessions import create_sign_in_link
from classroom.data.models import Submission
from course.common.i18n import t
from tests.browser_support import ROOT, main_text, require_browser, running_app, wait_for, wait_until_rendered
from tests.classroom_support import make_class, user_id

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

CLICKS = int(os.environ.get("LAB_SUBMIT_CLICKS", "20"))  # per browser
ANSWER_S = 15  # a click unanswered this long is lost
SPINNERS = 3  # busy processes that load the machine while the clicks land


def _hosted(url, folder):
    """The class app on a class database at `url` -> (context manager of its URL, store, url)."""
    store = make_class(url, folder)
    env = dict(os.environ, ATTENTION_LAB_HOME=str(folder / "home"), ATTENTION_LAB_CLASS_DB=url)
    return running_app(env), store, url


# Every acknowledgement the page ever drew, however briefly (a click's answer must stay to be read; these tell a
# flash from nothing in the report).
RECORDER = """window.__labSaid = new Set();
new MutationObserver(() => document.querySelectorAll('[data-testid="stAlertContentSuccess"]').forEach(
    e => window.__labSaid.add(e.textContent.trim()))).observe(document, {subtree: true, childList: true,
    characterData: true});"""


def _sign_in(driver, store, email, server):
    link, _ = create_sign_in_link(store, email, f"{server}/practice")
    driver.delete_all_cookies()
    driver.get(link)
    wait_until_rendered(driver)
    driver.execute_script(RECORDER)


def _flashed(driver):
    """How many acknowledgements the page drew at some moment (RECORDER)."""
    return driver.execute_script("return window.__labSaid.size;")


def _alerts(driver, kind):
    from selenium.webdriver.common.by import By

    return [e.text for e in driver.find_elements(By.CSS_SELECTOR, f'[data-testid="stAlertContent{kind}"]')]


def _click_submit(driver):
    """Click the page's Submit button (found again: a rerun may have replaced it) -> when, monotonic seconds."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By

    for _ in range(20):
        try:
            driver.find_element(By.CSS_SELECTOR, '[data-testid="stBaseButton-primary"]').click()
            return time.monotonic()
        except StaleElementReferenceException:
            time.sleep(0.05)
    pytest.fail("the Submit button was replaced under every click")


def _answer(driver, lang, seen):
    """What the page said after a click: ('received', id) for an acknowledgement not seen before, ('refused', text)
    for a 'Not submitted' message, or ('lost', None) when neither shows within ANSWER_S."""
    received = re.compile(re.escape(t("classroom.submitted", lang, id="{id}")).replace(re.escape("{id}"), r"(\d+)"))
    refused = t("classroom.refused", lang, reason="")

    def said(d):
        for text in _alerts(d, "Success"):
            found = received.search(text)
            if found and int(found.group(1)) not in seen:
                return "received", int(found.group(1))
        for text in _alerts(d, "Error"):
            if refused.strip() in text or t("classroom.db_unavailable", lang)[:20] in text:
                return "refused", text
        return None

    from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        return WebDriverWait(driver, ANSWER_S, poll_frequency=0.05,
                             ignored_exceptions=(StaleElementReferenceException,)).until(said)
    except TimeoutException:
        return "lost", None


def _load():
    """SPINNERS busy processes -> their Popen objects (stopped by _unload)."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(SPINNERS)]


def _unload(children):
    for child in children:
        child.kill()
        child.wait()


def _worker(url):
    """A grading worker on the class database, running until killed."""
    return subprocess.Popen([sys.executable, "-m", "classroom", "worker", "--db", url, "--sandbox", "process"],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _count(store, email):
    with store.session() as session:
        return session.scalar(select(func.count(Submission.id)).where(Submission.user_id == user_id(store, email)))


def _report(what, answers, stored, flashed):
    lost = sum(kind == "lost" for kind, _ in answers)
    received = sum(kind == "received" for kind, _ in answers)
    print(f"{what}: {len(answers)} clicks, {received} received, {len(answers) - received - lost} refused, "
          f"{lost} lost; {stored} stored; {flashed} acknowledgements drawn at some moment "
          f"(load {os.getloadavg()[0]:.1f})")
    return lost, received


def test_every_click_under_load_while_a_worker_grades_is_answered(browsers, tmp_path):
    require_browser()
    served, store, url = _hosted(f"sqlite:///{tmp_path / 'class.db'}", tmp_path)
    with served as server:
        driver = browsers("en")
        _sign_in(driver, store, "ann@class.test", server)
        worker, spinners, answers, rng = _worker(url), _load(), [], random.Random(7)
        try:
            for _ in range(CLICKS):
                _click_submit(driver)
                answers.append(_answer(driver, "en", {n for kind, n in answers if kind == "received"}))
                time.sleep(rng.uniform(0, 1.2))  # the next click lands anywhere in the page's poll and reruns
        finally:
            _unload(spinners)
            worker.kill()
            worker.wait()
        stored, flashed = _count(store, "ann@class.test"), _flashed(driver)
    lost, received = _report("one browser under load", answers, stored, flashed)
    assert lost == 0, answers
    assert stored == received  # each acknowledged once, none stored unsaid


def test_two_browsers_clicking_at_once_on_postgres_are_both_answered(browsers, pg_url, tmp_path):
    require_browser()
    served, store, url = _hosted(pg_url, tmp_path)
    with served as server:
        pages = {"ann@class.test": ("en", browsers("en")), "bob@class.test": ("zh", browsers("zh"))}
        for email, (_, driver) in pages.items():
            _sign_in(driver, store, email, server)
        worker, answers = _worker(url), {email: [] for email in pages}
        try:
            for _ in range(CLICKS):
                for email, (_, driver) in pages.items():
                    _click_submit(driver)
                    time.sleep(0.3)
                for email, (lang, driver) in pages.items():
                    seen = {n for kind, n in answers[email] if kind == "received"}
                    answers[email].append(_answer(driver, lang, seen))
        finally:
            worker.kill()
            worker.wait()
        stored = {email: _count(store, email) for email in pages}
        flashed = {email: _flashed(driver) for email, (_, driver) in pages.items()}
    for email, said in answers.items():
        lost, received = _report(f"two browsers 0.3 s apart on Postgres, {email}", said, stored[email],
                                 flashed[email])
        assert lost == 0, said
        assert stored[email] == received


def test_a_file_too_big_to_submit_sends_nothing_and_the_page_says_why(browsers, tmp_path):
    from selenium.webdriver.common.by import By

    require_browser()
    served, store, _ = _hosted(f"sqlite:///{tmp_path / 'class.db'}", tmp_path)
    big = tmp_path / "ex00_big.py"
    big.write_bytes(b"# padding\n" * 5_000_000)  # 50 MB: over the 1 MB a submission may be
    too_big = t("classroom.upload_too_big", "en", mb="50.0", limit=1)
    with served as server:
        driver = browsers("en")
        _sign_in(driver, store, "cy@class.test", server)
        uploader = '.st-key-practice_class_upload_ex00 [data-testid="stFileUploaderDropzoneInput"]'
        wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, uploader), "no uploader of ex00", 60)
        driver.find_element(By.CSS_SELECTOR, uploader).send_keys(str(big))
        wait_for(driver, lambda d: too_big in main_text(d), lambda: f"no word of the file's size:\n{main_text(driver)}",
                 120)
        _click_submit(driver)
        wait_for(driver, lambda d: sum(t("classroom.refused", "en", reason=too_big) in text
                                       for text in _alerts(d, "Error")) == 2,  # under the uploader, and the click's
                 lambda: f"the click was not refused:\n{main_text(driver)}", ANSWER_S)
        wait_until_rendered(driver)
        stored_after_click = _count(store, "cy@class.test")
        forget = t("classroom.upload_forget", "en")
        button = [b for b in driver.find_elements(By.CSS_SELECTOR, "button") if b.text == forget]
        button[0].click()  # the learner forgets the file: Submit sends the code box again
        wait_for(driver, lambda d: forget not in [b.text for b in d.find_elements(By.CSS_SELECTOR, "button")],
                 "the file was not forgotten", 60)  # (the click's answer stays shown: it was refused)
        wait_until_rendered(driver)
        _click_submit(driver)  # the refusal shown stays until this click's answer replaces it
        said = wait_for(driver, lambda d: _alerts(d, "Success"), lambda: f"not received:\n{main_text(driver)}",
                        ANSWER_S)
        stored = _count(store, "cy@class.test")
    print(f"a 50 MB upload, then Submit: {stored_after_click} stored; forgotten, then Submit: {said}, {stored} stored")
    assert stored_after_click == 0
    assert stored == 1 and said == [t("classroom.submitted", "en", id=1)]
