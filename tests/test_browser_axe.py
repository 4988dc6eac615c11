"""axe-core in Chromium: no serious or critical accessibility violation, in English and Chinese.

Every page is scanned by tests/test_browser.py's test_page_opens_without_errors_or_axe_violations, in the same
visit that checks it opens (its first sliders moved, each topic tab of a long chapter scanned in turn). Here:
the Practice page again after a grading that shows a weights diff, and class mode's pages (sign-in, a learner's
Practice, an instructor's gradebook and analytics) once each per language. A failure lists every offending rule
with its nodes. Violations inside Streamlit's own components, which the app's markup cannot change, are listed in
tests/axe_support.py's STREAMLIT_OWNED with the reason; nothing else is allowed.
"""


import os

import pytest

from classroom.data.sessions import create_sign_in_link
from classroom.data.models import Result
from grader.core import Submission, grade_submissions
from grader.report import Report
from grader.text import tr as weights_text
from course.common.i18n import t
from tests.axe_support import STREAMLIT_OWNED, axe_violations, blocking, report, require_axe
from tests.browser_support import SHOTS, full_page_screenshot, require_browser, running_app, wait_for_text
from tests.classroom_support import INSTRUCTOR, add_graded, make_class
from tests.test_browser_weights_diff import buggy_ex03, grade_buggy_upload

pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def axe_source():
    """axe-core's script (skips without it, fails in CI)."""
    return require_axe()


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.slow
def test_practice_after_a_grading_with_its_weights_diff_has_no_serious_or_critical_axe_violation(
        server, browsers, axe_source, lang, tmp_path):
    """The Practice page as a failing ex03 leaves it: the feedback, the two heatmaps and their tables."""
    driver = browsers(lang)
    grade_buggy_upload(driver, server, lang, tmp_path)
    full_page_screenshot(driver, SHOTS / f"axe-practice-graded-{lang}.png")
    bad = blocking(axe_violations(driver, axe_source), STREAMLIT_OWNED)
    assert bad == [], report(f"practice after grading ({lang})", bad)


@pytest.fixture(scope="module")
def class_server(tmp_path_factory):
    """(URL, store, ann's submission id) of the app in class mode (SQLite): ann's ex03 graded for real (its
    feedback holds the weights grids), bob's ex05 passed."""
    require_browser()
    folder = tmp_path_factory.mktemp("axe_class")
    url = f"sqlite:///{folder / 'class.db'}"
    store = make_class(url, folder)
    graded = grade_submissions([Submission("ex03", buggy_ex03(folder).read_text(), "ex03_scoring.py", None)])[0]
    submission_id = add_graded(store, "ann@class.test", "ex03", graded.score, "failed", ["dot_ignores_mask"])
    with store.session() as session:  # the stored verdict's report, as a worker keeps it
        session.query(Result).filter_by(submission_id=submission_id).update(
            {"report": Report("ex03_scoring.py", [graded]).to_dict()})
    add_graded(store, "bob@class.test", "ex05", 1.0, "passed")
    env = dict(os.environ, ATTENTION_LAB_HOME=str(folder / "home"), ATTENTION_LAB_CLASS_DB=url)
    with running_app(env) as app:
        yield app, store, submission_id
    store.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.slow
def test_class_mode_pages_have_no_serious_or_critical_axe_violation(class_server, browsers, axe_source, lang):
    """Sign-in, a learner's Practice, and an instructor's gradebook and analytics: one visit each."""
    server, store, _ = class_server
    driver = browsers(lang)
    driver.set_window_size(1400, 1000)
    driver.delete_all_cookies()
    feedback = weights_text("weights.expected", "en")  # ann's feedback (its report graded in English), shown last
    states = (("sign-in", None, "practice", t("classroom.signin_title", lang)),
              ("learner-practice", "ann@class.test", "practice", feedback),
              ("gradebook", INSTRUCTOR, "gradebook", feedback),
              ("analytics", None, "analytics", feedback))  # the instructor's session: the bar's submission
    problems = []
    for name, email, page, last_shown in states:
        if email:
            driver.delete_all_cookies()
            link, _ = create_sign_in_link(store, email, f"{server}/{page}")
            driver.get(link)
        else:
            driver.get(f"{server}/{page}")
        wait_for_text(driver, last_shown)
        full_page_screenshot(driver, SHOTS / f"axe-class-{name}-{lang}.png")
        bad = blocking(axe_violations(driver, axe_source), STREAMLIT_OWNED)
        if bad:
            problems.append(report(f"class mode {name} ({lang})", bad))
    assert problems == [], "\n".join(problems)


def test_the_allow_list_covers_only_its_rule_inside_its_component():
    """A node is allowed only for the listed rule and only inside the listed Streamlit component."""
    def violation(rule, owners, impact="serious"):
        return {"id": rule, "impact": impact, "help": "", "nodes": [
            {"target": "ul", "html": "<ul>", "owners": owners, "summary": ""}]}

    assert blocking([violation("list", ["stSidebarNavItems", "stSidebar"])], STREAMLIT_OWNED) == []
    assert blocking([violation("list", ["stMain"])], STREAMLIT_OWNED) == [("list", "ul", "<ul>  []")]
    assert blocking([violation("color-contrast", ["stSidebarNavItems"])], STREAMLIT_OWNED) != []
    assert blocking([violation("region", ["stMain"], impact="moderate")], STREAMLIT_OWNED) == []
