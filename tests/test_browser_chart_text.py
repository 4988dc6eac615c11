"""Every chart's text alternative in Chromium, and Streamlit's own words in Chinese on zh pages.

Each drawn Vega-Lite chart is followed by its one-sentence summary and an expander with its numbers as a table, and
named by its title and where its summary is (checked on every page in tests/test_browser.py's page visit:
tests/page_checks.py); here: the keyboard reaches the table with Tab and opens it with Enter, and a chart that
follows a slider is updated in place.
"""


import pytest

from course.common.i18n import t
from tests.browser_support import main_text, rerun_mark, wait_for, wait_until_rendered
from tests.page_checks import drawn_charts
from tests.test_browser import close_dialogs, open_page

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # Chromium


# The last element the keyboard reaches before arguments[0] (in document order), focused.
FOCUS_BEFORE_JS = """
const target = arguments[0];
const stops = [...document.querySelectorAll('a[href], button, input, select, textarea, summary, [tabindex]')]
  .filter(e => e.tabIndex >= 0 && e.checkVisibility() && !e.disabled
          && (e.compareDocumentPosition(target) & Node.DOCUMENT_POSITION_FOLLOWING));
const before = stops[stops.length - 1];
before.scrollIntoView({block: 'center'});
before.focus();
return before.tagName;
"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_charts_table_opens_from_the_keyboard(server, browsers, lang):
    """Tab reaches the expander under a chart, Enter opens it, and the table shows the chart's numbers."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    driver = browsers(lang)
    open_page(driver, server, "ch04")
    close_dialogs(driver)
    drawn_charts(driver)
    prefix = t("charts.table", lang, title="").strip()
    summaries = [s for s in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stExpander"] summary')
                 if prefix in s.text]
    target = summaries[0]
    driver.execute_script(FOCUS_BEFORE_JS, target)
    for _ in range(10):
        ActionChains(driver).send_keys(Keys.TAB).perform()
        if driver.execute_script("return document.activeElement === arguments[0]", target):
            break
    else:
        pytest.fail(f"Tab did not reach {target.text!r}")
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    expander = target.find_element(By.XPATH, "./ancestor::*[@data-testid='stExpander'][1]")

    def table(d):
        """The table's cells once the expander has finished opening (every cell shown, with its text)."""
        found = expander.find_elements(By.CSS_SELECTOR, '[data-testid="stTable"] td')
        return found if len(found) >= 2 and all(c.is_displayed() and c.text for c in found) else None

    wait_for(driver, table, lambda: "Enter did not open the table, or some of its cells stayed empty: "
             f"{[c.text for c in expander.find_elements(By.CSS_SELECTOR, '[data-testid=stTable] td')]}")


@pytest.mark.parametrize("page_key", ["practice"])
def test_streamlit_words_are_chinese_on_zh_pages_and_stay_so(server, browsers, page_key):
    """The uploader's button and size line, its input's name and the heading links' names, in Chinese;
    still so after another page was shown in between (Streamlit draws them anew)."""
    from selenium.webdriver.common.by import By

    driver = browsers("zh")
    open_page(driver, server, page_key)
    close_dialogs(driver)
    english = ("Upload", "Browse files", "Drag and drop", "per file", "Link to heading", "file upload")

    def chinese(d):
        box = d.find_elements(By.CSS_SELECTOR, '[data-testid="stFileUploader"]')
        if not box:
            return None
        names = d.execute_script("return [...document.querySelectorAll('a[aria-label], "
                                 "[data-testid=\"stFileUploaderDropzoneInput\"]')].map(e => e.getAttribute("
                                 "'aria-label'))")
        shown = box[0].text + "\n" + "\n".join(names)
        return shown if not any(word in shown for word in english) else None

    for _ in range(2):
        shown = wait_for(driver, chinese, lambda: f"English left on the page: {main_text(driver)[:1500]}", 30)
        assert t("app.streamlit.upload", "zh") in shown
        assert t("app.streamlit.per_file", "zh", size="1MB") in shown
        assert t("app.streamlit.heading_link", "zh") in shown and t("app.streamlit.file_input", "zh") in shown
        link = driver.find_element(By.XPATH, f'//*[@data-testid="stSidebar"]//a[.//*[text()="{t("nav.ch01", "zh")}"]]')
        mark = rerun_mark(driver)
        link.click()
        wait_for(driver, lambda d: not d.find_elements(By.CSS_SELECTOR, '[data-testid="stFileUploader"]'), "ch01")
        wait_until_rendered(driver, after=mark)
        back = driver.find_element(By.XPATH, f'//*[@data-testid="stSidebar"]//a[.//*[text()="{t("nav.practice", "zh")}"]]')
        mark = rerun_mark(driver)
        back.click()
        wait_until_rendered(driver, after=mark)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_temperature_bars_at_their_coldest_name_every_bar_that_shares_the_lowest_weight(server, browsers, lang):
    """Chapter 3's temperature slider at 0.1: four scores get weight 0 (to three decimals); the sentence under
    the bars names all four as the lowest (it named the first drawn, +1.0, above the real lowest, -2.0)."""
    from selenium.webdriver.common.keys import Keys

    from tests.browser_support import slider_to_end
    from tests.test_browser import open_tab

    driver = browsers(lang)
    open_page(driver, server, "ch03")
    close_dialogs(driver)
    open_tab(driver, t("ui.tabs.ch03.allocation", lang))
    assert slider_to_end(driver, t("ch03.temp_label", lang), Keys.HOME) == "0.10"
    lowest = ("+1.0, +0.2, -0.5, -2.0 (0)" if lang == "en" else "+1.0、+0.2、-0.5、-2.0（0）")
    wait_for(driver, lambda d: lowest in main_text(d), lambda: f"no {lowest!r} under the bars")


# Each chart's drawing (Vega's canvas or svg element), tagged when arguments[0] is true; then for each
# chart: its tag ("" for one drawn anew since) and its summary's text.
TAG_CHARTS_JS = """
return [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')].filter(c => c.checkVisibility()).map((c, i) => {
  const drawn = c.querySelector('canvas, svg');
  if (arguments[0]) drawn.dataset.before = 'chart' + i;
  let box = c;
  while (box.parentElement && box.parentElement.children.length < 3) box = box.parentElement;
  const caption = box.nextElementSibling && box.nextElementSibling.querySelector('[data-testid="stCaptionContainer"]');
  return {tag: drawn.dataset.before || '', caption: caption ? caption.innerText : null};
});
"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_charts_that_follow_a_slider_are_updated_in_place(server, browsers, lang):
    """Chapter 2's kernel width w changes the fit's curves and the 50 x 50 weights: both charts keep their drawing
    (the browser swaps their data, it does not draw them anew, which took about 0.2 s a move for the weights),
    while their summaries follow w."""
    from selenium.webdriver.common.keys import Keys

    from tests.axe_support import shown_sliders
    from tests.browser_support import wait_for_rerun_if_any

    driver = browsers(lang)
    open_page(driver, server, "ch02")
    close_dialogs(driver)
    drawn_charts(driver)
    before = driver.execute_script(TAG_CHARTS_JS, True)
    assert len(before) == 2 and [c["tag"] for c in before] == ["chart0", "chart1"], before
    slider = shown_sliders(driver)[0]
    value = slider.get_attribute("aria-valuenow") or slider.get_attribute("value")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'}); arguments[0].focus();", slider)
    mark = rerun_mark(driver)
    slider.send_keys(Keys.ARROW_RIGHT)
    wait_for_rerun_if_any(driver, mark)
    assert (slider.get_attribute("aria-valuenow") or slider.get_attribute("value")) != value, "w did not move"

    def summaries_followed(d):
        now = d.execute_script(TAG_CHARTS_JS, False)
        return now if all(a["caption"] != b["caption"] for a, b in zip(before, now)) else None

    after = wait_for(driver, summaries_followed, lambda: "a summary did not follow w")
    assert [c["tag"] for c in after] == ["chart0", "chart1"], f"a chart was drawn anew: {after}"
