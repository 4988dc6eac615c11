"""Print axe-core's serious and critical violations of every page, by rule, in English and Chinese.

    python bench/a11y.py [--lang en zh] [--page KEY ...] [--all]

Starts `streamlit run app.py`, opens each page in headless Chromium at 1400x1000 (the browser tests'
setup), moves its first sliders, runs axe-core (installed by .ci/install-axe) and prints the number of
offending nodes per rule. `--all` counts them before the allow-list of tests/test_browser_axe.py
(Streamlit's own widgets) is applied.
"""

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main():
    """Open every page in both languages and print its axe counts."""
    from course.common import pages_index
    from tests.axe_support import STREAMLIT_OWNED, axe_violations, blocking, counts_by_rule, move_widgets, require_axe
    from tests.browser_support import new_driver, running_app, wait_until_rendered

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lang", nargs="+", default=["en", "zh"])
    parser.add_argument("--page", nargs="+", help="page keys (default: all)")
    parser.add_argument("--all", action="store_true", help="count Streamlit-owned nodes too")
    parser.add_argument("--nodes", action="store_true", help="print each offending node")
    args = parser.parse_args()
    source = require_axe()
    pages = [p for p in pages_index.existing() if not args.page or p.key in args.page]
    home = tempfile.mkdtemp(prefix="a11y-home-")
    total = 0
    with running_app(dict(os.environ, ATTENTION_LAB_HOME=home)) as url:
        for lang in args.lang:
            driver = new_driver(lang, tempfile.mkdtemp(prefix="a11y-profile-"))
            try:
                driver.get(f"{url}/")
                wait_until_rendered(driver)
                for page in pages:
                    driver.get(f"{url}/{page.url_path}")
                    wait_until_rendered(driver)
                    move_widgets(driver)
                    found = axe_violations(driver, source)
                    left = blocking(found, () if args.all else STREAMLIT_OWNED)
                    counts = {}
                    for rule, _target, _html in left:
                        counts[rule] = counts.get(rule, 0) + 1
                    total += len(left)
                    print(f"{lang} {page.key:16} {len(left):3}  {counts or ''}", flush=True)
                    for rule, target, html in left if args.nodes else ():
                        print(f"{'':20} {rule}: {target}  {html}")
                    if args.all:
                        print(f"{'':20} all impacts: {counts_by_rule(found)}")
            finally:
                driver.quit()
    print(f"total serious+critical nodes: {total}")


if __name__ == "__main__":
    main()
