"""Class pages in Chromium while the class database cannot be used: the learner's words, no server detail, nothing lost.

Two real faults: a Postgres server stopped while learners have the pages
open, and a SQLite file the server may not read (the server runs without
root's power to ignore file permissions, as an unprivileged app user would).
"""

import os
import stat

import pytest

from classroom.data.sessions import create_sign_in_link
from course.common.i18n import t
from tests.browser_support import SHOTS, full_page_screenshot, main_text, require_browser, running_app, wait_for, \
    wait_for_text, wait_until_rendered
from tests.class_browser_support import session_cookie, sign_in
from tests.classroom_support import INSTRUCTOR, add_graded, make_class

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]  # Chromium
LEAKS = ("OperationalError", "sqlalchemy", "sqlite", "psycopg", "Traceback", "class.db", "/tmp/", "127.0.0.1")
# Root without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH: file permissions apply to it as to any user.
NO_OVERRIDE = ("setpriv", "--bounding-set=-dac_override,-dac_read_search", "--")


def _says_unavailable(driver, lang):
    """Wait for the database message; the page shows no exception and no server detail."""
    from selenium.webdriver.common.by import By

    message = t("classroom.db_unavailable_read", lang)
    wait_for(driver, lambda d: message in main_text(d), lambda: f"no database message; the page shows:\n"
             f"{main_text(driver)[:2000]}", 120)
    wait_until_rendered(driver, timeout=60, titled=False)  # the run is over (the message has no title)
    assert not driver.find_elements(By.CSS_SELECTOR, '[data-testid="stException"]')
    shown = driver.find_element(By.TAG_NAME, "body").text
    assert not [leak for leak in LEAKS if leak.lower() in shown.lower()], shown


def test_a_stopped_postgres_is_said_in_both_languages_and_the_pages_come_back(own_postgres, browsers, tmp_path):
    require_browser()
    url = f"{own_postgres.url}/postgres"
    store = make_class(url, tmp_path)
    add_graded(store, "ann@class.test", "ex03", 0.4, "failed", ["dot_no_scale"])
    visits = {"en": ("ann@class.test", "practice", "classroom.practice_title"),  # a learner's page
              "zh": (INSTRUCTOR, "gradebook", "classroom.gradebook_title")}  # an instructor's page
    env = dict(os.environ, ATTENTION_LAB_HOME=str(tmp_path / "home"), ATTENTION_LAB_CLASS_DB=url)
    with running_app(env) as server:
        for lang, (email, page, title) in visits.items():
            driver = browsers(lang)
            driver.delete_all_cookies()
            sign_in(driver, store, email, server, page)
            wait_for_text(driver, t(title, lang))
            session_cookie(driver)
        store.close()
        own_postgres.stop()
        for lang, (_, page, _) in visits.items():
            browsers(lang).get(f"{server}/{page}")  # a reload while the server is down
            _says_unavailable(browsers(lang), lang)
            full_page_screenshot(browsers(lang), SHOTS / f"{lang}_class_database_down.png")
        own_postgres.start()
        for lang, (_, page, title) in visits.items():
            browsers(lang).get(f"{server}/{page}")  # the same browser: still signed in, its class as it was
            wait_for_text(browsers(lang), t(title, lang))
            wait_for_text(browsers(lang), t("classroom.score", lang, score="40").replace("**", ""))  # ann's graded ex03


def test_an_unreadable_sqlite_file_is_said_and_an_unused_link_still_works_after(browsers, tmp_path):
    require_browser()
    folder = tmp_path / "class"
    folder.mkdir()
    database = folder / "class.db"
    store = make_class(f"sqlite:///{database}", tmp_path)
    add_graded(store, "ann@class.test", "ex03", 0.4, "failed", ["dot_no_scale"])
    env = dict(os.environ, ATTENTION_LAB_HOME=str(tmp_path / "home"), ATTENTION_LAB_CLASS_DB=f"sqlite:///{database}")
    with running_app(env, prefix=NO_OVERRIDE) as server:
        link, _ = create_sign_in_link(store, "ann@class.test", f"{server}/practice")
        store.close()
        mode = database.stat().st_mode
        database.chmod(0)  # unreadable to the server
        driver = browsers("zh")
        driver.delete_all_cookies()
        driver.get(link)
        _says_unavailable(driver, "zh")
        database.chmod(stat.S_IMODE(mode))
        driver.get(link)  # the link was not used up while the database was unreadable
        wait_for_text(driver, t("classroom.practice_title", "zh"))
        wait_for_text(driver, t("classroom.score", "zh", score="40").replace("**", ""))  # her graded ex03
