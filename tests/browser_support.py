"""Shared by the browser tests: find Chromium, start the app, one headless Chromium per language, waits."""

import contextlib
import importlib.util
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
POLL_S = 0.1  # between two checks of a waited-for condition: each wait ends at most this long after it holds


def find_browser():
    """(chromium, chromedriver) paths, or a reason why the browser test cannot run."""
    chromium = next((shutil.which(n) for n in ("chromium", "chromium-browser") if shutil.which(n)), None)
    driver = shutil.which("chromedriver")
    if importlib.util.find_spec("selenium") is None:
        return None, None, "selenium is not installed (pip install -r requirements-dev.txt)"
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
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        try:  # between two probes, wait for the server to exit (a failure) for at most POLL_S
            child.wait(timeout=POLL_S)
            pytest.fail(f"streamlit exited with {child.returncode}:\n{child.stdout.read()}")
        except subprocess.TimeoutExpired:
            pass
    pytest.fail(f"streamlit did not answer within {timeout} s")


@contextlib.contextmanager
def running_app(env, *options, prefix=(), script="app.py"):
    """`streamlit run app.py` (or `script`: class_app.py) on a free local port with `env` (and extra command-line
    options) -> its URL.

    `prefix`: a command that runs it (e.g. setpriv with fewer privileges)."""
    port = free_port()
    command = [*prefix, sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true",
               "--server.port", str(port), "--server.address", "127.0.0.1",
               "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none", *options]
    child = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
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


def new_driver(lang, profile, *flags):
    """A headless Chromium (selenium driver) speaking `lang`, with its profile in the folder `profile` (and extra
    command-line `flags`)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, driver_path = require_browser()
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (*CHROMIUM_FLAGS, *flags):
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument(f"--lang={LOCALES[lang]}")
    options.add_experimental_option("prefs", {"intl.accept_languages": LOCALES[lang]})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.execute_cdp_cmd("Emulation.setLocaleOverride", {"locale": LOCALES[lang]})
    return driver


def answers(url):
    """True if the app at `url` answers its health check."""
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=5) as answer:
            return answer.status == 200
    except OSError:
        return False


@pytest.fixture(scope="session")
def shared_apps(tmp_path_factory):
    """The run's app servers: one `streamlit run app.py` with a fresh data folder, shared by the test modules of
    this process (a pytest-xdist worker has its own); `server` starts it on first use, again if it died."""
    with contextlib.ExitStack() as stack:
        yield {"stack": stack, "tmp": tmp_path_factory}


@pytest.fixture(scope="module")
def server(shared_apps):
    """The URL of the run's app (with a data folder of its own, not the learner's): started once and kept for
    every module, as its first render (imports, models, caches) costs seconds. Tests that need a server nobody
    visited yet start their own (`running_app`)."""
    require_browser()
    url = shared_apps.get("url")
    if url is None or not answers(url):
        home = shared_apps["tmp"].mktemp("lab_home")
        shared_apps["url"] = shared_apps["stack"].enter_context(
            running_app(dict(os.environ, ATTENTION_LAB_HOME=str(home))))
    return shared_apps["url"]


def reset_driver(driver):
    """Ready a used Chromium for another test module (True), as a fresh one would be: one blank window at
    1400x1000, no cookies, an empty cache; False if it no longer answers."""
    from selenium.common.exceptions import WebDriverException

    try:
        for handle in driver.window_handles[1:]:
            driver.switch_to.window(handle)
            driver.close()
        driver.switch_to.window(driver.window_handles[0])
        driver.get("about:blank")
        driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
        driver.execute_cdp_cmd("Network.clearBrowserCache", {})
        driver.set_window_size(1400, 1000)
        return True
    except WebDriverException:
        return False


@pytest.fixture(scope="session")
def chromiums():
    """{lang: (driver, profile folder)}: the run's headless Chromiums, shared by the test modules (a start costs
    seconds); `browsers` starts and resets them."""
    made = {}
    yield made
    for driver, profile in made.values():
        with contextlib.suppress(Exception):
            driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def browsers(chromiums):
    """One headless Chromium per language (by locale): the run's, reset at this module's first use of it (started
    on first use, again if it died)."""
    ready = set()

    def get(lang):
        if lang not in ready:
            if lang in chromiums and not reset_driver(chromiums[lang][0]):
                driver, profile = chromiums.pop(lang)
                with contextlib.suppress(Exception):
                    driver.quit()
                shutil.rmtree(profile, ignore_errors=True)
            if lang not in chromiums:
                profile = tempfile.mkdtemp(prefix="chromium-profile-")
                chromiums[lang] = (new_driver(lang, profile), profile)
            ready.add(lang)
        return chromiums[lang][0]

    return get


def wait_for(driver, condition, message, timeout=90):
    """Poll `condition(driver)` until it is truthy -> its value; else fail with `message` (text or callable)."""
    from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        return WebDriverWait(driver, timeout, poll_frequency=POLL_S,
                             ignored_exceptions=(StaleElementReferenceException,)).until(condition)
    except TimeoutException:
        pytest.fail(f"{driver.current_url}: {message() if callable(message) else message} (after {timeout} s)")


# The app's script state, as Streamlit marks it on its root element ("initial" before the page's first run, then
# "running" / "notRunning" / ...), the connection's state, how many times the script state changed in this document
# (counted by an observer the first call installs), whether the page has a title, and how many elements still show
# their placeholder (Streamlit loads a widget's code on first use: after the run it may draw a skeleton for a while).
SCRIPT_STATE_JS = """
if (window.__labStateChanges === undefined) {
  window.__labStateChanges = 0;
  new MutationObserver(records => { window.__labStateChanges += records.length; }).observe(
    document, {attributes: true, subtree: true, attributeFilter: ['data-test-script-state']});
}
const app = document.querySelector('[data-testid="stApp"]');
return {state: app ? app.dataset.testScriptState : null, connection: app ? app.dataset.testConnectionState : null,
        changes: window.__labStateChanges, title: !!document.querySelector('h1'),
        skeletons: document.querySelectorAll('[data-testid^="stSkeleton"], [data-testid="stAppSkeleton"]').length};
"""


def script_state(driver):
    """{state, connection, changes, title, skeletons} of the page (SCRIPT_STATE_JS)."""
    return driver.execute_script(SCRIPT_STATE_JS)


def wait_until_rendered(driver, after=None, timeout=90, titled=True):
    """Wait until the page has a title, Streamlit's script has finished its run, connected to the server, and
    every element is drawn (none shows a loading placeholder). `titled=False`: a page that shows no title (a
    message in its place) is waited for all the same.

    `after`: a `rerun_mark` taken before a widget move; then see `wait_for_rerun_if_any`. Without it, the run
    is the page's own first one (a fresh document says "initial" until it is over)."""
    if after is not None:
        wait_for_rerun_if_any(driver, after, timeout=timeout)
        return
    seen = {}

    def idle(d):
        seen.update(script_state(d))
        return is_idle(seen, titled)

    wait_for(driver, idle, lambda: f"the page did not finish rendering (last seen: {seen})", timeout)


def is_idle(state, titled=True):
    """True if a `script_state` says: the script's run is over, connected, a title shown (if `titled`), nothing
    left to draw."""
    return (state["state"] == "notRunning" and state["connection"] == "CONNECTED" and (state["title"] or not titled)
            and not state["skeletons"])


def wait_for_rerun_if_any(driver, mark, grace_s=1.0, timeout=90):
    """After a widget move: wait for the run it started to finish. A run that shows (the script state changed
    since `mark`) is waited for however long it takes; if none shows within `grace_s` seconds, the page is taken
    as settled: the move started no run (a topic tab often keeps its choice for the next run), or one so quick
    that the page drew "running" and "notRunning" in one frame (the old calm window waited 1 s in every case)."""
    start, seen = time.monotonic(), {}

    def settled(d):
        seen.update(script_state(d))
        return is_idle(seen) and (seen["changes"] > mark or time.monotonic() - start >= grace_s)

    wait_for(driver, settled, lambda: f"the page did not finish rendering (last seen: {seen}, "
             f"state changes before the move: {mark})", timeout)


def rerun_mark(driver):
    """Wait until the page is idle; a mark for `wait_until_rendered(driver, after=mark)` after a widget move."""
    wait_until_rendered(driver)
    return script_state(driver)["changes"]


# innerText of the first element matching arguments[0], or null: the text as rendered, like Selenium's `.text`,
# which computes visibility node by node (0.5-1.2 s on a chapter page, against ~0.01 s). KaTeX's MathML copy
# of each formula, for screen readers, is hidden while it is read, as `.text` leaves it out; the style is
# added and removed in this one script, so nothing renders with it.
SHOWN_TEXT_JS = """
const found = document.querySelector(arguments[0]);
if (!found) return null;
const style = document.createElement('style');
style.textContent = '.katex-mathml { display: none !important; }';
document.head.appendChild(style);
try { return found.innerText; } finally { style.remove(); }
"""


def shown_text(driver, selector):
    """The rendered text of the first element matching the CSS selector (None if there is none), with its
    lines' spaces collapsed as Selenium's `.text` gives them and KaTeX's zero-width spaces removed."""
    text = driver.execute_script(SHOWN_TEXT_JS, selector)
    if text is None:
        return None
    lines = (" ".join(line.replace("\u200b", "").split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def main_text(driver):
    """The text of the page's main area."""
    text = shown_text(driver, '[data-testid="stMain"]')
    return text if text is not None else f"(no main area; the body shows: {shown_text(driver, 'body')!r})"


def wait_for_text(driver, text, timeout=120):
    """Wait until `text` shows in the main area, then until Streamlit is idle."""
    wait_for(driver, lambda d: text in main_text(d), lambda: f"{text!r} did not appear; the page shows:\n"
             f"{main_text(driver)[:2000]}", timeout)
    wait_until_rendered(driver)


def wait_for_layout(driver):
    """Wait until the window has its new size and two frames were drawn at it (charts re-layout on resize)."""
    size = driver.get_window_size()
    wait_for(driver, lambda d: d.get_window_size() == size, "the window did not take its new size", 10)
    driver.set_script_timeout(30)
    driver.execute_async_script("const done = arguments[arguments.length - 1];"
                                "requestAnimationFrame(() => requestAnimationFrame(() => done(true)));")


def full_page_screenshot(driver, path):
    """Resize the window to the page's height, then save a PNG."""
    height = driver.execute_script(
        "const m = document.querySelector('[data-testid=\"stMain\"]');"
        "return Math.max(m ? m.scrollHeight : 0, document.body.scrollHeight);"
    )
    driver.set_window_size(1400, min(max(int(height) + 120, 1000), 12000))
    wait_for_layout(driver)
    path.parent.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(path))
    driver.set_window_size(1400, 1000)


def press_and_wait(driver, slider, *keys):
    """Focus `slider` (a slider's range input), press `keys`; if its value moved, wait for the rerun that follows,
    else (it sat at its end) for nothing -> True if it moved."""
    from selenium.webdriver.common.action_chains import ActionChains

    def value():
        return driver.execute_script("return arguments[0].value", slider)

    before, mark = value(), rerun_mark(driver)
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'}); arguments[0].focus();", slider)
    ActionChains(driver).send_keys(*keys).perform()
    moved = value() != before
    wait_until_rendered(driver, after=mark if moved else None)
    return moved


def slider_to_end(driver, label, key):
    """Focus the slider labelled `label`, press `key` (Keys.END / Keys.HOME), wait for the rerun; its new value."""
    from selenium.webdriver.common.by import By

    selector = f'[data-testid="stSlider"] input[type="range"][aria-label="{label}"]'
    slider = wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, selector), f"no slider {label!r}")[-1]
    press_and_wait(driver, slider, key)
    return driver.find_elements(By.CSS_SELECTOR, selector)[-1].get_attribute("aria-valuetext")


# Each value label of the Vega heatmaps inside `arguments[0]`: its text, colour and width, and the cell it sits on.
HEATMAP_LABELS_JS = """
const out = [];
for (const svg of arguments[0].querySelectorAll('svg')) {
  const cells = [...svg.querySelectorAll('g.mark-rect.role-mark path')].map(p => ({
    box: p.getBoundingClientRect(), fill: getComputedStyle(p).fill}));
  for (const label of svg.querySelectorAll('g.mark-text.role-mark text')) {
    const b = label.getBoundingClientRect(), x = b.x + b.width / 2, y = b.y + b.height / 2;
    const cell = cells.find(c => c.box.left <= x && x <= c.box.right && c.box.top <= y && y <= c.box.bottom);
    out.push({text: label.textContent, fill: getComputedStyle(label).fill, width: b.width,
              cell_width: cell ? cell.box.width : null, cell_fill: cell ? cell.fill : null});
  }
}
return out;
"""


def rgb(css_colour):
    """(r, g, b) of a computed CSS colour 'rgb(1, 2, 3)' / 'rgba(1, 2, 3, 1)'."""
    numbers = css_colour[css_colour.index("(") + 1:css_colour.index(")")].split(",")
    return tuple(float(n) for n in numbers[:3])


def heatmap_labels(driver, element):
    """The value labels of the heatmaps drawn in `element` (HEATMAP_LABELS_JS), as dicts."""
    return driver.execute_script(HEATMAP_LABELS_JS, element)


def seconds_until_shown(driver, url, selectors, timeout=120):
    """Open `url`; seconds until every CSS selector matches a drawn element and Streamlit is idle (the page's
    first run has finished: `is_idle`) -> float. The clock starts before the navigation."""
    from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    def shown(d):
        if not is_idle(script_state(d)):
            return False
        return all(any(e.is_displayed() for e in d.find_elements(By.CSS_SELECTOR, s)) for s in selectors)

    start = time.monotonic()
    driver.get(url)
    try:
        WebDriverWait(driver, timeout, poll_frequency=0.05,
                      ignored_exceptions=(StaleElementReferenceException,)).until(shown)
    except TimeoutException:
        raise AssertionError(f"{url}: {selectors} were not shown within {timeout} s (last script state: "
                             f"{script_state(driver)}); the page shows:\n{main_text(driver)[:1000]}") from None
    return time.monotonic() - start
