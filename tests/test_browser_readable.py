"""The app in Chromium: readable charts and diagrams, the Chinese UI in Chinese, keyboard access.

Measured from the rendered page in both languages: heatmap cells wide enough for their labels and
every label in a colour that contrasts with its own cell; the diagrams' text size and arrows (each
page's browser title: tests/test_browser.py); the skip link and a visible focus ring; Chinese texts where English leaked.
"""


import pytest

from course.app import grading_client
from course.common.charts import contrast_ratio
from course.common.i18n import t
from tests.browser_support import (heatmap_labels, main_text, rgb, slider_to_end,
                                   wait_for, wait_for_text, wait_until_rendered)

pytestmark = pytest.mark.timeout(600)
LANGS = ["en", "zh"]
MIN_CONTRAST = 4.5  # WCAG AA for text


def open_page(driver, server, url_path):
    """Open the app's root (the session starts in the shell, in the browser's language), then a page."""
    driver.get(f"{server}/")
    wait_until_rendered(driver)
    driver.get(f"{server}/{url_path}")
    wait_until_rendered(driver)


def vega_charts(driver):
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, '[data-testid="stVegaLiteChart"]')


def unreadable(labels):
    """The labels that overflow their cell or contrast less than MIN_CONTRAST with it."""
    bad = []
    for label in labels:
        if label["cell_fill"] is None:
            bad.append((label["text"], "not on a cell"))
            continue
        ratio = contrast_ratio(rgb(label["fill"]), rgb(label["cell_fill"]))
        if ratio < MIN_CONTRAST or label["width"] > label["cell_width"] - 2:
            bad.append((label["text"], label["fill"], label["cell_fill"], round(ratio, 2),
                        round(label["width"], 1), round(label["cell_width"], 1)))
    return bad


@pytest.mark.parametrize("lang", LANGS)
def test_ch07_mask_heatmaps_keep_readable_cells_at_length_10(server, browsers, lang):
    """At length 10 the three masks were ~175 px wide, their labels running together ("0.100.100.10")."""
    from selenium.webdriver.common.keys import Keys

    driver = browsers(lang)
    open_page(driver, server, "transformer")
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


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("url_path", ["bahdanau", "self-attention"])
def test_heatmap_labels_contrast_with_their_own_cell(server, browsers, url_path, lang):
    """Chapters 4 and 6: labels went white at ~0.17 on pale cells (a mean rule, not the cell's colour)."""
    driver = browsers(lang)
    open_page(driver, server, url_path)

    def labelled(d):  # heatmaps: most labels sit on a cell (a bar chart's labels sit above its bars)
        charts = (heatmap_labels(d, c) for c in vega_charts(d))
        return [labels for labels in charts if labels and sum(x["cell_fill"] is not None for x in labels) > len(labels) / 2]

    found = wait_for(driver, labelled, "no heatmap with value labels")
    colours = {label["fill"] for labels in found for label in labels}
    assert len(colours) == 2, f"expected black and white labels, got {colours}"  # both rules were exercised
    assert [bad for labels in found for bad in unreadable(labels)] == []


DIAGRAM_JS = """
const svg = arguments[0].querySelector('svg');
const fonts = [...svg.querySelectorAll('text')].map(e => e.getBoundingClientRect().height);
const edges = [...svg.querySelectorAll('g.edge path')].map(p => {
  const length = p.getTotalLength(), matrix = p.getScreenCTM(), points = [];
  for (let i = 0; i <= 40; i++) {
    const q = p.getPointAtLength(length * i / 40);
    points.push([q.x * matrix.a + q.y * matrix.c + matrix.e, q.x * matrix.b + q.y * matrix.d + matrix.f]);
  }
  return points;
});
const clusters = [...svg.querySelectorAll('g.cluster')].map(c => {  // each stack's label: all its lines
  const boxes = [...c.querySelectorAll('text')].map(e => e.getBoundingClientRect());
  return [[...c.querySelectorAll('text')].map(e => e.textContent).join(' '),
          Math.min(...boxes.map(b => b.left)), Math.min(...boxes.map(b => b.top)),
          Math.max(...boxes.map(b => b.right)), Math.max(...boxes.map(b => b.bottom))]; });
return {fonts: fonts, edges: edges, clusters: clusters};
"""


def segments_cross(a, b, c, d):
    """True if segment ab properly crosses segment cd."""
    def side(p, q, r):
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
    return side(a, b, c) * side(a, b, d) < 0 and side(c, d, a) * side(c, d, b) < 0


def crossings(edges, trim=3):
    """Pairs of edges (by index) whose polylines cross, away from their ends (edges meet at a node)."""
    found = []
    for i, first in enumerate(edges):
        for j in range(i + 1, len(edges)):
            second = edges[j]
            if any(segments_cross(first[k], first[k + 1], second[m], second[m + 1])
                   for k in range(trim, len(first) - 1 - trim) for m in range(trim, len(second) - 1 - trim)):
                found.append((i, j))
    return found


def diagram(driver, index=0):
    from selenium.webdriver.common.by import By

    graphs = wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="stGraphVizChart"] svg g.edge')
                      and d.find_elements(By.CSS_SELECTOR, '[data-testid="stGraphVizChart"]'), "no diagram drawn")
    return driver.execute_script(DIAGRAM_JS, graphs[index])


@pytest.mark.parametrize("lang", LANGS)
def test_ch01_diagram_has_readable_text_and_no_crossing_arrows(server, browsers, lang):
    driver = browsers(lang)
    open_page(driver, server, "seq2seq")
    drawn = diagram(driver)
    assert min(drawn["fonts"]) >= 12, f"diagram text {min(drawn['fonts']):.1f} px high"  # was ~8 px
    assert len(drawn["edges"]) >= 20 and crossings(drawn["edges"]) == []


@pytest.mark.parametrize("lang", LANGS)
def test_ch07_stack_labels_have_no_arrow_through_them(server, browsers, lang):
    driver = browsers(lang)
    open_page(driver, server, "transformer")
    drawn = diagram(driver)
    assert len(drawn["clusters"]) == 2
    for text, left, top, right, bottom in drawn["clusters"]:
        through = [i for i, edge in enumerate(drawn["edges"])
                   if any(left - 2 <= x <= right + 2 and top - 2 <= y <= bottom + 2 for x, y in edge)]
        assert through == [], f"arrows {through} run through the label {text!r}"


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
    open_page(driver, server, "scoring")
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
    open_page(driver, server, "scoring")
    driver.execute_script("document.activeElement.blur(); window.scrollTo(0, 0);")
    ActionChains(driver).send_keys(Keys.TAB, Keys.TAB).perform()  # past the skip link: the first chapter's link
    active = driver.execute_script(ACTIVE_JS)
    assert t("nav.ch01", "en") in active["text"], active
    ring = driver.execute_script(RING_JS)
    assert ring and ring["width"] >= 2, ring


# --- the Chinese UI in Chinese (and the English one in English) ----------------------------------------

@pytest.mark.parametrize("lang", LANGS)
def test_ch05_head_count_error_is_in_the_learners_language(server, browsers, lang):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    driver = browsers(lang)
    open_page(driver, server, "multi-head")
    label = t("ch05.heads_label", lang)
    slider_to_end(driver, label, Keys.HOME)  # 1 head
    slider = driver.find_elements(By.CSS_SELECTOR, f'[data-testid="stSlider"] input[aria-label="{label}"]')[-1]
    driver.execute_script("arguments[0].focus();", slider)
    ActionChains(driver).send_keys(Keys.ARROW_RIGHT, Keys.ARROW_RIGHT).perform()  # 3 heads: 100 is not divisible
    wanted = t("ch05.bad_heads", lang, num_hiddens=100, num_heads=3, valid="1, 2, 4, 5, 10, 20, 25, 50, 100")
    wait_for_text(driver, wanted.split("：")[0] if lang == "zh" else wanted.split(":")[0])
    errors = [e.text for e in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stAlertContentError"]')]
    assert any("num_heads = 3" in e for e in errors), errors
    if lang == "zh":
        assert not any("must be divisible" in e for e in errors), errors


@pytest.mark.parametrize("lang", LANGS)
def test_ch04_shape_table_names_its_tensors_in_the_learners_language(server, browsers, lang):
    driver = browsers(lang)
    open_page(driver, server, "bahdanau")
    wait_for_text(driver, t("ch04.tensor.deep_out", lang))
    text = main_text(driver)
    assert t("ch04.tensor.query", lang) in text and "s_{t-1}" not in text
    if lang == "zh":  # the table's old English entries (the prose may gloss 深输出 as "deep output")
        assert "GRU output" not in text and "deep output tanh" not in text


@pytest.mark.parametrize("lang", LANGS)
def test_the_upload_box_says_the_real_limit(server, browsers, lang):
    from selenium.webdriver.common.by import By

    driver = browsers(lang)
    open_page(driver, server, "practice")
    label = t("practice.upload_file", lang, limit=grading_client.MAX_UPLOAD_MB)
    wait_for_text(driver, label)
    box = driver.find_element(By.CSS_SELECTOR, '[data-testid="stFileUploader"]').text
    assert "200MB" not in box and "1MB" in box.replace(" ", ""), box
