"""Class mode in the browser tests: a browser signed in by a one-time link, and the session cookie it then holds."""

from classroom.data.sessions import create_sign_in_link
from tests.browser_support import wait_for, wait_until_rendered

SESSION_COOKIE = "attention_lab_session"  # the class session cookie (classroom/web/session_cookie.py COOKIE), spelt out


def sign_in(driver, store, email, server, page):
    """Open a fresh sign-in link of the roster member `email` in this browser, landing on `page` of `server`."""
    link, _ = create_sign_in_link(store, email, f"{server}/{page}")
    driver.get(link)
    wait_until_rendered(driver)


def session_cookie(driver, timeout=60):
    """This browser's class session cookie, once the page has written it."""
    return wait_for(driver, lambda d: (d.get_cookie(SESSION_COOKIE) or {}).get("value") and d.get_cookie(SESSION_COOKIE),
                    "the page wrote no session cookie", timeout)
