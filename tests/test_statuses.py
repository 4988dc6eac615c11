"""One exercise-status vocabulary: every status the grader can save renders on every page.

The Review page once crashed on "not_written" (the grader's status for an untouched
stub) because three modules kept their own status lists; now there is one, in
course.common.exercise_index, and these tests open every page with each status saved.
"""

import subprocess
import sys

import pytest
from app_helpers import errors_of, open_page

from course.app import progress
from course.common import pages_index
from course.common import i18n
from course.common.exercise_index import EXERCISES, GRADER_STATUSES, STATUSES, status_of
from course.common.paths import PROJECT_ROOT
from course.lessons import ch09
from grader.report import status_label

EXERCISES_DIR = PROJECT_ROOT / "exercises"


def save_all(status):
    """Save every exercise with this status, as the grader would."""
    progress.save_results(EXERCISES_DIR, {
        ex.id: {"passed": status == "passed", "score": 1.0 if status == "passed" else 0.25, "status": status,
                "summary": "..."}
        for ex in EXERCISES
    })


@pytest.fixture
def clean_progress():
    path = progress.progress_path()
    path.unlink(missing_ok=True)
    yield
    path.unlink(missing_ok=True)


def test_every_status_has_a_label_in_both_languages_and_in_the_grader_table():
    for lang in i18n.LANGS:
        for status in STATUSES:
            assert i18n.t(f"app.status.{status}", lang).strip()
        for status in GRADER_STATUSES:  # the grader's table
            assert status_label(status, lang).strip()


@pytest.mark.parametrize("status", GRADER_STATUSES)
def test_a_saved_status_reads_back_as_itself(status, clean_progress):
    save_all(status)
    results = progress.load_results()
    assert {status_of(ex.id, results) for ex in EXERCISES} == {status}
    assert ch09.status_counts({ex.id: status_of(ex.id, results) for ex in EXERCISES})[status] == len(EXERCISES)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("status", GRADER_STATUSES)
@pytest.mark.slow
def test_every_page_renders_for_every_status_the_grader_saves(status, lang, clean_progress):
    save_all(status)
    pages = pages_index.existing()
    at = open_page(pages[0].path, lang=lang)
    failures = {}
    for page in pages:
        at.switch_page(page.path).run()
        if errors_of(at):
            failures[page.key] = errors_of(at)
    assert failures == {}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.slow
def test_review_page_after_grading_the_untouched_stubs(lang, clean_progress):
    """As a new learner would: grade the stubs with the real grader, then open Review."""
    done = subprocess.run([sys.executable, "-m", "grader", "ex00", "ex01"], cwd=PROJECT_ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    results = progress.load_results()
    assert {results[e]["status"] for e in ("ex00", "ex01")} == {"not_written"}
    at = open_page("app_pages/ch09_review.py", lang=lang)
    assert errors_of(at) == []
    label = i18n.t("app.status.not_written", lang)
    assert any(label in m.label for m in at.metric)
