"""In Chromium, both languages: chapter 6 at its smallest width, deep links on a fresh server, the Translate
step chart with repeated words, the decoder's keys in Transformer inside, and state a learner set kept
across pages and reloads. Screenshots go to artifacts/screenshots/ (see tests/browser_support.py).
"""

import os

import pytest

from course.common import pages_index
from course.common.i18n import t
from tests.browser_support import (ERROR_SELECTOR, ROOT, SHOTS, full_page_screenshot, main_text, require_browser, shown_text,
                                   rerun_mark, running_app, wait_for, wait_for_text, wait_until_rendered)
from tests.test_browser import open_page, open_tab, press_on_slider, recorded, type_sentence

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # Chromium
NEEDS_MODELS = pytest.mark.skipif(not (ROOT / "checkpoints" / "transformer.pt").is_file(),
                                  reason="no shipped checkpoints")
DEEP_LINKS = ("demo_translate", "demo_bottleneck", "demo_inside", "demo_mine", "ch03", "notes")


def errors_on(driver):
    """Exception and error boxes on the page, and any dialog (the "Page not found" modal), as text."""
    from selenium.webdriver.common.by import By

    found = [e.text[:300] for e in driver.find_elements(By.CSS_SELECTOR, ERROR_SELECTOR)]
    return found + [d.text[:300] for d in driver.find_elements(By.CSS_SELECTOR, '[role="dialog"]')]


def heading(driver):
    """The page's first h1 text ('' while there is none)."""
    from selenium.webdriver.common.by import By

    found = driver.find_elements(By.CSS_SELECTOR, "h1")
    return found[0].text if found else ""


def go_by_sidebar(driver, key):
    """Click the page's entry in the sidebar menu (a page switch in the same session) and wait for it."""
    from selenium.webdriver.common.by import By

    url_path = pages_index.get(key).url_path
    link = driver.find_element(By.CSS_SELECTOR, f'[data-testid="stSidebarNav"] a[href$="/{url_path}"]')
    mark = rerun_mark(driver)
    driver.execute_script("arguments[0].click();", link)
    wait_for(driver, lambda d: d.current_url.rstrip("/").endswith(f"/{url_path}"), f"{key} did not open", 60)
    wait_until_rendered(driver, after=mark)


def sidebar(driver):
    """The sidebar's text."""
    return shown_text(driver, '[data-testid="stSidebar"]') or ""


def click_radio(driver, text):
    """Click the radio option showing `text` in the main area; the caller waits for what it changes."""
    from selenium.webdriver.common.by import By

    def option(d):
        labels = d.find_elements(By.CSS_SELECTOR, '[data-testid="stMain"] [data-testid="stRadio"] label')
        return next((e for e in labels if e.text.strip() == text), None)

    def shown():
        return [e.text for e in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stRadio"] label')]

    option = wait_for(driver, option, lambda: f"no radio option {text!r}; options: {shown()}", 120)
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'}); arguments[0].click();", option)


AXIS_LABELS = """
const svg = arguments[0].querySelector('svg');
if (!svg) return null;
const axes = {};
svg.querySelectorAll('[aria-roledescription="axis"]').forEach(a => {
  const name = (a.getAttribute('aria-label') || '').slice(0, 1);
  axes[name] = {label: a.getAttribute('aria-label') || '',
                texts: [...a.querySelectorAll('.role-axis-label text')].map(x => x.textContent)}; });
return {x_title: (axes['X'] || {}).label || '', x: (axes['X'] || {}).texts || [], y: (axes['Y'] || {}).texts || [],
        bars: svg.querySelectorAll('.mark-rect.role-mark path').length};
"""


def chart_by_x_title(driver, x_title, ready, message):
    """{x, y: axis labels, bars: rect marks} of the drawn chart whose x axis is titled `x_title`, once `ready(it)`."""
    from selenium.webdriver.common.by import By

    seen = []

    def drawn(d):
        seen[:] = [d.execute_script(AXIS_LABELS, c) for c in d.find_elements(By.CSS_SELECTOR, '[data-testid="stVegaLiteChart"]')]
        return next((g for g in seen if g and g["x_title"].startswith(f"X-axis titled '{x_title}'") and ready(g)), None)

    return wait_for(driver, drawn, lambda: f"{message}; drawn: {seen}", 90)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_positional_encoding_at_its_smallest_width_names_the_columns_it_sets_aside(server, browsers, lang):
    """num_hiddens at 4 once raised IndexError in the period table and dropped the curve columns 8 and 20."""
    from selenium.webdriver.common.keys import Keys

    driver = browsers(lang)
    open_page(driver, server, "ch06")
    open_tab(driver, t("ui.tabs.ch06.encoding", lang))
    assert press_on_slider(driver, t("ch06.hiddens_label", lang), Keys.HOME, 1) == "4"
    note = t("ch06.columns_aside", lang, columns="8, 20", d=4, last=3)
    wait_for_text(driver, note)
    assert errors_on(driver) == []
    full_page_screenshot(driver, SHOTS / f"{lang}_ch06_smallest_width.png")
    assert press_on_slider(driver, t("ch06.hiddens_label", lang), Keys.END, 1) == "128"
    wait_for(driver, lambda d: note not in main_text(d) and "P[:, 20]" in main_text(d),
             "columns 8 and 20 did not come back at num_hiddens = 128", 60)
    assert errors_on(driver) == []


def test_deep_links_opened_first_on_a_fresh_server_show_their_pages_and_no_dialog(browsers, tmp_path):
    """Right after a server start the first visit to a page's URL once got a "Page not found" modal. The
    English and the Chinese browser open the pages' URLs, each in a window of its own, all at the same moment,
    before the server ran any page: every visit is its page's first (one server start for all of them). The
    pages alternate between the two browsers, so each is opened once and both languages open half of them
    (opening each page in both languages took twice the time on 2 cores; test_browser visits every page in both).
    Each page also gets app.py's shell (the menu and the language switch: a bookmark opened first once had
    neither). Every page that fails is reported, with its language."""
    require_browser()
    models = (ROOT / "checkpoints" / "transformer.pt").is_file()
    keys = [key for key in DEEP_LINKS if models or not key.startswith("demo_")]  # demos need the checkpoints
    with running_app(dict(os.environ, ATTENTION_LAB_HOME=str(tmp_path))) as url:
        drivers = {lang: browsers(lang) for lang in ("en", "zh")}
        windows = {}
        for n, (lang, driver) in enumerate(drivers.items()):
            driver.get("about:blank")
            for i, key in enumerate(keys[n::2]):
                if i:
                    driver.switch_to.new_window("window")
                windows[lang, key] = driver.current_window_handle
        for (lang, key), handle in windows.items():  # a navigation that does not wait: all visits start at once
            drivers[lang].switch_to.window(handle)
            drivers[lang].execute_script("window.location.href = arguments[0];",
                                         f"{url}/{pages_index.get(key).url_path}")
        problems = []
        for (lang, key), handle in windows.items():
            driver, page = drivers[lang], pages_index.get(key)
            driver.switch_to.window(handle)
            with recorded(problems, f"{page.url_path} ({lang})"):
                wait_until_rendered(driver)
                title = t(page.title_key, lang)
                wait_for(driver, lambda d: heading(d) != "", f"no title ({lang})", 60)
                assert driver.current_url.rstrip("/").endswith(f"/{page.url_path}"), (lang, driver.current_url)
                assert errors_on(driver) == [], f"{page.url_path} ({lang}): {errors_on(driver)}"
                assert title in driver.execute_script("return document.body.innerText"), (lang, title)
                shell = (t("nav.section_course", lang), t("app.language", lang))
                wait_for(driver, lambda d: all(text in sidebar(d) for text in shell),
                         lambda: f"no menu or language switch in the sidebar: {sidebar(driver)}", 60)
        for (lang, key), handle in windows.items():  # the browsers' later tests use their first window
            if handle != drivers[lang].window_handles[0]:
                drivers[lang].switch_to.window(handle)
                drivers[lang].close()
        for driver in drivers.values():
            driver.switch_to.window(driver.window_handles[0])
    assert problems == [], "\n".join(problems)


@NEEDS_MODELS
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_translate_step_chart_keeps_a_bar_for_each_repeated_word(server, browsers, lang):
    """"the" three times: three bars, each labelled "the" (they were stacked into one)."""
    from selenium.webdriver.common.by import By

    driver = browsers(lang)
    open_page(driver, server, "demo_translate")
    click_radio(driver, t("demos.models.bahdanau", lang))
    sentence = "the cat and the dog and the bird."
    def three_the(d):
        charts = d.find_elements(By.CSS_SELECTOR, '[data-testid="stVegaLiteChart"]')
        return any(g and g["x"].count("the") == 3 for g in (d.execute_script(AXIS_LABELS, c) for c in charts))

    type_sentence(driver, t("demos.common.sentence_label", lang), sentence, three_the)
    chart = chart_by_x_title(driver, t("demos.translate.col_word", lang), lambda g: g["x"].count("the") == 3,
                             "the step chart did not label three bars 'the'")
    assert chart["bars"] == len(chart["x"]) >= 9, chart
    assert chart["x"][:9] == sentence.replace(".", " .").split(), chart
    assert errors_on(driver) == []
    full_page_screenshot(driver, SHOTS / f"{lang}_demo_translate_repeated_words.png")


@NEEDS_MODELS
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_transformer_inside_labels_the_decoders_keys_by_its_inputs(server, browsers, lang):
    driver = browsers(lang)
    open_page(driver, server, "demo_inside")
    click_radio(driver, t("demos.inside.kinds.decoder", lang))
    chart = chart_by_x_title(driver, t("demos.inside.key_title", lang), lambda g: g["x"][:1] == ["<bos>"],
                             "the decoder's keys do not start with <bos>")
    assert "<eos>" not in chart["x"] and chart["y"][-1] == "<eos>", chart
    assert len(chart["x"]) == len(chart["y"]), chart
    assert errors_on(driver) == []


@NEEDS_MODELS
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_typed_sentence_and_a_chosen_tab_survive_another_page(server, browsers, lang):
    from selenium.webdriver.common.by import By

    driver = browsers(lang)
    open_page(driver, server, "demo_translate")
    label = t("demos.common.sentence_label", lang)
    box = f'[data-testid="stTextInput"] input[aria-label="{label}"]'
    wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, box), "no sentence box", 120)
    type_sentence(driver, label, "the dog runs.",
                  lambda d: d.find_element(By.CSS_SELECTOR, box).get_attribute("value") == "the dog runs.")
    go_by_sidebar(driver, "notes")
    go_by_sidebar(driver, "demo_translate")
    wait_for(driver, lambda d: d.find_element(By.CSS_SELECTOR, box).get_attribute("value") == "the dog runs.",
             lambda: f"the box shows {driver.find_element(By.CSS_SELECTOR, box).get_attribute('value')!r}", 60)

    for key, topic in (("ch03", "scorers"), ("ch06", "encoding")):
        go_by_sidebar(driver, key)
        chosen = t(f"ui.tabs.{key}.{topic}", lang)
        open_tab(driver, chosen)
        go_by_sidebar(driver, "notes")
        go_by_sidebar(driver, key)

        def selected(d):
            return [b.text.strip() for b in d.find_elements(By.CSS_SELECTOR, '[role="tab"][aria-selected="true"]')]

        wait_for(driver, lambda d: selected(d) == [chosen], lambda: f"{key} reopened on {selected(driver)}", 60)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_language_chosen_survives_a_reload(server, browsers, lang):
    """The browser's locale is `lang`; the learner picks the other language; a reload keeps it. (On the notes
    page, the lightest: each switch and reload draws the page again.)"""
    from selenium.webdriver.common.by import By

    other = "zh" if lang == "en" else "en"
    driver = browsers(lang)
    open_page(driver, server, "notes")
    assert heading(driver).startswith(t("notes.title", lang))
    names = {"zh": "中文", "en": "English"}
    for chosen in (other, lang):  # there, then back: the browser's later tests read its own language
        switch = f'//*[@data-testid="stSidebar"]//label[.//p[text()="{names[chosen]}"]]'
        wait_for(driver, lambda d: d.find_elements(By.XPATH, switch), f"no {names[chosen]} switch in the sidebar", 60)[0].click()
        wait_for(driver, lambda d: heading(d).startswith(t("notes.title", chosen)), "the switch did not apply", 30)
        driver.refresh()
        wait_until_rendered(driver)
        wait_for(driver, lambda d: heading(d).startswith(t("notes.title", chosen)),
                 lambda: f"after a reload the title is {heading(driver)!r}, not in {chosen}", 60)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_footer_link_opens_its_own_exercise_on_practice(server, browsers, lang):
    """ch02's footer opens ex02; then ch04's footer must open ex04, not the ex02 chosen before."""
    from selenium.webdriver.common.by import By

    driver = browsers(lang)
    open_page(driver, server, "ch02")

    def chosen_exercise(d):
        shown = d.find_elements(By.CSS_SELECTOR, ".st-key-practice_exercise input")  # the chosen option's text
        return " ".join(e.get_attribute("value") or e.get_attribute("placeholder") or "" for e in shown)

    for key, ex_id in (("ch02", "ex02"), ("ch04", "ex04")):
        if key != "ch02":
            go_by_sidebar(driver, key)
        label = t("app.footer_link", lang, ex_id=ex_id)
        link = wait_for(driver, lambda d: next((a for a in d.find_elements(By.CSS_SELECTOR, '[data-testid="stPageLink"] a')
                                                if a.text.strip().endswith(label)), None),  # after the icon's name
                        f"no link {label!r}", 60)
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'}); arguments[0].click();", link)
        wait_for(driver, lambda d: "/practice" in d.current_url and f"{ex_id} ·" in chosen_exercise(d),
                 lambda: f"Practice shows {chosen_exercise(driver)!r} after the {ex_id} link", 60)
        wait_until_rendered(driver)
        assert errors_on(driver) == []
