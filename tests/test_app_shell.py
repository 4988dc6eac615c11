"""The shell: page registry, navigation, language switch, progress summary, widget keys."""

import os

import pytest
from app_helpers import errors_of, open_page, widgets

from course.app import progress
from course.common import pages_index
from course.common import i18n, paths
from course.common.exercise_index import EXERCISES

pytestmark = pytest.mark.usefixtures("lab_home")  # progress and notes in a fresh folder per test

MY_PAGES = ("ch01", "practice", "notes")


def test_page_registry_is_consistent():
    keys = [p.key for p in pages_index.PAGES]
    urls = [p.url_path for p in pages_index.PAGES]
    assert len(set(keys)) == len(keys) and len(set(urls)) == len(urls)
    assert {"ch01", "ch02", "ch03", "ch04", "practice", "notes"} <= set(keys)
    for page in pages_index.PAGES:
        assert page.section in pages_index.SECTIONS
        assert page.path.startswith("app_pages/") and page.path.endswith(".py")
        for lang in i18n.LANGS:
            assert page.title_key in i18n.catalog(lang), f"{page.title_key} missing in {lang}"
    for section in pages_index.SECTIONS:
        for lang in i18n.LANGS:
            assert f"nav.section_{section}" in i18n.catalog(lang)
    with pytest.raises(ValueError, match="use one of"):
        pages_index.get("ch99")


@pytest.mark.parametrize("page", pages_index.PAGES, ids=lambda p: p.key)
def test_every_registered_page_exists(page):
    # While other developers write their chapters, a missing page of theirs is skipped
    # locally; CI (CI=true) requires every registered page.
    if page.key not in MY_PAGES and not page.file.is_file() and os.environ.get("CI") != "true":
        pytest.skip(f"{page.path} is being written by another developer")
    assert page.file.is_file(), f"{page.key} is registered but {page.path} does not exist"


def test_every_exercise_chapter_is_a_registered_page_or_a_later_one():
    chapters = {p.key for p in pages_index.chapters()}
    taught_here = {ex.chapter for ex in EXERCISES if ex.chapter in {"ch01", "ch02", "ch03", "ch04"}}
    assert taught_here <= chapters


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_app_starts_on_the_first_chapter_in_each_language(lang):
    at = open_page(lang=lang)
    assert errors_of(at) == []
    assert at.title[0].value == i18n.t("ch01.title", lang)
    assert at.sidebar.radio(key="app_lang").value == lang


@pytest.mark.parametrize(("locale", "lang"), [("zh-CN", "zh"), ("en-GB", "en"), (None, "en")])
def test_default_language_follows_the_browser_locale(locale, lang):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(pages_index.PROJECT_ROOT / "app.py"), default_timeout=60)
    at.context["locale"] = locale
    at.run()
    assert at.title[0].value == i18n.t("ch01.title", lang)


def test_language_choice_survives_page_switches():
    at = open_page(lang="zh")
    at.sidebar.radio(key="app_lang").set_value("en").run()
    assert at.title[0].value == i18n.t("ch01.title", "en")
    for path, title in (("app_pages/practice.py", "practice.title"), ("app_pages/notes.py", "notes.title"),
                        ("app_pages/ch01_seq2seq.py", "ch01.title")):
        at.switch_page(path).run()
        assert at.session_state["app_lang"] == "en"
        assert at.title[0].value == i18n.t(title, "en")


def progress_texts(at):
    """The texts of the progress bars in the sidebar."""
    return [p.proto.text for p in at.sidebar.get("progress")]


def test_progress_summary_counts_passed_exercises():
    total = len(EXERCISES)
    at = open_page(lang="en")
    assert progress_texts(at) == [i18n.t("app.progress", "en", passed=0, total=total)]
    progress.save_results(paths.PROJECT_ROOT / "exercises", {
        "ex00": {"passed": True, "score": 1.0}, "ex01": {"passed": False, "score": 0.5},
        "ex02": {"passed": True, "score": 1.0},
    })
    at.run()
    assert progress_texts(at) == [i18n.t("app.progress", "en", passed=2, total=total)]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("page", pages_index.existing(), ids=lambda p: p.key)
@pytest.mark.slow
def test_every_existing_page_runs_without_errors(page, lang):
    at = open_page(page.path, lang=lang)
    assert errors_of(at) == [], f"{page.path} in {lang}"
    assert len(at.title) >= 1


@pytest.mark.parametrize("key", MY_PAGES)
def test_every_widget_has_a_page_prefixed_key(key):
    page = pages_index.get(key)
    at = open_page(page.path)
    found = widgets(at._tree)
    assert found, "expected widgets on the page"
    bad = [(w.type, w.key) for w in found if not (w.key or "").startswith((page.widget_prefix, "app_"))]
    assert bad == [], f"widgets without a '{page.widget_prefix}' key on {page.path}: {bad}"


def test_chapter_footer_links_to_practice_and_shows_status():
    at = open_page("app_pages/ch01_seq2seq.py", lang="en")
    status = i18n.t("app.status.not_graded", "en")
    assert any("ex00" in m.value and status in m.value for m in at.markdown)
    links = at.get("page_link")
    assert any("practice" in link.proto.page for link in links)
    progress.save_results(paths.PROJECT_ROOT / "exercises", {"ex00": {"passed": True, "score": 1.0}})
    at.run()
    passed = i18n.t("app.status.passed", "en")
    assert any("ex00" in m.value and passed in m.value for m in at.markdown)


def test_widget_state_survives_page_switches():
    at = open_page("app_pages/ch01_seq2seq.py", lang="en")
    at.slider(key="ch01_distance").set_value(20).run()
    at.switch_page("app_pages/notes.py").run()
    at.switch_page("app_pages/ch01_seq2seq.py").run()
    assert at.slider(key="ch01_distance").value == 20


def test_status_of_reads_the_saved_record():
    from course.app.ui import status_of

    results = {"ex00": {"passed": True}, "ex01": {"passed": False, "status": "not_written"},
               "ex02": {"passed": False, "status": "error"}, "ex03": {"passed": False, "status": "failed"}}
    assert [status_of(i, results) for i in ("ex00", "ex01", "ex02", "ex03", "ex04")] == [
        "passed", "not_written", "error", "failed", "not_graded"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_practice_names_the_chosen_exercise_s_command_and_no_variant_number(lang):
    """Self-study: the command line said for the exercise chosen (not always ex00), and the published exercise's
    parameter said without a variant number, which only a class hands out."""
    at = open_page("app_pages/practice.py", lang=lang)
    at.selectbox(key="practice_exercise").set_value("ex03").run()
    captions = [c.value for c in at.caption]
    assert any("python -m grader ex03" in c for c in captions), captions
    assert not any("python -m grader ex00" in c for c in captions), captions
    said = "\n".join([*captions, *(m.value for m in at.markdown)])
    assert "temperature = 1.0" in said or "temperature = 1" in said, said  # ex03's parameter, its default
    assert "variant 0" not in said and "变体 0" not in said, said
