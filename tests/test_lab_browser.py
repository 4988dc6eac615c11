"""The training lab in headless Chromium at 1400x1000, in both languages: move its widgets (task, variant,
step scrubber, attention kind, layer, head), check the charts are drawn with their titles clear of the axes,
then train a live run end to end (progress bar, then its curve and caption). Screenshots under
artifacts/screenshots/lab_*.png. Waits on conditions only."""


import pytest

from course.common import pages_index
from course.common.i18n import t
from course.lessons import training_lab
from tests.browser_support import (ERROR_SELECTOR, SHOTS, full_page_screenshot, main_text, rerun_mark, wait_for,
                                   wait_for_text, wait_until_rendered)

pytestmark = [pytest.mark.timeout(900), pytest.mark.slow,
              pytest.mark.skipif(not training_lab.RESULTS.is_file(), reason="no shipped results file")]

# Every chart's title box, its axis titles' boxes and its own box: a title must be inside the drawing and
# clear of the axis titles (a long vertical axis title once pushed the loss chart's title out of sight).
TITLES = """
return [...document.querySelectorAll('[data-testid="stVegaLiteChart"] svg')].map(svg => {
  const box = e => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
  const title = svg.querySelector('[aria-roledescription="title"] text');
  const axes = [...svg.querySelectorAll('[aria-roledescription="axis"] .role-axis-title text')].map(box);
  return {title: title ? title.textContent : '', box: title ? box(title) : null, axes: axes, svg: box(svg)};
});
"""


def overlaps(a, b):
    """True when two [left, top, right, bottom] boxes intersect."""
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def click_label(driver, text, within='[data-testid="stMain"]', index=-1):
    """Click the radio label showing exactly `text` (the index-th of several) and wait for the rerun."""
    from selenium.webdriver.common.by import By

    label = wait_for(driver, lambda d: [e for e in d.find_elements(By.CSS_SELECTOR, f"{within} label")
                                        if e.text.strip() == text], f"no label {text!r}", 60)[index]
    chosen = driver.execute_script("const i = arguments[0].querySelector('input'); return !!(i && i.checked);", label)
    mark = rerun_mark(driver)
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'}); arguments[0].click();", label)
    wait_until_rendered(driver, after=None if chosen else mark)  # a click on the chosen option changes nothing


def choose_option(driver, widget_label, option):
    """Pick `option` in the select box labelled `widget_label` (its input shows the chosen value)."""
    from selenium.webdriver.common.by import By

    selector = f'[data-testid="stSelectbox"] input[aria-label="{widget_label}"]'
    box = driver.find_element(By.CSS_SELECTOR, selector)
    chosen, mark = box.get_attribute("value") == option, rerun_mark(driver)
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", box)
    box.click()
    item = wait_for(driver, lambda d: [o for o in d.find_elements(By.CSS_SELECTOR, '[role="option"]')
                                       if o.text.strip() == option], f"no option {option!r}", 30)[0]
    item.click()
    wait_for(driver, lambda d: d.find_element(By.CSS_SELECTOR, selector).get_attribute("value") == option,
             lambda: f"{option!r} not chosen", 30)
    wait_until_rendered(driver, after=None if chosen else mark)


def scrub_to_end(driver, label):
    """Move the step scrubber (a select slider) to its last value with the End key; the value shown."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    selector = f'[data-testid="stSlider"] input[type="range"][aria-label="{label}"]'
    slider = wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, selector), f"no slider {label!r}", 30)[-1]
    before, mark = slider.get_attribute("aria-valuetext"), rerun_mark(driver)
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'}); arguments[0].focus();", slider)
    ActionChains(driver).send_keys(Keys.END).perform()
    wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, selector)[-1].get_attribute("aria-valuetext") != before,
             f"the {label} slider did not move from {before}", 30)
    wait_until_rendered(driver, after=mark)
    return driver.find_elements(By.CSS_SELECTOR, selector)[-1].get_attribute("aria-valuetext")


def chart_titles(driver, wanted):
    """Wait until charts with every title in `wanted` are drawn; check no title overlaps an axis title."""
    found = {}

    def drawn(d):
        found.clear()
        found.update({c["title"]: c for c in d.execute_script(TITLES)})
        return all(w in found for w in wanted)

    wait_for(driver, drawn, lambda: f"charts {wanted} not all drawn; drawn: {list(found)}", 90)
    for title in wanted:
        chart = found[title]
        hit = [a for a in chart["axes"] if overlaps(chart["box"], a)]
        assert not hit, f"the title {title!r} overlaps an axis title: {chart}"
        inside = chart["svg"][1] - 5 <= chart["box"][1] and chart["box"][3] <= chart["svg"][3]  # 5 px: the font's ascent
        assert inside, f"the title {title!r} is drawn outside its chart: {chart}"


def no_errors(driver):
    from selenium.webdriver.common.by import By

    errors = [e.text for e in driver.find_elements(By.CSS_SELECTOR, ERROR_SELECTOR)]
    assert errors == [], errors


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_lab_moves_its_widgets_and_trains_live(server, browsers, lang):
    from selenium.webdriver.common.by import By

    driver = browsers(lang)
    driver.set_window_size(1400, 1000)
    driver.get(f"{server}/")
    wait_until_rendered(driver)
    driver.get(f"{server}/{pages_index.get('lab').url_path}")
    wait_for_text(driver, t("lab.title", lang))
    no_errors(driver)
    click_label(driver, t("lab.tasks.copy", lang))
    choose_option(driver, t("lab.variant_label", lang), t("lab.variants.no_residual", lang))
    wait_for_text(driver, t("lab.ablations.no_residual.claim", lang))
    chart_titles(driver, [t("lab.chart.loss", lang), t("lab.chart.seq_acc", lang)])
    click_label(driver, t("lab.maps.kinds.cross", lang))
    click_label(driver, "2", index=0)  # layer 2 (the seeds are 0 and 1, so the first "2" is the layer's)
    click_label(driver, "4")  # head 4
    last = str(training_lab.find_run(training_lab.load_results(), "copy", "baseline", 0)["snapshots"][-1]["step"])
    assert scrub_to_end(driver, t("lab.maps.step_label", lang)) == last
    wait_for_text(driver, t("lab.maps.output", lang, step=last, output="", target="").split(last)[0] + last)
    chart_titles(driver, [t("lab.maps.title", lang, variant=t("lab.variants.no_residual", lang))])
    no_errors(driver)
    full_page_screenshot(driver, SHOTS / f"lab_{lang}_moved.png")

    button = next(b for b in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stMain"] button')
                  if b.text.startswith(t("lab.train_button", lang, variant=t("lab.variants.no_residual", lang), seed=0)))
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'}); arguments[0].click();", button)
    wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="stProgress"]'), "no progress bar", 120)
    done = t("lab.live_caption", lang, variant=t("lab.variants.no_residual", lang), steps=training_lab.LabConfig.steps,
             seconds="", acc="").split(str(training_lab.LabConfig.steps))[0]
    wait_for(driver, lambda d: done in main_text(d), lambda: f"no live caption; the page shows:\n{main_text(driver)[-1500:]}",
             600)
    wait_until_rendered(driver)
    live = t("lab.variants.no_residual", lang) + t("lab.live_mark", lang)
    wait_for(driver, lambda d: live in d.execute_script("return document.body.textContent"),
             f"no {live!r} series in the legend", 60)
    no_errors(driver)
    full_page_screenshot(driver, SHOTS / f"lab_{lang}_trained.png")
