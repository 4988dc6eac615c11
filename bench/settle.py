"""How long a page takes to settle in Chromium after a learner moves a slider, per page.

    python bench/settle.py [--moves 7] [--lang en] [--page KEY ...]

Starts `streamlit run app.py` and a headless Chromium at 1400 x 1000 (tests/browser_support.py, the browser
tests' own), opens each page by its URL, and moves its first slider on screen one step with the keyboard, right
then left, --moves times. Each move is timed in the page itself: from the keydown event to the end of the
rerun it started (Streamlit's script state back to "notRunning" after a change) plus two animation frames (the
new elements drawn). A page with no slider on screen is listed as such.

Prints per page the p50 and p90 of its moves in ms, and over all moves, with the machine's load average (take
the figures on an idle machine: the browser, the server and this process share its cores).
"""

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GOAL_P90_MS = 300

# Before a move: note the keydown's time and follow the script state's changes.
ARM_JS = """
window.__settle = {down: null, changes: 0};
document.addEventListener('keydown', () => { if (window.__settle.down === null)
  window.__settle.down = performance.now(); }, {capture: true, once: true});
if (!window.__settleObserver) {
  window.__settleObserver = new MutationObserver(records => { window.__settle.changes += records.length; });
  window.__settleObserver.observe(document, {attributes: true, subtree: true,
                                             attributeFilter: ['data-test-script-state']});
}
"""

# After a move: resolve with the ms from keydown to the end of the rerun and two frames, or null if the key was
# not seen or no rerun started within `grace` ms.
SETTLED_JS = """
const done = arguments[arguments.length - 1];
const grace = arguments[0];
const start = performance.now();
const app = () => document.querySelector('[data-testid="stApp"]');
const poll = () => {
  const s = window.__settle, a = app();
  const idle = a && a.dataset.testScriptState === 'notRunning'
    && !document.querySelector('[data-testid^="stSkeleton"]');
  if (s.down !== null && s.changes > 0 && idle) {
    requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now() - s.down)));
  } else if (performance.now() - start > grace && s.changes === 0) {
    done(null);
  } else {
    setTimeout(poll, 5);
  }
};
poll();
"""


def percentile(values, q):
    """The q-quantile (0..1) of `values`, by linear interpolation (statistics.quantiles' inclusive method)."""
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]


def time_moves(driver, url, moves):
    """[ms] of each move of the page's first slider on screen, or None if it shows none."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    from tests.axe_support import shown_sliders
    from tests.browser_support import wait_until_rendered

    driver.get(url)
    wait_until_rendered(driver)
    times = []
    for i in range(moves):
        sliders = shown_sliders(driver)
        if not sliders:
            return None
        slider = sliders[0]
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'}); arguments[0].focus();", slider)
        driver.execute_script(ARM_JS)
        ActionChains(driver).send_keys(Keys.ARROW_RIGHT if i % 2 == 0 else Keys.ARROW_LEFT).perform()
        driver.set_script_timeout(120)
        took = driver.execute_async_script(SETTLED_JS, 3000)
        if took is None and i % 2 == 0:  # at its right end: the next moves go left first
            ActionChains(driver).send_keys(Keys.ARROW_LEFT).perform()
            wait_until_rendered(driver)
            continue
        if took is not None:
            times.append(took)
        wait_until_rendered(driver)
    return times


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=7)
    parser.add_argument("--lang", choices=("en", "zh"), default="en")
    parser.add_argument("--page", nargs="*", help="page keys (default: every existing page)")
    args = parser.parse_args(argv)

    from course.common import pages_index
    from tests.browser_support import new_driver, running_app

    pages = [p for p in pages_index.existing() if not args.page or p.key in args.page]
    env = dict(os.environ, ATTENTION_LAB_GRADER_EARLY="0")
    every = []
    with running_app(env) as url, tempfile.TemporaryDirectory() as profile:
        driver = new_driver(args.lang, profile)
        try:
            time_moves(driver, f"{url}/{pages[0].url_path}", 2)  # warm the server's caches and the browser
            print(f"settle after a slider move, {args.lang}, {args.moves} moves per page "
                  f"(load {os.getloadavg()[0]:.1f}); goal p90 < {GOAL_P90_MS} ms")
            for page in pages:
                times = time_moves(driver, f"{url}/{page.url_path}", args.moves)
                if not times:
                    print(f"  {page.key:16s} no slider on screen")
                    continue
                every += times
                print(f"  {page.key:16s} p50 {percentile(times, 0.5):6.0f} ms  p90 {percentile(times, 0.9):6.0f} ms"
                      f"  ({len(times)} moves)")
        finally:
            driver.quit()
    if every:
        print(f"all pages: p50 {percentile(every, 0.5):.0f} ms, p90 {percentile(every, 0.9):.0f} ms over "
              f"{len(every)} moves (load {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
