"""The app in a real browser: every page opens in headless Chromium without an error.

Starts `streamlit run app.py` on a free local port, opens each registered page
in Chinese, and the shell's own pages in English too (the language comes from
the browser's locale), checks
that no exception or error box is shown, and saves a screenshot of each page
under artifacts/screenshots/. Needs Debian's `chromium` and `chromium-driver`
(see .ci/install-browser) and selenium; skipped without them, except in CI
(CI=true), where a missing browser is a failure.
"""

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from course.app import pages_index
from course.common.i18n import t

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "artifacts" / "screenshots"
LOCALES = {"en": "en-US", "zh": "zh-CN"}
CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--window-size=1400,1000",
)
# Streamlit exceptions, st.error boxes, and formulas KaTeX could not parse (shown in red).
ERROR_SELECTOR = '[data-testid="stException"], [data-testid="stAlertContentError"], .katex-error'
MY_TITLES = {"ch01": "ch01.title", "practice": "practice.title", "notes": "notes.title"}
pytestmark = pytest.mark.timeout(600)


def find_browser():
    """(chromium, chromedriver) paths, or a reason why the browser test cannot run."""
    chromium = next((shutil.which(n) for n in ("chromium", "chromium-browser") if shutil.which(n)), None)
    driver = shutil.which("chromedriver")
    try:
        import selenium  # noqa: F401
    except ImportError:
        return None, None, "selenium is not installed (pip install -r requirements.txt)"
    if not chromium or not driver:
        return None, None, "Chromium or chromedriver not found (run .ci/install-browser)"
    return chromium, driver, None


def require_browser():
    """The browser paths; skip without them, but fail in CI, which must run this test."""
    chromium, driver, problem = find_browser()
    if problem:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the browser test: {problem}")
        pytest.skip(problem)
    return chromium, driver


def free_port():
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_health(url, child, timeout=90):
    """Poll /_stcore/health until the server answers; fail with its log if it dies."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if child.poll() is not None:
            pytest.fail(f"streamlit exited with {child.returncode}:\n{child.stdout.read()}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    pytest.fail(f"streamlit did not answer within {timeout} s")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A running `streamlit run app.py` with a fresh data folder; yields its URL."""
    require_browser()
    port = free_port()
    env = dict(os.environ, ATTENTION_LAB_HOME=str(tmp_path_factory.mktemp("lab_home")))
    command = [
        sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
        "--server.port", str(port), "--server.address", "127.0.0.1",
        "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
    ]
    child = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(url, child)
        yield url
    finally:
        child.terminate()
        try:
            child.wait(timeout=20)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


@pytest.fixture(scope="module")
def browsers():
    """One headless Chromium per language (by locale), created on first use."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, driver_path = require_browser()
    made, profiles = {}, []

    def get(lang):
        if lang not in made:
            options = webdriver.ChromeOptions()
            options.binary_location = chromium
            for flag in CHROMIUM_FLAGS:
                options.add_argument(flag)
            profile = tempfile.mkdtemp(prefix="chromium-profile-")
            profiles.append(profile)
            options.add_argument(f"--user-data-dir={profile}")
            options.add_argument(f"--lang={LOCALES[lang]}")
            options.add_experimental_option("prefs", {"intl.accept_languages": LOCALES[lang]})
            driver = webdriver.Chrome(service=Service(driver_path), options=options)
            driver.execute_cdp_cmd("Emulation.setLocaleOverride", {"locale": LOCALES[lang]})
            made[lang] = driver
        return made[lang]

    yield get
    for driver in made.values():
        driver.quit()
    for profile in profiles:
        shutil.rmtree(profile, ignore_errors=True)


def wait_until_rendered(driver, timeout=90):
    """Wait until the page has a title and Streamlit stays idle for a moment."""
    from selenium.webdriver.common.by import By

    deadline, calm_since = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        running = driver.find_elements(By.CSS_SELECTOR, '[data-testid="stStatusWidget"]')
        ready = driver.find_elements(By.CSS_SELECTOR, "h1") and not running
        if ready:
            calm_since = calm_since or time.monotonic()
            if time.monotonic() - calm_since > 1.0:
                return
        else:
            calm_since = None
        time.sleep(0.25)
    pytest.fail(f"{driver.current_url} did not finish rendering within {timeout} s")


def full_page_screenshot(driver, path):
    """Resize the window to the page's height, then save a PNG."""
    height = driver.execute_script(
        "const m = document.querySelector('[data-testid=\"stMain\"]');"
        "return Math.max(m ? m.scrollHeight : 0, document.body.scrollHeight);"
    )
    driver.set_window_size(1400, min(max(int(height) + 120, 1000), 12000))
    time.sleep(0.6)  # let charts re-layout to the new size
    path.parent.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(path))
    driver.set_window_size(1400, 1000)


def pytest_generate_tests(metafunc):
    """Every page in Chinese (the fonts are the fragile part), the shell's pages in English too."""
    if "page" in metafunc.fixturenames:
        cases = [(page, "zh") for page in pages_index.existing()]
        cases += [(page, "en") for page in pages_index.existing() if page.key in MY_TITLES]
        metafunc.parametrize(("page", "lang"), cases, ids=[f"{p.key}-{lang}" for p, lang in cases])


def test_a_deep_link_on_a_fresh_server_goes_through_the_shell(server, browsers):
    """The first visit of a new server may open a page URL directly (a bookmark):
    the page must still get app.py's menu and language switch (runs first in this file)."""
    from selenium.webdriver.common.by import By

    driver = browsers("zh")
    driver.get(f"{server}/notes")
    wait_until_rendered(driver)
    sidebar = driver.find_element(By.CSS_SELECTOR, '[data-testid="stSidebar"]').text
    assert t("nav.section_course", "zh") in sidebar and t("app.language", "zh") in sidebar, sidebar
    assert driver.find_elements(By.CSS_SELECTOR, "h1")[0].text.startswith(t("notes.title", "zh"))


def test_page_opens_without_errors(server, browsers, page, lang):
    from selenium.webdriver.common.by import By

    driver = browsers(lang)
    default = pages_index.existing()[0]  # st.navigation serves its first page at the root
    driver.get(f"{server}/" if page == default else f"{server}/{page.url_path}")
    wait_until_rendered(driver)
    full_page_screenshot(driver, SHOTS / f"{lang}_{page.key}.png")
    errors = [e.text[:300] for e in driver.find_elements(By.CSS_SELECTOR, ERROR_SELECTOR)]
    errors += [d.text[:300] for d in driver.find_elements(By.CSS_SELECTOR, '[role="dialog"]')]  # "Page not found"
    assert errors == [], f"{page.path} shows errors in {lang}: {errors}"
    heading = driver.find_elements(By.CSS_SELECTOR, "h1")[0].text
    if page.key in MY_TITLES:
        assert heading.startswith(t(MY_TITLES[page.key], lang)), heading
    sidebar = driver.find_element(By.CSS_SELECTOR, '[data-testid="stSidebar"]').text
    assert t("nav.section_course", lang) in sidebar
    if page.key == "ch01":
        charts = driver.find_elements(By.CSS_SELECTOR, '[data-testid="stVegaLiteChart"]')
        assert len(charts) >= 4, "the path, cone and gradient charts should be drawn"
        assert driver.find_elements(By.CSS_SELECTOR, '[data-testid="stGraphVizChart"] svg')
