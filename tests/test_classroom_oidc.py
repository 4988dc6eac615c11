"""Sign-in with an OpenID Connect provider (st.login) end to end in Chromium.

A local provider (oidc-provider-mock) issues identities; the roster decides
the role; an email not on the roster gets the polite refusal. Skipped without
Chromium, except in CI (see tests/test_browser.py).
"""

import os
import subprocess
import sys

import pytest

from course.common.i18n import t
from tests.browser_support import free_port, require_browser, wait_for_health, wait_until_rendered
from tests.classroom_support import INSTRUCTOR, ROOT, make_class

pytestmark = pytest.mark.timeout(600)


HOSTILE_EMAIL = "**bold**[x](https://evil.test)@evil.test"


@pytest.fixture(scope="module")
def oidc_class(tmp_path_factory):
    """(folder, database URL) of the class behind the OIDC app."""
    folder = tmp_path_factory.mktemp("oidc")
    url = f"sqlite:///{folder / 'class.db'}"
    make_class(url, folder).close()
    return folder, url


@pytest.fixture(scope="module")
def oidc_app(oidc_class):
    """(app URL) of a class app whose [auth] points at a local OpenID provider."""
    require_browser()
    from oidc_provider_mock import User, run_server_in_thread

    folder, url = oidc_class
    users = [User(sub="ann", claims={"email": "ann@class.test", "email_verified": True, "name": "Ann"}),
             User(sub="stranger", claims={"email": "stranger@else.where", "email_verified": True, "name": "S"}),
             User(sub="mallory", claims={"email": HOSTILE_EMAIL, "email_verified": True, "name": "M"}),
             User(sub="unverified", claims={"email": INSTRUCTOR, "email_verified": False, "name": "Not Prof"})]
    with run_server_in_thread(user_claims=users) as provider:
        port = free_port()
        secrets = folder / "secrets.toml"
        secrets.write_text(f'''[class]
db = "{url}"

[auth]
redirect_uri = "http://127.0.0.1:{port}/oauth2callback"
cookie_secret = "test-cookie-secret-0123456789"
client_id = "attention-lab"
client_secret = "not-a-secret"
server_metadata_url = "http://localhost:{provider.server_port}/.well-known/openid-configuration"
''')
        env = dict(os.environ, ATTENTION_LAB_HOME=str(folder / "home"))
        env.pop("ATTENTION_LAB_CLASS_DB", None)
        child = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                                  "--server.port", str(port), "--server.address", "127.0.0.1",
                                  "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
                                  "--secrets.files", str(secrets)],
                                 cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        server = f"http://127.0.0.1:{port}"
        try:
            wait_for_health(server, child)
            yield server
        finally:
            child.terminate()
            child.wait(timeout=20)


def _sign_in_as(driver, server, sub):
    from selenium.webdriver.common.by import By

    driver.delete_all_cookies()
    driver.get(f"{server}/practice")
    wait_until_rendered(driver)
    assert driver.find_elements(By.CSS_SELECTOR, "h1")[0].text == t("classroom.signin_title", "en")
    driver.find_element(By.XPATH, f'//button[normalize-space()="{t("classroom.signin_with_provider", "en")}"]').click()
    from selenium.webdriver.support.ui import WebDriverWait

    pick = f'button[name="sub"][value="{sub}"]'  # the provider's page: its one-click users
    try:
        WebDriverWait(driver, 60).until(lambda d: d.find_elements(By.CSS_SELECTOR, pick))
    except Exception:
        body = driver.find_element(By.TAG_NAME, "body").text[:1500]
        pytest.fail(f"no provider page at {driver.current_url}:\n{body}")
    driver.find_element(By.CSS_SELECTOR, pick).click()
    wait_until_rendered(driver)  # Streamlit brings the browser back to the app's first page
    driver.get(f"{server}/practice")
    wait_until_rendered(driver)


@pytest.mark.slow
def test_a_rostered_learner_signs_in_with_the_provider(oidc_app, browsers):
    from selenium.webdriver.common.by import By

    driver = browsers("en")
    _sign_in_as(driver, oidc_app, "ann")
    assert driver.find_elements(By.CSS_SELECTOR, "h1")[0].text == t("classroom.practice_title", "en")
    sidebar = driver.find_element(By.CSS_SELECTOR, '[data-testid="stSidebar"]').text
    assert "Ann" in sidebar and t("classroom.role_learner", "en") in sidebar


@pytest.mark.slow
def test_an_email_off_the_roster_is_told_so(oidc_app, browsers):
    from selenium.webdriver.common.by import By

    driver = browsers("en")
    _sign_in_as(driver, oidc_app, "stranger")
    main = driver.find_element(By.CSS_SELECTOR, '[data-testid="stMain"]').text
    assert "stranger@else.where" in main and "not on this class's roster" in main
    assert not driver.find_elements(By.CSS_SELECTOR, "textarea")


@pytest.mark.slow
def test_an_unverified_email_signs_nobody_in(oidc_app, browsers):
    from selenium.webdriver.common.by import By

    driver = browsers("en")
    _sign_in_as(driver, oidc_app, "unverified")  # the instructor's address, unverified by the provider
    assert driver.find_elements(By.CSS_SELECTOR, "h1")[0].text == t("classroom.signin_title", "en")
    main = driver.find_element(By.CSS_SELECTOR, '[data-testid="stMain"]').text
    assert t("classroom.email_unverified", "en") in main
    assert not driver.find_elements(By.CSS_SELECTOR, "textarea")


def _main(driver):
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, '[data-testid="stMain"]')


@pytest.mark.slow
def test_an_email_off_the_roster_is_shown_as_plain_text(oidc_app, browsers):
    from selenium.webdriver.common.by import By

    driver = browsers("en")
    _sign_in_as(driver, oidc_app, "mallory")
    main = _main(driver)
    assert HOSTILE_EMAIL in main.text and "not on this class's roster" in main.text
    assert not main.find_elements(By.CSS_SELECTOR, 'a[href*="evil.test"], strong, b')


def _provider_cookies(driver):
    return [c for c in driver.get_cookies() if c["name"].startswith("_streamlit_user")]


def _replay(driver, server, cookies):
    """A fresh start of the browser with Streamlit's saved identity cookie put back."""
    driver.delete_all_cookies()
    driver.get(f"{server}/_stcore/health")
    for cookie in cookies:
        driver.add_cookie({k: cookie[k] for k in ("name", "value", "path") if k in cookie})
    driver.get(f"{server}/practice")
    wait_until_rendered(driver)


@pytest.mark.slow
def test_a_cookie_kept_after_sign_out_signs_nobody_in(oidc_app, browsers):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver = browsers("en")
    _sign_in_as(driver, oidc_app, "ann")
    assert driver.find_elements(By.CSS_SELECTOR, "h1")[0].text == t("classroom.practice_title", "en")
    kept = _provider_cookies(driver)
    assert kept
    driver.find_element(By.XPATH, f'//button[normalize-space()="{t("classroom.sign_out", "en")}"]').click()
    WebDriverWait(driver, 60).until(lambda d: not _provider_cookies(d))  # Streamlit dropped its cookie
    _replay(driver, oidc_app, kept)
    assert driver.find_elements(By.CSS_SELECTOR, "h1")[0].text == t("classroom.signin_title", "en")
    assert t("classroom.session_ended_provider", "en") in _main(driver).text
    assert "Ann" not in driver.find_element(By.CSS_SELECTOR, '[data-testid="stSidebar"]').text


@pytest.mark.slow
def test_the_session_lifetime_holds_under_the_provider_too(oidc_app, oidc_class, browsers):
    from selenium.webdriver.common.by import By
    from sqlalchemy import update

    from classroom.data.db import Store
    from classroom.data.models import LoginSession, utcnow

    driver = browsers("en")
    _sign_in_as(driver, oidc_app, "ann")
    assert driver.find_elements(By.CSS_SELECTOR, "h1")[0].text == t("classroom.practice_title", "en")
    kept = _provider_cookies(driver)
    store = Store(oidc_class[1])
    with store.session() as session:  # the class's lifetime has run out for every session
        session.execute(update(LoginSession).values(expires_at=utcnow()))
    store.close()
    _replay(driver, oidc_app, kept)  # Streamlit's cookie is still good for 30 days
    assert driver.find_elements(By.CSS_SELECTOR, "h1")[0].text == t("classroom.signin_title", "en")
    assert t("classroom.session_ended_provider", "en") in _main(driver).text
