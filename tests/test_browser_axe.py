"""axe-core in Chromium: no serious or critical accessibility violation on any page, in English and Chinese.

Each page is opened at 1400x1000 (the browser tests' window) through the app's root, its first sliders are
moved (a rerun each), each topic tab of a long chapter is opened, and axe-core (.ci/install-axe) checks the
page. A failure lists every offending rule with its nodes. Violations inside Streamlit's own components,
which the app's markup cannot change, are listed in STREAMLIT_OWNED with the reason; nothing else is allowed.
"""


import pytest

from course.app.ui import TOPICS
from course.common import pages_index
from course.common.i18n import t
from tests.axe_support import axe_violations, blocking, move_widgets, require_axe
from tests.browser_support import wait_until_rendered
from tests.test_browser import close_dialogs, open_tab, open_through_root

pytestmark = pytest.mark.timeout(900)

# (axe rule, data-testid of the Streamlit component the node sits in): allowed, with the reason.
STREAMLIT_OWNED = (
    # st.navigation's sidebar menu: Streamlit wraps each section (its <header> and its <li> page links) in a
    # <div> placed directly in the <ul>, so the list holds non-<li> children (list) and each <li>'s parent is
    # that <div>, not a list (listitem); app.py only passes the sections to st.navigation.
    # The links themselves have names and are reachable by Tab (test_browser_readable checks their ring).
    ("list", "stSidebarNavItems"),
    ("listitem", "stSidebarNavItems"),
)


@pytest.fixture(scope="module")
def axe_source():
    """axe-core's script (skips without it, fails in CI)."""
    return require_axe()


def report(where, bad):
    """The failure message: each offending rule, then its nodes."""
    lines = [f"{len(bad)} serious/critical axe violations on {where}:"]
    for rule in sorted({rule for rule, _, _ in bad}):
        lines.append(f"  {rule}:")
        lines += [f"    {target}\n      {html}" for r, target, html in bad if r == rule]
    return "\n".join(lines)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("page", pages_index.existing(), ids=lambda p: p.key)
def test_page_has_no_serious_or_critical_axe_violation(server, browsers, axe_source, page, lang):
    driver = browsers(lang)
    driver.set_window_size(1400, 1000)
    open_through_root(driver, server, page.key)
    close_dialogs(driver)
    move_widgets(driver)
    views = [("", None)]
    if page.key in TOPICS:  # a long chapter: every topic tab in turn
        views = [(f" tab {topic}", t(f"ui.tabs.{page.key}.{topic}", lang)) for topic in TOPICS[page.key]]
    problems = []
    for suffix, label in views:
        if label:
            open_tab(driver, label)
            wait_until_rendered(driver)
        bad = blocking(axe_violations(driver, axe_source), STREAMLIT_OWNED)
        if bad:
            problems.append(report(f"{page.url_path}{suffix} ({lang})", bad))
    assert problems == [], "\n".join(problems)


def test_the_allow_list_covers_only_its_rule_inside_its_component():
    """A node is allowed only for the listed rule and only inside the listed Streamlit component."""
    def violation(rule, owners, impact="serious"):
        return {"id": rule, "impact": impact, "help": "", "nodes": [
            {"target": "ul", "html": "<ul>", "owners": owners, "summary": ""}]}

    assert blocking([violation("list", ["stSidebarNavItems", "stSidebar"])], STREAMLIT_OWNED) == []
    assert blocking([violation("list", ["stMain"])], STREAMLIT_OWNED) == [("list", "ul", "<ul>  []")]
    assert blocking([violation("color-contrast", ["stSidebarNavItems"])], STREAMLIT_OWNED) != []
    assert blocking([violation("region", ["stMain"], impact="moderate")], STREAMLIT_OWNED) == []
