"""The app in Chromium: readable charts after widget moves, the Chinese UI in Chinese, keyboard access.

Measured from the rendered page in both languages: chapter 7's mask heatmaps at length 10 (cells wide enough
for their labels, each label contrasting with its own cell); the skip link and a visible focus ring; chapter 5's
error in the learner's language. The checks of a page as it opens (heatmap labels of chapters 4 and 6, the
diagrams' text size and arrows, the shape table's and upload box's texts) run in tests/test_browser.py's one
visit per page (tests/page_checks.py), as does each page's browser title.
"""


import pytest

from course.common.i18n import t
from tests.browser_support import heatmap_labels, main_text, press_and_wait, slider_to_end, wait_for, wait_for_text
from tests.page_checks import unreadable, vega_charts
from tests.test_browser import open_page

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]  # Chromium
LANGS = ["en", "zh"]


@pytest.mark.parametrize("lang", LANGS)
def test_ch07_mask_heatmaps_keep_readable_cells_at_length_10(server, browsers, lang):
    """At length 10 the three masks were ~175 px wide, their labels running together ("0.100.100.10")."""
    from selenium.webdriver.common.keys import Keys

    driver = browsers(lang)
    open_page(driver, server, "ch07")
    for key in ("src_len", "src_valid", "tgt_len"):
        assert slider_to_end(driver, t(f"ch07.masks.{key}", lang), Keys.END) == "10"
    titles = [t(f"ch07.masks.{use}_use", lang) for use in ("enc_self", "dec_self", "cross")]

    def masks(d):
        charts = [c for c in vega_charts(d) if any(title in c.text for title in titles)]
        found = [heatmap_labels(d, c) for c in charts]
        return found if len(found) == 3 and all(len(labels) == 100 for labels in found) else None

    found = wait_for(driver, masks, "the three 10 x 10 mask heatmaps were not drawn")
    for labels in found:
        assert min(label["cell_width"] for label in labels) >= 28, "cells squeezed below 28 px"
        assert unreadable(labels) == []


# --- keyboard and screen readers ---------------------------------------------------------------------

ACTIVE_JS = """
const a = document.activeElement;
return {tag: a.tagName, text: (a.innerText || a.getAttribute('aria-label') || '').slice(0, 80),
        in_main: !!a.closest('[data-testid="stMain"]')};
"""

# The focus ring of the focused element, drawn on itself or, for inputs a widget hides (radios,
# sliders), on the nearest visible ancestor: {width, style, box} or null when nothing shows it.
RING_JS = """
let el = document.activeElement;
for (let depth = 0; el && depth < 4; depth++, el = el.parentElement) {
  const style = getComputedStyle(el), box = el.getBoundingClientRect();
  const visible = el.checkVisibility({opacityProperty: true, visibilityProperty: true}) && box.width >= 8
                  && box.height >= 8;
  if (visible && style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2)
    return {width: parseFloat(style.outlineWidth), colour: style.outlineColor, tag: el.tagName};
}
return null;
"""


@pytest.mark.parametrize("lang", LANGS)
def test_the_skip_link_reaches_the_content_in_two_presses_and_focus_is_visible(server, browsers, lang):
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    driver = browsers(lang)
    open_page(driver, server, "ch03")
    driver.execute_script("document.activeElement.blur(); window.scrollTo(0, 0);")
    ActionChains(driver).send_keys(Keys.TAB).perform()
    first = driver.execute_script(ACTIVE_JS)
    assert first["text"] == t("app.skip_to_content", lang), first  # the first stop, in the learner's language
    assert driver.execute_script(RING_JS), "the skip link shows no focus ring"
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    wait_for(driver, lambda d: d.execute_script(ACTIVE_JS)["in_main"], "Enter on the skip link left the sidebar", 10)
    missing = []
    for _ in range(6):  # the main area's first keyboard stops: a tab, a number box, a radio, a slider...
        ActionChains(driver).send_keys(Keys.TAB).perform()
        active = driver.execute_script(ACTIVE_JS)
        assert active["in_main"], f"Tab left the main area: {active}"
        try:  # a ring may fade in (Streamlit animates the heading link's opacity): wait briefly for it
            WebDriverWait(driver, 3, poll_frequency=0.1).until(lambda d: d.execute_script(RING_JS))
        except TimeoutException:
            missing.append(active)
    assert missing == [], f"focused without a visible ring: {missing}"


def test_the_sidebar_links_show_a_focus_ring(server, browsers):
    """Streamlit marks a focused page link with a faint grey background only."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    driver = browsers("en")
    open_page(driver, server, "ch03")
    driver.execute_script("document.activeElement.blur(); window.scrollTo(0, 0);")
    ActionChains(driver).send_keys(Keys.TAB, Keys.TAB).perform()  # past the skip link: the first chapter's link
    active = driver.execute_script(ACTIVE_JS)
    assert t("nav.ch01", "en") in active["text"], active
    ring = driver.execute_script(RING_JS)
    assert ring and ring["width"] >= 2, ring


# Each sidebar link's label and the box that clips it with an ellipsis when it is too wide.
NAV_LABELS_JS = """
return [...document.querySelectorAll('[data-testid="stSidebarNavLink"] p')].map(p => {
  const box = p.parentElement.parentElement;
  return {text: p.textContent, needs: box.scrollWidth, has: box.clientWidth, clips: getComputedStyle(box).overflow};
});
"""


@pytest.mark.parametrize("lang", LANGS)
def test_no_sidebar_title_is_cut_off(server, browsers, lang):
    driver = browsers(lang)
    open_page(driver, server, "ch01")
    labels = driver.execute_script(NAV_LABELS_JS)
    assert len(labels) >= 18 and all(label["clips"] == "hidden" for label in labels), labels  # the clipping box
    cut = [label for label in labels if label["needs"] > label["has"]]
    assert cut == [], f"sidebar titles cut off at 1400 x 1000 ({lang}): {cut}"


# --- the Chinese UI in Chinese (and the English one in English) ----------------------------------------

@pytest.mark.parametrize("lang", LANGS)
def test_ch05_head_count_slider_steps_over_counts_that_do_not_divide_num_hiddens(server, browsers, lang):
    """From 1 head, two steps right reach 4 heads (100 has no 3): no error, and the tracer's table stays."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    driver = browsers(lang)
    open_page(driver, server, "ch05")
    label = t("ch05.heads_label", lang)
    selector = f'[data-testid="stSlider"] input[aria-label="{label}"]'
    assert slider_to_end(driver, label, Keys.HOME) == "1"
    for _ in range(2):
        assert press_and_wait(driver, driver.find_elements(By.CSS_SELECTOR, selector)[-1], Keys.ARROW_RIGHT)
    assert driver.find_elements(By.CSS_SELECTOR, selector)[-1].get_attribute("aria-valuetext") == "4"
    wait_for_text(driver, "25 = 100 / 4")  # ch05.per_head: each of the 4 heads works in 25 dimensions
    assert not driver.find_elements(By.CSS_SELECTOR, '[data-testid="stAlertContentError"]')
    assert t("ch05.heads_divide", lang, num_hiddens=100, valid="1, 2, 4, 5, 10") in main_text(driver)
