"""Chapters 8 and 10's experiments in headless Chromium at 1400x1000, in both languages: move the widgets
with the keyboard, wait for the metrics the lessons compute, no error box, and a full-page screenshot each
(artifacts/screenshots/<lang>_<page>_experiment.png)."""


import pytest

from course.common.i18n import t
from course.lessons import ch08, ch10
from tests.browser_support import (ERROR_SELECTOR, SHOTS, full_page_screenshot, wait_for,
                                   wait_until_rendered)
from tests.test_browser import open_page, press_on_slider

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]  # Chromium


def metric_value(driver, label):
    """The value of the metric labelled `label`, or None while it is not drawn."""
    from selenium.webdriver.common.by import By

    for box in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stMetric"]'):
        shown = box.find_elements(By.CSS_SELECTOR, '[data-testid="stMetricLabel"]')
        if shown and shown[0].text.strip() == label:
            return box.find_element(By.CSS_SELECTOR, '[data-testid="stMetricValue"]').text.strip()
    return None


def wait_for_metric(driver, label, value):
    wait_for(driver, lambda d: metric_value(d, label) == value,
             lambda: f"metric {label!r} shows {metric_value(driver, label)!r}, expected {value!r}", 60)


def no_errors(driver):
    from selenium.webdriver.common.by import By

    return [e.text[:300] for e in driver.find_elements(By.CSS_SELECTOR, ERROR_SELECTOR)]


def click_option(driver, text):
    """Click the radio option whose label is `text`."""
    from selenium.webdriver.common.by import By

    option = driver.find_element(By.XPATH, f'//*[@data-testid="stRadio"]//label[.//p[text()="{text}"]]')
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", option)
    option.click()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ch08_masks_follow_the_keyboard(server, browsers, lang):
    from selenium.webdriver.common.keys import Keys

    driver = browsers(lang)
    open_page(driver, server, "ch08")
    wait_for_metric(driver, t("ch08.local.kept", lang), "22 / 64")  # D = 1 at first
    assert press_on_slider(driver, t("ch08.local.half_width", lang), Keys.ARROW_RIGHT, 1) == "2"
    wait_for_metric(driver, t("ch08.local.kept", lang), f"{ch08.local_stats('window', 2, False, 2)['kept']} / 64")
    assert press_on_slider(driver, t("ch08.local.layers", lang), Keys.ARROW_RIGHT, 1) == "3"
    wait_for_metric(driver, t("ch08.local.read", lang, layers=3), "7 / 8")
    click_option(driver, t("ch08.local.kind_graph", lang))
    wait_for_metric(driver, t("ch08.local.settle", lang), str(ch08.layers_to_settle(ch08.local_mask("graph"))))
    wait_until_rendered(driver)
    assert no_errors(driver) == []
    full_page_screenshot(driver, SHOTS / f"{lang}_ch08_experiment.png")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ch10_positions_follow_the_keyboard(server, browsers, lang):
    from selenium.webdriver.common.keys import Keys

    driver = browsers(lang)
    open_page(driver, server, "ch10")
    spread = t("ch10.rope.spread", lang)
    wait_for_metric(driver, spread, f"{ch10.diagonal_spread(ch10.position_scores('rotary', 16)):.3g}")
    assert press_on_slider(driver, t("ch10.rope.shift", lang), Keys.ARROW_RIGHT, 5) == "5"
    click_option(driver, t("ch10.rope.scheme_absolute", lang))
    wait_for_metric(driver, t("ch10.rope.change", lang, shift=5), f"{ch10.shift_change('absolute', 16, 5):.3g}")
    wait_for_metric(driver, spread, f"{ch10.diagonal_spread(ch10.position_scores('absolute', 16, 5)):.3g}")
    wait_until_rendered(driver)
    assert no_errors(driver) == []
    full_page_screenshot(driver, SHOTS / f"{lang}_ch10_experiment.png")
