"""Every chart's text alternative in Chromium, and Streamlit's own words in Chinese on zh pages.

Each drawn Vega-Lite chart is followed by its one-sentence summary (also the chart's accessible name) and an
expander with its numbers as a table (checked on every page in tests/test_browser.py's page visit:
tests/page_checks.py), which the keyboard reaches with Tab and opens with Enter (here).
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
