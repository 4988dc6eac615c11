"""The app in a real browser: every page opens in headless Chromium without an error or an axe violation.

Starts `streamlit run app.py` on a free local port, opens each registered page
in Chinese and in English (the language comes from the browser's locale), checks
that no exception or error box is shown, and saves a screenshot of each page
under artifacts/screenshots/; in the same visit, its first sliders are moved and
axe-core scans the page (each topic tab of a long chapter in turn: see
tests/test_browser_axe.py). Needs Debian's `chromium` and `chromium-driver`
(see .ci/install-browser) and selenium; skipped without them, except in CI
(CI=true), where a missing browser is a failure.
"""
import contextlib
import shutil
import subprocess
import unicodedata
from bisect import bisect_right
from functools import lru_cache

import pytest

from course.common import pages_index
from course.app.ui import TOPICS
from course.common.i18n import t
from tests.axe_support import move_widgets, page_problems, require_axe, shown_sliders
from tests.browser_support import (ERROR_SELECTOR, ROOT, SHOTS, full_page_screenshot, main_text, rerun_mark, wait_for,
                                   wait_for_text, wait_until_rendered)
from tests.page_checks import PAGE_CHECKS

MY_TITLES = {"ch01": "ch01.title", "ch03": "ch03.title", "ch06": "ch06.title", "ch07": "ch07.title",
             "ch09": "ch09.title", "practice": "practice.title", "notes": "notes.title"}  # their headings checked
pytestmark = pytest.mark.timeout(600)


# Emoji blocks: drawn from an emoji font, which CI's Debian image (and many learners') lacks.
EMOJI_BLOCKS = ((0x2600, 0x27BF), (0x2B00, 0x2BFF), (0xFE0F, 0xFE0F), (0x1F000, 0x1FAFF))
INVISIBLE = ("Cc", "Cf", "Zs", "Zl", "Zp")  # control, format and space characters draw nothing


@lru_cache(maxsize=1)
def installed_font_ranges():
    """Sorted (first, last) code point ranges covered by some font fontconfig knows, or None."""
    try:
        listing = subprocess.run(["fc-list", "--format", "%{charset}\n"], capture_output=True,
                                 text=True, timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    ranges = []
    for item in listing.split():
        first, _, last = item.partition("-")
        ranges.append((int(first, 16), int(last or first, 16)))
    ranges.sort()
    merged = []
    for first, last in ranges:
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged


def has_installed_glyph(char, ranges):
    """True if some installed font draws `char`."""
    i = bisect_right(ranges, (ord(char), 0x10FFFF)) - 1
    return i >= 0 and ranges[i][0] <= ord(char) <= ranges[i][1]


def empty_box_glyphs(text):
    """The characters of `text` a learner would see as empty boxes: U+FFFD, emoji, and
    any character that none of the installed fonts (Streamlit's web fonts cover ASCII) has."""
    ranges = installed_font_ranges()
    bad = set()
    for char in set(text):
        code = ord(char)
        if code < 0x80 or unicodedata.category(char) in INVISIBLE:
            continue
        if (code == 0xFFFD or any(lo <= code <= hi for lo, hi in EMOJI_BLOCKS)
                or (ranges is not None and not has_installed_glyph(char, ranges))):
            bad.add(char)
    return sorted(f"U+{ord(c):04X} {c}" for c in bad)


def check_shell(driver, lang):
    """Sidebar, toolbar and glyphs every page shares: every entry listed, no Deploy, no empty boxes."""
    from selenium.webdriver.common.by import By

    sidebar = driver.find_element(By.CSS_SELECTOR, '[data-testid="stSidebar"]').text
    hidden = [t(p.title_key, lang) for p in pages_index.existing() if t(p.title_key, lang) not in sidebar]
    assert hidden == [], f"sidebar entries not shown in {lang}: {hidden}"
    assert not driver.find_elements(By.CSS_SELECTOR, '[data-testid="stSidebarNavViewButton"]'), "a 'View more' button"
    assert not driver.find_elements(By.CSS_SELECTOR, '[data-testid="stAppDeployButton"]'), "a Deploy button"
    text = driver.execute_script("return document.body.textContent")  # dataframe cells included
    assert empty_box_glyphs(text) == [], f"{driver.current_url} has characters without a font"


# Each tab of a long chapter: its first header, and whether it draws Vega-Lite charts.
TAB_CONTENT = {
    "ch03": {"mask": ("ch03.mask_header", True), "allocation": ("ch03.alloc_header", True),
             "scorers": ("ch03.scorers_header", False), "scale": ("ch03.scale_header", True)},
    "ch06": {"roles": ("ch06.heading_roles", True), "cost": ("ch06.heading_cost", True),
             "order": ("ch06.heading_order", False), "encoding": ("ch06.heading_pe", True),
             "relative": ("ch06.heading_relative", False), "scale": ("ch06.heading_scale", False)},
}
MAX_TAB_HEIGHT = 4500  # px of the longest tab: ch06 was ~7,200 px as one page


def open_tab(driver, label):
    """Click the tab with this label and wait for the rerun it starts (none if it was chosen); the visible panel."""
    from selenium.webdriver.common.by import By

    def tab():
        return next(b for b in driver.find_elements(By.CSS_SELECTOR, '[role="tab"]') if b.text.strip() == label)

    def visible_panels(d):
        return [p for p in d.find_elements(By.CSS_SELECTOR, '[role="tabpanel"]') if p.is_displayed()]

    chosen, mark = tab().get_attribute("aria-selected") == "true", rerun_mark(driver)
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", tab())
    tab().click()
    wait_for(driver, lambda d: tab().get_attribute("aria-selected") == "true" and len(visible_panels(d)) == 1,
             lambda: f"{label!r} not selected, or {len(visible_panels(driver))} tab panels visible", 30)
    wait_until_rendered(driver, after=None if chosen else mark)
    panels = visible_panels(driver)
    assert len(panels) == 1, f"{len(panels)} tab panels visible after clicking {label!r}"
    return panels[0]


def check_tab_list(driver, key, lang):
    """A long chapter shows one tab per topic, in order -> their labels."""
    from selenium.webdriver.common.by import By

    labels = [t(f"ui.tabs.{key}.{topic}", lang) for topic in TOPICS[key]]
    shown = [b.text.strip() for b in driver.find_elements(By.CSS_SELECTOR, '[role="tab"]')]
    assert shown[:len(labels)] == labels, shown
    return labels


def check_topic_tab(driver, key, topic, label, lang):
    """Open one topic tab: it opens on its own header, draws its charts, and is not as long as the old page."""
    from selenium.webdriver.common.by import By

    panel = open_tab(driver, label)
    header_key, has_charts = TAB_CONTENT[key][topic]
    headers = [h.text for h in panel.find_elements(By.CSS_SELECTOR, "h2")]
    assert headers and headers[0].startswith(t(header_key, lang)), (label, headers)
    if has_charts:
        assert panel.find_elements(By.CSS_SELECTOR, '[data-testid="stVegaLiteChart"] canvas, '
                                                    '[data-testid="stVegaLiteChart"] svg'), f"no chart in {label!r}"
    height = driver.execute_script("return arguments[0].scrollHeight", panel)
    assert height < MAX_TAB_HEIGHT, f"tab {label!r} is {height} px tall"


def check_diagram_labels_fit(driver):
    """Every box of the Graphviz diagram is at least as wide as its label (Chinese labels overflowed)."""
    overflow = driver.execute_script("""
        const out = [];
        document.querySelectorAll('[data-testid="stGraphVizChart"] svg g.node').forEach(node => {
            const shape = node.querySelector('path, polygon, ellipse');
            const text = node.querySelector('text');
            if (!shape || !text) return;
            const box = shape.getBBox(), label = text.getBBox();
            if (label.width > box.width + 1) out.push([text.textContent, label.width, box.width]);
        });
        return out;""")
    assert overflow == [], f"diagram labels wider than their boxes: {overflow}"


def test_empty_box_check_can_fail():
    """The glyph check flags emoji and U+FFFD and passes CJK, Greek and maths symbols."""
    assert empty_box_glyphs("\u2705 ok \U0001F4DD \ufffd") == ["U+1F4DD \U0001F4DD", "U+2705 \u2705", "U+FFFD \ufffd"]
    if installed_font_ranges() is not None and shutil.which("fc-list"):
        assert empty_box_glyphs("注意力 α √d · —") == []


def pytest_generate_tests(metafunc):
    """Every page in Chinese (the fonts are the fragile part) and in English."""
    if "page" in metafunc.fixturenames:
        cases = [(page, lang) for page in pages_index.existing() for lang in ("en", "zh")]
        metafunc.parametrize(("page", "lang"), cases, ids=[f"{p.key}-{lang}" for p, lang in cases])


@pytest.fixture(scope="module")
def axe_source():
    """axe-core's script (fails in CI without it), or the reason it is missing: the page visit's other checks
    still run, and the test is skipped after them."""
    try:
        return require_axe()
    except pytest.skip.Exception as missing:
        return missing


@contextlib.contextmanager
def recorded(problems, check):
    """Run a block of checks; a failure is added to `problems` under the check's name instead of ending the test."""
    try:
        yield
    except (AssertionError, pytest.fail.Exception) as failure:
        problems.append(f"{check}: {failure}")


@pytest.mark.slow
def test_the_root_url_opens_the_first_chapter_at_its_own_url(server, browsers):
    """"/" switches to the first page's URL, and the language switch works right after."""
    from selenium.webdriver.common.by import By

    first = pages_index.existing()[0]
    driver = browsers("zh")
    driver.get(f"{server}/")
    wait_until_rendered(driver)
    assert driver.current_url.rstrip("/").endswith(f"/{first.url_path}"), driver.current_url
    assert driver.find_elements(By.CSS_SELECTOR, "h1")[0].text.startswith(t("ch01.title", "zh"))
    english = driver.find_element(By.XPATH, '//*[@data-testid="stSidebar"]//label[.//p[text()="English"]]')
    english.click()
    english_title = t("ch01.title", "en")
    wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "h1")[0].text.startswith(english_title),
             lambda: f"the title stayed {driver.find_elements(By.CSS_SELECTOR, 'h1')[0].text!r}", 30)
    chinese = driver.find_element(By.XPATH, '//*[@data-testid="stSidebar"]//label[.//p[text()="中文"]]')
    chinese.click()  # back: the choice is this browser's from now on (a cookie), and its later tests read Chinese
    wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "h1")[0].text.startswith(t("ch01.title", "zh")),
             lambda: f"the title stayed {driver.find_elements(By.CSS_SELECTOR, 'h1')[0].text!r}", 30)
    wait_for(driver, lambda d: "attention_lab_lang=zh" in d.execute_script("return document.cookie"),
             lambda: f"the language cookie was not written back: {driver.execute_script('return document.cookie')!r}", 30)


def check_page_opens(driver, page, lang):
    """No error box or dialog, the page's own heading, the shell, the page's own window title, and its drawings."""
    from selenium.webdriver.common.by import By

    errors = [e.text[:300] for e in driver.find_elements(By.CSS_SELECTOR, ERROR_SELECTOR)]
    errors += [d.text[:300] for d in driver.find_elements(By.CSS_SELECTOR, '[role="dialog"]')]  # "Page not found"
    assert errors == [], f"{page.path} shows errors in {lang}: {errors}"
    heading = driver.find_elements(By.CSS_SELECTOR, "h1")[0].text
    if page.key in MY_TITLES:
        assert heading.startswith(t(MY_TITLES[page.key], lang)), heading
    sidebar = driver.find_element(By.CSS_SELECTOR, '[data-testid="stSidebar"]').text
    assert t("nav.section_course", lang) in sidebar
    check_shell(driver, lang)
    wanted = t("app.window_title", lang, page=t(page.title_key, lang))  # the browser tab's title: the page's own
    wait_for(driver, lambda d: d.title == wanted, lambda: f"title {driver.title!r}, not {wanted!r}", 30)
    if page.key == "ch07":
        check_diagram_labels_fit(driver)
    if page.key == "ch01":
        wait_for(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, '[data-testid="stVegaLiteChart"]')) >= 4,
                 "the path, cone and gradient charts should be drawn", 60)
        assert driver.find_elements(By.CSS_SELECTOR, '[data-testid="stGraphVizChart"] svg')


@pytest.mark.slow
def test_page_opens_without_errors_or_axe_violations(server, browsers, axe_source, page, lang):
    """One visit per page and language: it opens cleanly (check_page_opens) and passes its own checks as it
    opened (tests/page_checks.py: chart summaries, diagrams, heatmap labels, texts), then, with its first sliders
    moved, axe-core scans it, each topic tab of a long chapter in turn (opened and checked by check_topic_tab).
    Every failing check is reported, each named with its page."""
    driver = browsers(lang)
    driver.get(f"{server}/{page.url_path}")  # every page by its own URL, the first one too (a bookmark)
    wait_until_rendered(driver)
    full_page_screenshot(driver, SHOTS / f"{lang}_{page.key}.png")
    where = f"{page.url_path} ({lang})"
    problems = []
    with recorded(problems, f"opens without errors, {where}"):
        check_page_opens(driver, page, lang)
    close_dialogs(driver)  # an unexpected dialog (reported above) would keep the focus from the sliders
    for check, run in PAGE_CHECKS.get(page.key, ()):  # the page as it opened (tests/page_checks.py)
        with recorded(problems, f"{check}, {where}"):
            run(driver, lang)
    if isinstance(axe_source, pytest.skip.Exception):
        assert problems == [], "\n".join(problems)
        raise axe_source
    sliders = len(shown_sliders(driver))
    moved = move_widgets(driver)
    assert moved >= min(1, sliders), f"{where}: {sliders} sliders on screen, none moved"
    if page.key not in TOPICS:
        problems += page_problems(driver, axe_source, where)
    else:
        with recorded(problems, f"topic tabs, {where}"):
            labels = check_tab_list(driver, page.key, lang)
            for topic, label in zip(TOPICS[page.key], labels):
                with recorded(problems, f"topic tab {label!r}, {where}"):
                    check_topic_tab(driver, page.key, topic, label, lang)
                problems += page_problems(driver, axe_source, f"{page.url_path} tab {topic} ({lang})")
    assert problems == [], "\n".join(problems)


CHART_GEOMETRY = """
const svg = arguments[0].querySelector('svg');
if (!svg) return null;
const title = svg.querySelector('[aria-roledescription="title"]');
const lines = [...svg.querySelectorAll('[aria-roledescription="line mark"]')].map(p => {
  const b = p.getBBox(); return {height: b.height, width: b.width, stroke: p.getAttribute('stroke')}; });
const axes = [...svg.querySelectorAll('[aria-roledescription="axis"]')].map(a => ({
  label: a.getAttribute('aria-label') || '', ticks: a.querySelectorAll('text').length}));
return {title: title ? title.textContent : '', lines: lines, axes: axes,
        height: arguments[0].getBoundingClientRect().height};
"""


def chart_geometry(driver, title, timeout=90):
    """Title, line marks (bounding boxes, colours), axes and height of the drawn chart with this title."""
    from selenium.webdriver.common.by import By

    seen = []

    def drawn(d):
        seen[:] = [d.execute_script(CHART_GEOMETRY, c)
                   for c in d.find_elements(By.CSS_SELECTOR, '[data-testid="stVegaLiteChart"]')]
        return next((g for g in seen if g and g["title"] == title), None)

    return wait_for(driver, drawn, lambda: f"no chart titled {title!r}; titles: {[g and g['title'] for g in seen]}",
                    timeout)


def open_page(driver, server, key):
    """Open a page by its own URL and wait until it is drawn. (The session starts in app.py's shell, in the
    browser's language, as from the root: test_page_opens_without_errors_or_axe_violations opens every page so;
    the root's detour, one more render of chapter 1, once worked around the deep-link dialog that the deep-link
    tests now check is gone.)"""
    driver.get(f"{server}/{pages_index.get(key).url_path}")
    wait_until_rendered(driver)


def close_dialogs(driver):
    """Dismiss an open dialog (a first deep link on a fresh server may show "Page not found", which
    test_page_opens_without_errors_or_axe_violations reports); it would keep the keyboard focus from the widgets."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    if driver.find_elements(By.CSS_SELECTOR, '[role="dialog"]'):
        ActionChains(driver).send_keys(Keys.ESCAPE).perform()
        wait_for(driver, lambda d: not d.find_elements(By.CSS_SELECTOR, '[role="dialog"]'),
                 "a dialog stayed open after Escape", 10)


def press_on_slider(driver, label, key, times):
    """Focus the last slider labelled `label`, press a key `times` times, wait for the rerun; the new value."""
    from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    selector = f'[data-testid="stSlider"] input[type="range"][aria-label="{label}"]'

    def value(d):
        return d.find_elements(By.CSS_SELECTOR, selector)[-1].get_attribute("aria-valuetext")

    before = value(driver)
    for _ in range(3):  # a rerun still settling can take the focus away: try again
        close_dialogs(driver)
        mark = rerun_mark(driver)
        slider = driver.find_elements(By.CSS_SELECTOR, selector)[-1]
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'}); arguments[0].focus();", slider)
        ActionChains(driver).send_keys(*[key] * times).perform()
        try:
            WebDriverWait(driver, 10, ignored_exceptions=(StaleElementReferenceException,)).until(
                lambda d: value(d) != before)
        except TimeoutException:
            continue
        wait_until_rendered(driver, after=mark)
        return value(driver)
    active = driver.execute_script("return document.activeElement.innerText.slice(0, 200)")
    pytest.fail(f"the {label} slider did not move from {before}; the focus is on {active!r}")


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.slow
def test_ch03_gradient_chart_keeps_both_lines_and_its_axis_after_d_k_moves(server, browsers, lang):
    """A d_k move once cost the gradient chart its y axis and a line, and left the four ~60 px tall."""
    from selenium.webdriver.common.keys import Keys

    driver = browsers(lang)
    open_page(driver, server, "ch03")
    open_tab(driver, t("ui.tabs.ch03.scale", lang))  # the sqrt(d) grid is the chapter's last tab
    title = t("ch03.measure_grad_norm", lang)
    for key, times in ((None, 0), (Keys.ARROW_RIGHT, 2), (Keys.ARROW_LEFT, 5)):
        value = press_on_slider(driver, "d_k", key, times) if key else "64"
        geometry = chart_geometry(driver, title)
        lines = geometry["lines"]
        assert len(lines) == 2 and len({line["stroke"] for line in lines}) == 2, (value, geometry)
        assert max(line["height"] for line in lines) > 60, f"d_k={value}: the plot is squeezed: {geometry}"
        y_axes = [a for a in geometry["axes"] if a["label"].startswith("Y")]
        assert y_axes and y_axes[0]["ticks"] >= 3, f"d_k={value}: no y axis: {geometry}"
        assert geometry["height"] >= 250, geometry


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.slow
def test_bottleneck_tables_fit_the_page_and_the_copy_task_draws_both_models(server, browsers, lang):
    from selenium.webdriver.common.by import By

    driver = browsers(lang)
    open_page(driver, server, "demo_bottleneck")
    tables = wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="stTable"]'),  # the examples
                      "the example sentences should be a table that wraps (a dataframe ran off the right)", 60)
    wait_until_rendered(driver)
    tables = driver.find_elements(By.CSS_SELECTOR, '[data-testid="stTable"]')
    page_right = driver.find_element(By.CSS_SELECTOR, '[data-testid="stMainBlockContainer"]').rect
    for table in tables:
        scroll, client = driver.execute_script("return [arguments[0].scrollWidth, arguments[0].clientWidth]", table)
        right = table.rect["x"] + table.rect["width"]
        assert scroll <= client + 1 and right <= page_right["x"] + page_right["width"] + 1, (
            f"a table is cut off on the right ({scroll} > {client} px): {table.text[:80]}")
    for measure in ("token_acc", "seq_acc"):
        geometry = chart_geometry(driver, t(f"demos.bottleneck.synthetic.{measure}", lang))
        assert len(geometry["lines"]) == 2 and len({line["stroke"] for line in geometry["lines"]}) == 2, geometry


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.slow
def test_translate_page_switches_to_beam_search_and_says_how_it_decoded(server, browsers, lang):
    """Translate: the plain words on the models and the example picker are shown; choosing beam search
    re-translates without an error and names the length penalty it used."""
    from selenium.webdriver.common.by import By

    if not (ROOT / "checkpoints" / "transformer.pt").is_file():
        pytest.skip("no shipped checkpoints")
    driver = browsers(lang)
    driver.set_window_size(1400, 1000)
    driver.get(f"{server}/{pages_index.get('demo_translate').url_path}")
    wait_until_rendered(driver)
    main = driver.find_element(By.CSS_SELECTOR, '[data-testid="stMain"]')
    assert t("demos.translate.about", lang).split("**")[1] in main.text  # the bold lead-in of the note
    assert t("demos.common.examples_label", lang) in main.text
    beam = t("demos.translate.decoding.beam", lang)
    label = next(e for e in main.find_elements(By.CSS_SELECTOR, '[data-testid="stRadio"] label') if e.text == beam)
    # A script click: the deep-link "Page not found" dialog (see test_page_opens_without_errors_or_axe_violations) may cover it.
    driver.execute_script("arguments[0].click();", label)
    wait_for_text(driver, "α = ")  # the beam's decoding note names its length penalty
    errors = [e.text[:300] for e in driver.find_elements(By.CSS_SELECTOR, ERROR_SELECTOR)]
    assert errors == []


def type_sentence(driver, label, sentence, shown):
    """Replace the text in the input labelled `label`, press Enter and wait until `shown(driver)` holds
    (the rerun with the new sentence has shown it), then until Streamlit is idle."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    close_dialogs(driver)
    box = driver.find_element(By.CSS_SELECTOR, f'[data-testid="stTextInput"] input[aria-label="{label}"]')
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", box)
    box.click()
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(Keys.DELETE)
    box.send_keys(sentence, Keys.ENTER)
    wait_for(driver, shown, f"the page did not show the translation of {sentence!r}", 120)
    wait_until_rendered(driver)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.slow
def test_translate_page_shows_word_pieces_and_names_an_unreadable_word(server, browsers, lang):
    """The shipped models read English in BPE pieces; the page shows them (with `##`) for a rare
    word, and names a word holding a character the model never saw, after the learner types them."""
    from selenium.webdriver.common.by import By

    if not (ROOT / "checkpoints" / "transformer.pt").is_file():
        pytest.skip("no shipped checkpoints")
    driver = browsers(lang)
    driver.set_window_size(1400, 1000)
    open_page(driver, server, "demo_translate")
    label = t("demos.common.sentence_label", lang)
    # The pieces note lists what the model read; the common words are whole pieces. Wait for the note
    # itself: "cat sat on the mat" alone is already on the page (the intro quotes the course's example).
    lead = t("demos.common.pieces_note", lang, tokens="X").split("X")[0].strip()
    type_sentence(driver, label, "The zorblaxian cat sat on the mat.",
                  lambda d: lead in main_text(d) and "##" in main_text(d))
    main = driver.find_element(By.CSS_SELECTOR, '[data-testid="stMain"]')
    assert lead in main.text and "##" in main.text, main.text[:2000]
    assert driver.find_elements(By.CSS_SELECTOR, ERROR_SELECTOR) == []
    full_page_screenshot(driver, SHOTS / f"{lang}_demo_translate_pieces.png")
    def warnings(d):
        return " ".join(e.text for e in d.find_elements(By.CSS_SELECTOR, '[data-testid="stAlert"]'))

    type_sentence(driver, label, "I like ☃ tea.", lambda d: "☃" in warnings(d))
    assert "☃" in warnings(driver), warnings(driver)
    assert driver.find_elements(By.CSS_SELECTOR, ERROR_SELECTOR) == []
    full_page_screenshot(driver, SHOTS / f"{lang}_demo_translate_unknown.png")


@pytest.mark.slow
def test_the_widget_mover_moves_every_slider_it_counts(server, browsers):
    """move_widgets (the accessibility scan's "after moving widgets") finds the sliders Streamlit draws over
    hidden range inputs and moves each: chapter 5's shape tracer has five on screen."""
    driver = browsers("en")
    open_page(driver, server, "ch05")
    sliders = shown_sliders(driver)
    assert len(sliders) >= 5, len(sliders)
    before = [driver.execute_script("return arguments[0].value", s) for s in sliders[:3]]
    assert move_widgets(driver) == 3
    after = [driver.execute_script("return arguments[0].value", s) for s in shown_sliders(driver)[:3]]
    assert all(float(a) > float(b) for a, b in zip(after, before)), (before, after)
