"""A failing attention exercise shows the learner's weights beside the expected ones, in Chromium, in both languages.

As a learner would: upload an ex03 whose dot-product attention ignores valid_lens on the Practice page, press
Grade, and read the feedback. The page must name the failing example and the worst (query, key) cell in words,
draw two heatmaps side by side with the worst cell outlined, and offer the same numbers as tables. The text
grid of the command line is checked too (the notebooks print the same table).
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from course.common import pages_index
from course.common.i18n import t
from grader import checks as checks_registry
from grader.mistakes import apply_mistake
from tests.browser_support import full_page_screenshot, main_text, wait_for, \
    wait_until_rendered

pytestmark = pytest.mark.timeout(600)
ROOT = Path(__file__).resolve().parent.parent
SHOTS = Path(os.environ.get("ATTENTION_LAB_SHOTS", ROOT / ".attention_lab" / "screenshots"))


def buggy_ex03(folder):
    """exercises/ex03_scoring.py as a learner who forgot to pass valid_lens to the softmax would write it."""
    mistake = next(m for m in checks_registry.for_exercise("ex03").MISTAKES if m.id == "dot_ignores_mask")
    path = Path(folder) / "ex03_scoring.py"
    path.write_text(apply_mistake((ROOT / "solutions" / "ex03_scoring.py").read_text(encoding="utf-8"), mistake))
    return path


def grade_buggy_upload(driver, server, lang, folder):
    """On the Practice page, upload buggy_ex03 as a learner would, press Grade, and wait for the weights diff."""
    from selenium.webdriver.common.by import By

    driver.set_window_size(1400, 1000)
    driver.get(f"{server}/")
    wait_until_rendered(driver)
    driver.get(f"{server}/{pages_index.get('practice').url_path}")
    wait_until_rendered(driver)
    upload = driver.find_element(By.CSS_SELECTOR, "[data-testid='stFileUploaderDropzoneInput']")
    upload.send_keys(str(buggy_ex03(folder)))
    box = driver.find_element(By.CSS_SELECTOR, ".st-key-practice_upload_ex [data-testid='stSelectbox']")
    box.click()  # the uploader's exercise defaults to ex00: choose ex03 as a learner does, from the list
    option = wait_for(driver, lambda d: [o for o in d.find_elements(By.CSS_SELECTOR, "[role='option']")
                                         if o.text.startswith("ex03")], "the exercise list opens")
    option[0].click()
    grade = t("practice.upload_grade", lang, ex_id="ex03")
    wait_for(driver, lambda d: [b for b in d.find_elements(By.TAG_NAME, "button") if b.text == grade],
             "the upload's Grade button")
    next(b for b in driver.find_elements(By.TAG_NAME, "button") if b.text == grade).click()
    said = t("practice.weights_expected", lang)
    wait_for(driver, lambda d: said in main_text(d), "the weights diff after grading", timeout=300)
    wait_until_rendered(driver)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.slow
def test_the_practice_page_shows_the_weights_side_by_side(server, browsers, lang, tmp_path):
    from selenium.webdriver.common.by import By

    driver = browsers(lang)
    grade_buggy_upload(driver, server, lang, tmp_path)
    text = main_text(driver)
    # the sentence names the failing example (1: valid length 2) and the worst cell, from the report's data
    named = "for example 1" if lang == "en" else "第 1 个样本"
    sentence = next((line for line in text.splitlines() if "attention_weights" in line and named in line), None)
    assert sentence is not None, text
    full_page_screenshot(driver, SHOTS / f"practice-weights-diff-{lang}.png")
    charts = driver.find_elements(By.CSS_SELECTOR, "[data-testid='stMain'] .vega-embed")  # Practice draws no other
    assert len(charts) >= 1, "no heatmap pair drawn"
    marks = charts[0].find_elements(By.CSS_SELECTOR, "svg path, canvas")
    assert marks, "the heatmaps drew nothing"
    tables = t("practice.weights_table", lang)
    assert tables in text  # the same numbers as tables, for a screen reader or a keyboard


def test_the_command_line_prints_the_two_grids_with_the_worst_cell_marked(tmp_path):
    buggy_ex03(tmp_path)
    done = subprocess.run([sys.executable, "-m", "grader", "ex03", "--target", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, ATTENTION_LAB_HOME=str(tmp_path / "home")))
    lines = done.stdout.splitlines()
    assert any("expected weights" in line and "your weights" in line for line in lines), done.stdout
    marked = [line for line in lines if "[" in line and line.strip().startswith("q")]
    assert len(marked) == 1 and marked[0].count("[") == 2, done.stdout  # one row, one cell on each side
    # example 1 has valid length 2: the learner's weights on its keys 2-5 are not 0, the expected ones are
    assert "attention_weights of example 1" in done.stdout
    row = marked[0].split()
    assert row[0] == row[len(row) // 2] and row[0].startswith("q")  # the same query on both sides
