"""Class mode in headless Chromium: a learner signs in by link and submits; an instructor's pages.

Starts `streamlit run app.py` with a class database (SQLite), signs in with
one-time links, and runs a grading worker between steps. Skipped without
Chromium, except in CI (see tests/test_browser.py).
"""

import os
import subprocess
import sys

import pytest

from classroom.line import queue
from classroom.data.sessions import create_sign_in_link, user_for_session
from course.common.i18n import t
from tests.browser_support import ERROR_SELECTOR, ROOT, SHOTS, full_page_screenshot, main_text, require_browser, \
    running_app, wait_for, wait_for_text, wait_until_rendered
from tests.class_browser_support import session_cookie, sign_in
from tests.classroom_support import INSTRUCTOR, add_graded, make_class, stub, user_id

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
    with running_app(env, script="class_app.py") as server:  # as deployed: the HttpOnly cookie's route
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


NAV_RECORDER = """window.navSeen = new Set();
new MutationObserver(() => document.querySelectorAll('[data-testid="stSidebarNav"] *').forEach(
    e => window.navSeen.add(e.textContent.trim()))).observe(document, {subtree: true, childList: true,
    characterData: true});"""  # every text the sidebar's page menu ever showed, from the first paint


@pytest.mark.slow
def test_the_first_visitor_of_a_new_server_never_sees_class_pages_in_the_menu(hosted, browsers):
    """Kept first in this file: the module's server is new, and this is its first visitor."""
    server, _, _ = hosted
    driver = browsers("en")
    script = driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": NAV_RECORDER})
    try:
        driver.get(f"{server}/")
        wait_until_rendered(driver)
        seen = driver.execute_script("return Array.from(window.navSeen)")
    finally:
        driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": script["identifier"]})
    assert t("nav.ch01", "en") in seen  # the real menu was recorded
    assert not [text for text in seen if "gradebook" in text.lower() or "analytics" in text.lower()]


def _title(driver):
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, "h1")[0].text


@pytest.mark.slow
def test_a_copied_address_signs_nobody_in_but_a_reload_stays_signed_in(hosted, browsers):
    server, store, _ = hosted
    driver, stranger = browsers("en"), browsers("zh")  # two browser profiles
    driver.delete_all_cookies()
    sign_in(driver, store, "cy@class.test", server, "seq2seq")  # a chapter page, as links may point
    cookie = session_cookie(driver)
    assert "token=" not in driver.current_url and "session=" not in driver.current_url
    assert cookie["sameSite"] == "Strict"
    assert cookie["httpOnly"] is True  # set by the server's route: no script on the page reads it
    assert "attention_lab_session" not in driver.execute_script("return document.cookie")
    driver.get(f"{server}/practice")  # a reload or a new tab of this browser: still signed in
    wait_until_rendered(driver)
    assert _title(driver) == t("classroom.practice_title", "en")
    for address in (driver.current_url, f"{server}/practice?session={cookie['value']}"):
        stranger.get(address)  # the address (even with the session token in it) in another browser
        wait_until_rendered(stranger)
        assert _title(stranger) == t("classroom.signin_title", "zh")
    from selenium.webdriver.common.by import By

    driver.find_element(By.XPATH, f'//button[normalize-space()="{t("classroom.sign_out", "en")}"]').click()
    wait_for_text(driver, t("classroom.signin_title", "en"))
    wait_for(driver, lambda d: d.get_cookie("attention_lab_session") is None, "signing out left the cookie")
    stranger.get(server)
    stranger.add_cookie({"name": "attention_lab_session", "value": cookie["value"], "path": "/"})  # replayed
    stranger.get(f"{server}/practice")
    wait_until_rendered(stranger)
    assert _title(stranger) == t("classroom.signin_title", "zh")


@pytest.mark.slow
def test_a_link_to_the_servers_root_as_readme_makes_them_signs_in_for_reloads_too(hosted, browsers):
    server, store, _ = hosted
    driver = browsers("en")
    driver.delete_all_cookies()
    link, _ = create_sign_in_link(store, "cy@class.test", f"{server}/")  # `links --base-url https://host/`
    driver.get(link)  # "/" opens the first chapter by switching pages
    session_cookie(driver)
    driver.get(f"{server}/practice")  # a reload or a new tab
    wait_until_rendered(driver)
    assert _title(driver) == t("classroom.practice_title", "en")


@pytest.mark.slow
def test_another_learners_link_asks_first_and_switches_only_when_confirmed(hosted, browsers):
    """Login CSRF: a link someone sent, opened in a new tab of a signed-in browser, signs nobody in by itself."""
    from selenium.webdriver.common.by import By

    server, store, _ = hosted
    driver = browsers("en")
    driver.delete_all_cookies()
    sign_in(driver, store, "ann@class.test", server, "practice")
    anns = session_cookie(driver)["value"]
    first_tab = driver.current_window_handle

    def sidebar():
        return driver.find_element(By.CSS_SELECTOR, '[data-testid="stSidebar"]').text

    def press(label):
        driver.find_element(By.XPATH, f'//button[normalize-space()="{label}"]').click()

    try:
        for choice in ("switch_stay", "switch_go"):
            link, _ = create_sign_in_link(store, "cy@class.test", f"{server}/practice")
            driver.switch_to.new_window("tab")  # the link opened from a chat or a mail: a new tab
            driver.get(link)
            wait_for_text(driver, t("classroom.switch_title", "en"))
            assert "Ann <ann@class.test>" in main_text(driver) and "Cy <cy@class.test>" in main_text(driver)
            assert "token=" not in driver.current_url
            assert driver.get_cookie("attention_lab_session")["value"] == anns  # nothing replaced yet
            press(t(f"classroom.{choice}", "en"))
            wait_for_text(driver, t("classroom.practice_title", "en"))
            wait_until_rendered(driver)
            if choice == "switch_stay":
                assert "Ann" in sidebar() and "Cy" not in sidebar()
                assert driver.get_cookie("attention_lab_session")["value"] == anns
                driver.close()
                driver.switch_to.window(first_tab)
        assert "Cy" in sidebar()
        wait_for(driver, lambda d: d.get_cookie("attention_lab_session")["value"] != anns,
                 "the confirmed link's session was not written into the cookie")
        assert user_for_session(store, anns) is None  # ann's session in this browser ended
    finally:
        for handle in driver.window_handles[1:]:
            driver.switch_to.window(handle)
            driver.close()
        driver.switch_to.window(driver.window_handles[0])


@pytest.mark.slow
def test_a_learner_submits_and_reads_the_feedback(hosted, browsers):
    from selenium.webdriver.common.by import By

    server, store, url = hosted
    driver = browsers("en")
    driver.delete_all_cookies()
    sign_in(driver, store, "ann@class.test", server, "practice")
    assert driver.find_elements(By.CSS_SELECTOR, "h1")[0].text == t("classroom.practice_title", "en")
    assert "token=" not in driver.current_url  # a used link leaves the address bar
    font = wait_for(driver, lambda d: d.execute_script(
        "const box = document.querySelector('textarea'); return box && getComputedStyle(box).fontFamily"),
        "the code box was not drawn")
    assert "monospace" in font  # the code box reads as code
    driver.find_element(By.CSS_SELECTOR, '[data-testid="stBaseButton-primary"]').click()  # the ex00 stub
    wait_for_text(driver, t("classroom.state_queued", "en", position=1))
    # its first run passes the exercise's set-aside time (a worker that stops it there): queued again, and the page
    # says why (classroom/line/queue.py set_aside)
    assert queue.set_aside(store, queue.claim(store, "stops-it"))
    wait_for_text(driver, t("classroom.state_set_aside", "en"))
    assert t("classroom.state_queued", "en", position=1) in main_text(driver)
    worker = subprocess.run([sys.executable, "-m", "classroom", "worker", "--db", url, "--once",
                             "--sandbox", "process"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert worker.returncode == 0, worker.stderr
    wait_for_text(driver, "not started: write receptive_field")  # the grader's words, pushed to the page
    wait_until_rendered(driver)
    assert _errors(driver) == []
    with store.session() as session:
        from classroom.data.models import Submission

        mine = session.query(Submission.id).filter(Submission.user_id == user_id(store, "ann@class.test")).scalar()
    shown = main_text(driver)  # the verdict once: it was drawn under the submit button and again in the history
    assert shown.count(t("classroom.feedback_title", "en", id=mine)) == 1, shown
    assert shown.count("not started: write receptive_field") == 1, shown
    full_page_screenshot(driver, SHOTS / "en_class_practice.png")
    assert "bob@class.test" not in main_text(driver)
    driver.get(f"{server}/gradebook")  # not this learner's page, even by its address
    wait_until_rendered(driver)
    assert t("classroom.gradebook_title", "en") not in main_text(driver) and "bob@class.test" not in main_text(driver)
    driver.get(f"{server}/analytics")  # nor the similarity flags on the analytics page
    wait_until_rendered(driver)
    assert t("classroom.similarity_title", "en") not in main_text(driver)


@pytest.mark.slow
def test_an_instructor_filters_the_gradebook_and_opens_analytics(hosted, browsers):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    server, store, _ = hosted
    driver = browsers("zh")
    driver.delete_all_cookies()
    sign_in(driver, store, INSTRUCTOR, server, "gradebook")
    assert driver.find_elements(By.CSS_SELECTOR, "h1")[0].text == t("classroom.gradebook_title", "zh")
    assert _errors(driver) == []
    wait_for(driver, lambda d: _picked_learner(d) == "ann@class.test",  # the picker starts with the first learner
             lambda: f"the picker shows {_picked_learner(driver)!r}", 60)
    def filter_box(d):  # the filter is drawn after the picker: wait for it too
        shown = [b for b in d.find_elements(By.CSS_SELECTOR, '[data-testid="stTextInput"] input') if b.is_displayed()]
        return shown[0] if shown else None

    wait_for(driver, filter_box, lambda: "no filter box on the gradebook", 60)
    box = filter_box(driver)
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", box)
    box.click()
    box.send_keys("bob" + Keys.ENTER)
    wait_for(driver, lambda d: _picked_learner(d) == "bob@class.test",  # the only learner left after filtering
             lambda: f"the picker shows {_picked_learner(driver)!r}", 60)
    wait_until_rendered(driver)
    full_page_screenshot(driver, SHOTS / "zh_class_gradebook.png")
    session_cookie(driver)
    driver.get(f"{server}/analytics")  # a reload or a new tab of this browser stays signed in
    wait_until_rendered(driver)
    wait_for_text(driver, t("classroom.analytics_title", "zh"))
    wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="stVegaLiteChart"]'), "no chart")
    assert "100%" in main_text(driver) and _errors(driver) == []
    wait_for_text(driver, t("classroom.similarity_title", "zh"))  # the copy-detection section, for staff only
    switch = wait_for(driver, lambda d: [e for e in d.find_elements(By.CSS_SELECTOR, '[data-testid="stCheckbox"]')
                                         if t("classroom.similarity_run", "zh") in e.text], "no comparison switch", 60)[0]
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", switch)
    switch.find_element(By.CSS_SELECTOR, "label").click()  # a real click, as the instructor's
    wait_for_text(driver, t("classroom.similarity_none", "zh"))  # no pair here above its exercise's threshold
    full_page_screenshot(driver, SHOTS / "zh_class_analytics.png")


def _choose_exercise(driver, lang, ex_id):
    """Pick an exercise in the class Practice page's exercise box (typed, then Enter)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    label = t("classroom.choose", lang)
    boxes = lambda d: d.find_elements(By.CSS_SELECTOR, f'[data-testid="stSelectbox"] input[aria-label="{label}"]')  # noqa: E731
    box = wait_for(driver, boxes, f"no {label!r} box", 60)[0]
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", box)
    box.click()
    box.send_keys(ex_id, Keys.ENTER)
    wait_for(driver, lambda d: t("classroom.submit", lang, ex_id=ex_id) in main_text(d), f"{ex_id} was not chosen", 60)
    wait_until_rendered(driver)


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_uploaded_file_is_said_to_win_over_the_code_box_and_is_what_is_sent(hosted, browsers, lang, tmp_path):
    from selenium.webdriver.common.by import By
    from sqlalchemy import select

    from classroom.data.models import Submission

    server, store, _ = hosted
    email = {"en": "cy@class.test", "zh": "bob@class.test"}[lang]
    driver = browsers(lang)
    driver.delete_all_cookies()
    sign_in(driver, store, email, server, "practice")
    _choose_exercise(driver, lang, "ex01")
    upload = tmp_path / f"my_ex01_{lang}.py"
    upload.write_text(f"# uploaded from the browser ({lang})\n" + stub("ex01"), encoding="utf-8")
    uploader = '.st-key-practice_class_upload_ex01 [data-testid="stFileUploaderDropzoneInput"]'  # ex01's own
    wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, uploader), "no uploader of ex01", 60)
    driver.find_element(By.CSS_SELECTOR, uploader).send_keys(str(upload))
    notice = t("classroom.upload_wins", lang, ex_id="ex01")
    wait_for_text(driver, notice)
    assert upload.name in main_text(driver)
    full_page_screenshot(driver, SHOTS / f"{lang}_class_upload_wins.png")
    driver.find_element(By.CSS_SELECTOR, '[data-testid="stBaseButton-primary"]').click()
    wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="stAlertContentSuccess"]'),
             "the submit was not acknowledged", 60)
    with store.session() as session:
        sent = session.execute(select(Submission.exercise_id, Submission.filename, Submission.source)
                               .where(Submission.user_id == user_id(store, email))
                               .order_by(Submission.id.desc())).first()
    assert sent.exercise_id == "ex01" and sent.filename == upload.name
    assert sent.source.startswith(f"# uploaded from the browser ({lang})")  # the file, not the code box
    _choose_exercise(driver, lang, "ex02")  # another exercise: the file does not follow
    shown = main_text(driver)
    assert t("classroom.upload_wins", lang, ex_id="ex02") not in shown and upload.name not in shown


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_extension_and_an_override_show_on_the_gradebook_and_the_learners_practice_page(hosted, browsers, lang):
    from datetime import timedelta

    from classroom.data import adjustments
    from classroom.data.models import utcnow
    from classroom.data.settings import set_rule

    server, store, _ = hosted
    deadline = (utcnow() - timedelta(hours=1)).replace(second=0, microsecond=0)
    until = (utcnow() + timedelta(days=2)).replace(second=0, microsecond=0)
    set_rule(store, "ex09", deadline, "accept", 48, 0.5)  # an exercise no other test of this module uses
    adjustments.grant_extension(store, "ann@class.test", "ex09", until, "hospital stay", INSTRUCTOR)
    adjustments.set_override(store, "cy@class.test", "ex09", 0.85, "oral re-examination", INSTRUCTOR)
    driver = browsers(lang)
    driver.delete_all_cookies()
    sign_in(driver, store, INSTRUCTOR, server, "gradebook")
    wait_for_text(driver, t("classroom.gradebook_marks", lang))  # the caption that explains the cells' marks
    wait_for_text(driver, t("classroom.adjustments_title", lang))  # and the table of reasons below it
    assert _errors(driver) == []
    full_page_screenshot(driver, SHOTS / f"{lang}_class_gradebook_adjusted.png")
    driver.delete_all_cookies()
    sign_in(driver, store, "ann@class.test", server, "practice")
    _choose_exercise(driver, lang, "ex09")
    wait_for_text(driver, t("classroom.own_deadline_extended", lang, ex_id="ex09", when=f"{until:%Y-%m-%d %H:%M}",
                            class_when=f"{deadline:%Y-%m-%d %H:%M}"))
    assert "hospital" not in main_text(driver)  # the reason is staff's
    assert _errors(driver) == []
    full_page_screenshot(driver, SHOTS / f"{lang}_class_practice_extended.png")
