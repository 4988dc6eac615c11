"""What a learner set stays set: typed sentences and chosen tabs after another page, a footer link's exercise."""

import pytest
from app_helpers import errors_of, open_page

from course.common import pages_index
from course.app.ui import TOPICS
from course.common import i18n

pytestmark = pytest.mark.usefixtures("lab_home")


def away_and_back(at, page_path):
    """Open the Notes page, then `page_path` again, as the sidebar does."""
    at.switch_page("app_pages/notes.py").run()
    at.switch_page(page_path).run()
    assert errors_of(at) == []
    return at


@pytest.mark.usefixtures("tiny_env")
@pytest.mark.parametrize("key", ["demo_translate", "demo_inside"])
@pytest.mark.slow
def test_a_typed_sentence_survives_a_visit_to_another_page(key):
    page = pages_index.get(key).path
    at = open_page(page, lang="zh")
    at.text_input(key=f"{key}_sentence").set_value("the dog runs.").run()
    away_and_back(at, page)
    assert at.text_input(key=f"{key}_sentence").value == "the dog runs."


@pytest.mark.parametrize("page_key", sorted(TOPICS))
def test_a_chapter_reopens_on_the_topic_last_chosen_in_either_language(page_key):
    page = pages_index.get(page_key).path
    at = open_page(page, lang="en")
    tabs = at.tabs
    topics = TOPICS[page_key]
    assert [t.label for t in tabs[:len(topics)]] == [i18n.t(f"ui.tabs.{page_key}.{x}", "en") for x in topics]
    third = i18n.t(f"ui.tabs.{page_key}.{topics[2]}", "en")
    at.session_state[f"{page_key}_tab_topic"] = topics[2]  # what a click on the third tab keeps (the browser test clicks)
    away_and_back(at, page)
    selected = at.session_state[f"{page_key}_tab"]
    assert selected == third, selected
    at.session_state["app_lang"] = "zh"
    at.run()
    assert at.session_state[f"{page_key}_tab"] == i18n.t(f"ui.tabs.{page_key}.{topics[2]}", "zh")


def test_a_footer_link_opens_its_exercise_even_after_another_was_chosen():
    practice = pages_index.get("practice").path
    at = open_page(practice, lang="en")
    at.selectbox(key="practice_exercise").set_value("ex01").run()
    at.switch_page("app_pages/ch04_bahdanau.py").run()
    at.query_params["ex"] = "ex04"  # the footer's link: /practice?ex=ex04
    at.switch_page(practice).run()
    assert errors_of(at) == [] and at.selectbox(key="practice_exercise").value == "ex04"
    at.selectbox(key="practice_exercise").set_value("ex02").run()  # the learner's own choice then holds
    assert at.selectbox(key="practice_exercise").value == "ex02"
    away_and_back(at, practice)
    assert at.selectbox(key="practice_exercise").value == "ex02"
