"""axe-core in the browser tests' Chromium: inject it, run it on the page, move a page's widgets first.

axe-core is an npm package that .ci/install-axe puts in the git-ignored .axe/ folder.
"""

import os

import pytest

from tests.browser_support import ROOT, press_and_wait

AXE_JS = ROOT / ".axe" / "node_modules" / "axe-core" / "axe.min.js"
SLIDERS = '[data-testid="stMain"] [data-testid="stSlider"] input[type="range"]'  # a slider's keyboard handle
BLOCKING = ("serious", "critical")  # the impacts a page may not have (outside the allow-list)

# (axe rule, data-testid of the Streamlit component the node sits in): allowed, with the reason.
STREAMLIT_OWNED = (
    # st.navigation's sidebar menu: Streamlit wraps each section (its <header> and its <li> page links) in a
    # <div> placed directly in the <ul>, so the list holds non-<li> children (list) and each <li>'s parent is
    # that <div>, not a list (listitem); app.py only passes the sections to st.navigation.
    # The links themselves have names and are reachable by Tab (test_browser_readable checks their ring).
    ("list", "stSidebarNavItems"),
    ("listitem", "stSidebarNavItems"),
)

# Each node also gets `owners`: the data-testid of it and its ancestors (Streamlit marks its components so).
RUN_AXE_JS = """
const done = arguments[arguments.length - 1];
const owners = target => {
  const found = [];
  for (let el = document.querySelector(target[0]); el; el = el.parentElement)
    if (el.dataset && el.dataset.testid) found.push(el.dataset.testid);
  return found;
};
axe.run(document, {resultTypes: ['violations']}).then(result => done(result.violations.map(v => ({
  id: v.id, impact: v.impact, help: v.help,
  nodes: v.nodes.map(n => ({target: n.target.join(' '), html: n.html.slice(0, 300), owners: owners(n.target),
                            summary: (n.failureSummary || '').slice(0, 300)}))}))))
  .catch(error => done({error: String(error)}));
"""


def require_axe():
    """The axe-core script's text; skip without it, but fail in CI, which must run this test."""
    if not AXE_JS.is_file():
        problem = f"axe-core is not installed at {AXE_JS.relative_to(ROOT)} (run .ci/install-axe)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the accessibility test: {problem}")
        pytest.skip(problem)
    return AXE_JS.read_text(encoding="utf-8")


# The finite CSS transitions and animations still running (a spinner's endless one is not waited for): a focused
# slider fades its tick bar's end labels in over a few frames, and axe reads the colours as they are at that moment.
RUNNING_TRANSITIONS_JS = """
return document.getAnimations().filter(a => a.playState === 'running'
  && a.effect && a.effect.getComputedTiming().iterations !== Infinity).length;
"""


def wait_for_transitions(driver, timeout=10):
    """Wait until no finite CSS transition or animation runs on the page (what axe sees is what stays shown)."""
    from tests.browser_support import wait_for

    wait_for(driver, lambda d: d.execute_script(RUNNING_TRANSITIONS_JS) == 0,
             lambda: f"{driver.execute_script(RUNNING_TRANSITIONS_JS)} transitions still ran after {timeout} s", timeout)


def axe_violations(driver, source):
    """axe-core's violations on the current page (injected into it when missing), read once its transitions have
    ended: [{id, impact, help, nodes}]."""
    wait_for_transitions(driver)
    if not driver.execute_script("return typeof window.axe !== 'undefined'"):
        driver.execute_script(source)
    driver.set_script_timeout(120)
    found = driver.execute_async_script(RUN_AXE_JS)
    if isinstance(found, dict):
        pytest.fail(f"axe-core failed on {driver.current_url}: {found['error']}")
    return found


def blocking(violations, allowed=()):
    """The serious and critical nodes that no (rule, data-testid) of `allowed` covers (the node is inside an
    element with that data-testid) -> [(rule, target, html)]."""
    bad = []
    for violation in violations:
        if violation["impact"] not in BLOCKING:
            continue
        for node in violation["nodes"]:
            if not any(rule == violation["id"] and owner in node["owners"] for rule, owner in allowed):
                summary = " ".join(node["summary"].split())
                bad.append((violation["id"], node["target"], f"{node['html'][:160]}  [{summary}]"))
    return bad


def report(where, bad):
    """The failure message: each offending rule, then its nodes."""
    lines = [f"{len(bad)} serious/critical axe violations on {where}:"]
    for rule in sorted({rule for rule, _, _ in bad}):
        lines.append(f"  {rule}:")
        lines += [f"    {target}\n      {html}" for r, target, html in bad if r == rule]
    return "\n".join(lines)


def page_problems(driver, source, where):
    """[the failure message] if axe-core finds a blocking violation outside STREAMLIT_OWNED on the page, else []."""
    bad = blocking(axe_violations(driver, source), STREAMLIT_OWNED)
    return [report(where, bad)] if bad else []


def counts_by_rule(violations):
    """{rule id (impact): number of nodes} of serious and critical violations."""
    return {f"{v['id']} ({v['impact']})": len(v["nodes"]) for v in violations if v["impact"] in BLOCKING}


# Is the slider of this range input on screen? Streamlit 1.67 draws its own track over a range input it hides
# (so selenium's is_displayed() is false for every slider): ask of the slider's box instead, which a hidden tab
# panel or a collapsed expander leaves with no layout box.
SLIDER_SHOWN_JS = """
const box = arguments[0].closest('[data-testid="stSlider"]');
return !!box && box.getClientRects().length > 0 && getComputedStyle(box).visibility !== 'hidden';
"""


def shown_sliders(driver):
    """The range inputs of the sliders on screen in the main area, in page order."""
    from selenium.webdriver.common.by import By

    return [s for s in driver.find_elements(By.CSS_SELECTOR, SLIDERS) if driver.execute_script(SLIDER_SHOWN_JS, s)]


def move_widgets(driver, limit=3):
    """Move the first `limit` sliders on screen in the main area one step, as a learner would (right, or left for
    one already at its right end; a rerun each) -> how many were moved. Fails if one of them moved neither way."""
    from selenium.webdriver.common.keys import Keys

    moved = 0
    for i in range(min(limit, len(shown_sliders(driver)))):
        sliders = shown_sliders(driver)  # a rerun may draw them anew
        if i >= len(sliders):
            break
        slider = sliders[i]
        label = slider.get_attribute("aria-label")
        assert press_and_wait(driver, slider, Keys.ARROW_RIGHT) or press_and_wait(driver, slider, Keys.ARROW_LEFT), \
            f"the slider {label!r} moved neither right nor left"
        moved += 1
    return moved
