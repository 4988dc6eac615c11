"""Class mode in the app (Streamlit's AppTest): sign-in by link, submitting, and page access by role."""

import os

import pytest
from sqlalchemy import select

from classroom.web import feedback
from classroom.data.roster import init_class
from classroom.data.sessions import create_sign_in_link
from classroom.data.settings import set_rule
from classroom.data.models import Submission
from classroom.line.worker import run_worker
from course.common.exercise_variants import variant_line
from course.common.i18n import t
from tests.app_helpers import APP, AppTest, errors_of, markdown_text
from tests.classroom_support import ROOT, INSTRUCTOR, add_graded, session_token, user_id

GRADEBOOK = "classroom/app_pages/gradebook.py"
ANALYTICS = "classroom/app_pages/analytics.py"
PRACTICE = "classroom/app_pages/practice.py"  # the class's Practice page, at the self-study one's URL


@pytest.fixture
def hosted(class_store, sqlite_url, monkeypatch, tmp_path):
    monkeypatch.setenv("ATTENTION_LAB_CLASS_DB", sqlite_url)
    monkeypatch.setenv("ATTENTION_LAB_HOME", str(tmp_path))
    add_graded(class_store, "bob@class.test", "ex03", 0.4, "failed", ["dot_no_scale"])
    return class_store


def _page(path, session_token=None, lang="en"):
    at = AppTest.from_file(str(ROOT / path), default_timeout=60)
    at.session_state["app_lang"] = lang
    if session_token:
        at.session_state["class_session"] = session_token
    return at.run()


def submit_ex00(at, code):
    """Choose exercise 0 on the class Practice page, paste `code`, press Submit."""
    at.selectbox(key="practice_class_ex").set_value("ex00")
    at.run()
    at.text_area(key="practice_class_code_ex00").set_value(code)
    at.button(key="practice_class_submit").click()
    at.run()


@pytest.mark.slow
def test_a_link_signs_in_and_the_learner_submits(hosted):
    link, _ = create_sign_in_link(hosted, "ann@class.test")
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state["app_lang"] = "en"
    at.query_params["token"] = link.split("token=")[1]
    at.run()
    at.switch_page(PRACTICE).run()
    assert errors_of(at) == []
    assert at.title[0].value == t("classroom.practice_title", "en")
    assert "Ann" in [x.value for x in at.sidebar.text]  # the name, as plain text
    code = "def receptive_field(kernel_size, num_layers, dilations=None):\n    return 1\n"
    submit_ex00(at, code)
    assert any("received" in s.value for s in at.success), [e.value for e in at.error]
    with hosted.session() as session:
        rows = session.execute(select(Submission.user_id, Submission.source)
                               .where(Submission.exercise_id == "ex00")).all()
    assert [tuple(r) for r in rows] == [(user_id(hosted, "ann@class.test"), code)]
    assert [i.value for i in at.info] == [variant_line("ex00", 0, "en"),  # a class without variants: published
                                          t("classroom.state_queued", "en", position=1)]
    assert t("classroom.eta_no_worker", "en") in [c.value for c in at.caption]  # no worker yet: no number
    run_worker(os.environ["ATTENTION_LAB_CLASS_DB"], sandbox="process", once=True, log=lambda _: None)
    at.run()
    feedback = "\n".join(c.value for c in at.code)
    assert "ex00" in feedback and "FAILED" in feedback and "problem:" in feedback  # the command line's wording
    assert code.strip() in feedback  # the submission's code, under its feedback


@pytest.mark.parametrize("path", [GRADEBOOK, ANALYTICS])
def test_a_learner_opening_instructor_pages_by_url_sees_no_data(hosted, path):
    token = session_token(hosted, user_id(hosted, "ann@class.test"))
    at = _page(path, token)
    assert any("may not" in e.value for e in at.error)
    assert not at.dataframe and "bob@class.test" not in markdown_text(at)


@pytest.mark.parametrize("path", [GRADEBOOK, ANALYTICS, PRACTICE])
def test_without_a_valid_session_only_the_sign_in_page_shows(hosted, path):
    at = _page(path, "forged-token-in-session-state")
    assert at.title[0].value == t("classroom.signin_title", "en")
    assert not at.dataframe and not at.text_area


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_instructor_sees_gradebook_and_analytics(hosted, lang):
    token = session_token(hosted, user_id(hosted, INSTRUCTOR))
    at = _page(GRADEBOOK, token, lang)
    assert errors_of(at) == []
    assert at.title[0].value == t("classroom.gradebook_title", lang)
    book = at.dataframe[0].value
    assert book["email"].tolist() == ["ann@class.test", "bob@class.test", "cy@class.test"]
    assert book.loc[book["email"] == "bob@class.test", "ex03"].item() == 40.0  # percent
    add_graded(hosted, "ann@class.test", "ex03", 0.4, "failed", ["dot_no_scale"])
    for minute in range(5):  # one learner's resubmissions of one mistake count her once
        add_graded(hosted, "cy@class.test", "ex03", 0.2, "failed", ["dot_scale_by_d"], minutes=minute)
    at = _page(ANALYTICS, token, lang)
    assert errors_of(at) == []
    labels = feedback.mistake_labels("ex03", lang)
    label, other = labels["dot_no_scale"], labels["dot_scale_by_d"]
    shown = markdown_text(at)
    assert t("classroom.mistake_sentence", lang, share="67%", ex_id="ex03", learners=2, failing=3,
             label=label) in shown, shown
    assert t("classroom.mistake_sentence", lang, share="33%", ex_id="ex03", learners=1, failing=3,
             label=other) in shown, shown
    assert t("classroom.mistakes_counting", lang, failing=3, ex_id="ex03") in [c.value for c in at.caption]
    mistake_col, learners_col = t("classroom.bar_mistake", lang), t("classroom.col_learners", lang)
    count_col = t("classroom.col_count", lang)
    tables = [table.value for table in at.table if mistake_col in table.value.columns]  # the chart's table
    assert tables and tables[0][mistake_col].tolist() == [label, other]
    assert [int(n) for n in tables[0][learners_col]] == [2, 1] and [int(n) for n in tables[0][count_col]] == [2, 5]


def test_a_ta_may_read_the_gradebook_but_a_learner_never_sees_anothers_history(hosted):
    ta = session_token(hosted, user_id(hosted, "ta@class.test"))
    at = _page(GRADEBOOK, ta)
    assert errors_of(at) == [] and at.dataframe
    ann = session_token(hosted, user_id(hosted, "ann@class.test"))
    at = _page(PRACTICE, ann)
    assert errors_of(at) == []
    assert t("classroom.history_empty", "en") in [c.value for c in at.caption]  # bob's submission is not hers


@pytest.mark.slow
def test_a_learner_reading_chinese_submits_and_reads_chinese_feedback(hosted):
    from grader.report import status_label

    token = session_token(hosted, user_id(hosted, "ann@class.test"))
    at = _page(PRACTICE, token, "zh")
    code = "def receptive_field(kernel_size, num_layers, dilations=None):\n    return 1\n"
    submit_ex00(at, code)
    assert errors_of(at) == [] and len(at.success) == 1
    with hosted.session() as session:
        assert session.scalar(select(Submission.lang).where(Submission.exercise_id == "ex00")) == "zh"
    run_worker(os.environ["ATTENTION_LAB_CLASS_DB"], sandbox="process", once=True, log=lambda _: None)
    at.run()
    feedback = "\n".join(c.value for c in at.code)
    assert status_label("failed", "zh") in feedback and status_label("failed", "en") not in feedback


def test_class_mode_hides_the_page_that_runs_local_exercise_files(hosted):
    """'My implementation' runs exercises/ on the machine that serves the app: never in a class."""
    link, _ = create_sign_in_link(hosted, "ann@class.test")
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params["token"] = link.split("token=")[1]
    at.run()
    with pytest.raises(Exception):
        at.switch_page("app_pages/demo_mine.py").run()
    at.switch_page("app_pages/demo_translate.py").run()  # the other demos stay
    assert errors_of(at) == []


def _app_as(store, email):
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state["app_lang"] = "en"
    at.session_state["class_session"] = session_token(store, user_id(store, email))
    return at.run()


def test_the_class_registers_its_pages_for_the_roles_that_may_open_them(hosted):
    at = _app_as(hosted, INSTRUCTOR)
    for path, title in ((GRADEBOOK, "classroom.gradebook_title"), (ANALYTICS, "classroom.analytics_title"),
                        (PRACTICE, "classroom.practice_title")):
        at.switch_page(path).run()
        assert errors_of(at) == [] and at.title[0].value == t(title, "en")
    learner = _app_as(hosted, "ann@class.test")
    with pytest.raises(ValueError, match="navigation page"):  # not in a learner's navigation
        learner.switch_page(GRADEBOOK).run()
    with pytest.raises(ValueError, match="navigation page"):  # the self-study Practice page is not served to a class
        learner.switch_page("app_pages/practice.py").run()


def test_a_graded_submissions_feedback_is_shown_once(hosted):
    """The verdict the page followed is drawn once on the Practice page (it was drawn under the submit button and
    again in the history), in the run that follows the verdict and in the runs after it."""
    token = session_token(hosted, user_id(hosted, "ann@class.test"))
    at = _page(PRACTICE, token)
    submit_ex00(at, "def receptive_field(kernel_size, num_layers, dilations=None):\n    return 1\n")
    with hosted.session() as session:
        submission_id = session.scalar(select(Submission.id).where(Submission.exercise_id == "ex00"))
    run_worker(os.environ["ATTENTION_LAB_CLASS_DB"], sandbox="process", once=True, log=lambda _: None)
    title = t("classroom.feedback_title", "en", id=submission_id)
    for _ in range(2):  # the run that finds the verdict, then a later one
        at.run()
        assert errors_of(at) == []
        assert [s.value for s in at.subheader].count(title) == 1, [s.value for s in at.subheader]
        verdicts = [c.value for c in at.code if "ex00" in c.value and "FAILED" in c.value]
        assert len(verdicts) == 1, verdicts
        scores = [m.value for m in at.markdown if m.value.startswith(t("classroom.score", "en", score="")[:6])]
        assert len(scores) == 1, scores


def _shown_cells(table):
    """The cells of a styled st.dataframe as the browser draws them (the Styler's display values)."""
    import pyarrow as pa

    return pa.ipc.open_stream(table.proto.arrow_data.styler.display_values).read_all().to_pandas()


def test_the_gradebook_shows_percentages_and_a_total_and_the_export_keeps_every_column(hosted, tmp_path):
    """The page's table: one column per exercise in percent and a total (not 43 columns with 10-digit variant
    numbers and raw scores); the CSV export still holds attempts, late flags and variants."""
    from classroom import cli
    from classroom.data.exercise_table import EXERCISE_IDS

    bob_ex05 = add_graded(hosted, "bob@class.test", "ex05", 0.2051, "failed")
    with hosted.session() as session:
        session.get(Submission, bob_ex05).variant = 1234567890
    at = _page(GRADEBOOK, session_token(hosted, user_id(hosted, INSTRUCTOR)))
    assert errors_of(at) == []
    book = at.dataframe[0].value.set_index("email")
    assert book.columns.tolist() == ["name", *EXERCISE_IDS, "total", "removed"]  # one column per exercise, and the email
    assert not [c for c in book.columns if "variant" in c or "attempts" in c or "late" in c]
    cells = _shown_cells(at.dataframe[0]).set_index("email")
    assert (cells.loc["bob@class.test", "ex03"], cells.loc["bob@class.test", "ex05"]) == ("40%", "21%")
    assert cells.loc["bob@class.test", "total"] == f"{(40 + 20.51) / len(EXERCISE_IDS):.0f}%"  # two scores, all exercises
    assert (cells.loc["ann@class.test", "ex05"], cells.loc["ann@class.test", "total"]) == ("—", "0%")
    assert "1234567890" not in cells.to_string() and "0.2051" not in cells.to_string()
    out = tmp_path / "grades.csv"
    assert cli.main(["export", "--db", os.environ["ATTENTION_LAB_CLASS_DB"], "--out", str(out)]) == 0
    import csv

    rows = {r["email"]: r for r in csv.DictReader(out.read_text(encoding="utf-8-sig").splitlines())}
    assert len(rows["bob@class.test"]) == 3 + 6 * len(EXERCISE_IDS) + 1  # email, name, removed; 6 per exercise; total
    assert (rows["bob@class.test"]["ex05"], rows["bob@class.test"]["ex05_variant"]) == ("0.2051", "1234567890")
    assert rows["bob@class.test"]["ex05_attempts"] == "1" and rows["bob@class.test"]["ex03_late"] == "0"
    assert float(rows["bob@class.test"]["total"]) == pytest.approx((0.4 + 0.2051) / len(EXERCISE_IDS), abs=1e-4)


def test_the_instructor_is_shown_by_the_name_init_gave(hosted):
    """Not "you" (the first part of you@school.edu): the name from `init --name`, in the instructor's own sidebar
    and, for learners and TAs, as the class's instructor."""
    init_class(os.environ["ATTENTION_LAB_CLASS_DB"], "you@school.edu")  # a second instructor, no name
    at = _page(GRADEBOOK, session_token(hosted, user_id(hosted, "you@school.edu")))
    assert [x.value for x in at.sidebar.text] == ["you@school.edu"]  # no name given: the email, never "you"
    init_class(os.environ["ATTENTION_LAB_CLASS_DB"], "you@school.edu", name="Dr. Ada Lovelace")
    at = _page(GRADEBOOK, session_token(hosted, user_id(hosted, "you@school.edu")))
    assert errors_of(at) == [] and [x.value for x in at.sidebar.text] == ["Dr. Ada Lovelace"]
    at = _page(PRACTICE, session_token(hosted, user_id(hosted, "ann@class.test")), "zh")
    assert errors_of(at) == [] and [x.value for x in at.sidebar.text] == ["Ann", "Dr. Ada Lovelace"]
    assert t("classroom.instructor_label", "zh") in [c.value for c in at.sidebar.caption]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_extensions_and_overrides_are_marked_in_the_gradebook_and_a_learner_sees_her_own_deadline(hosted, lang):
    from datetime import timedelta

    from classroom.data import adjustments
    from classroom.data.models import utcnow

    deadline = utcnow() - timedelta(hours=1)
    set_rule(hosted, "ex03", deadline, "accept", 48, 0.5)
    until = (utcnow() + timedelta(days=2)).replace(second=0, microsecond=0)
    adjustments.grant_extension(hosted, "ann@class.test", "ex03", until, "hospital stay", INSTRUCTOR)
    adjustments.set_override(hosted, "bob@class.test", "ex03", 0.85, "oral re-examination", INSTRUCTOR)
    at = _page(GRADEBOOK, session_token(hosted, user_id(hosted, INSTRUCTOR)), lang)
    assert errors_of(at) == []
    assert at.dataframe[0].value.set_index("email").loc["bob@class.test", "ex03"] == 85.0  # the value still sorts
    cells = _shown_cells(at.dataframe[0]).set_index("email")
    override, extended = t("classroom.mark_override", lang), t("classroom.mark_extended", lang)
    assert cells.loc["bob@class.test", "ex03"] == f"85% · {override}"
    assert cells.loc["ann@class.test", "ex03"] == f"— · {extended}"  # nothing graded yet, but extended
    assert (cells.loc["cy@class.test", "ex03"], cells.loc["bob@class.test", "ex01"]) == ("—", "—")
    assert t("classroom.gradebook_marks", lang) in [c.value for c in at.caption]
    reasons = next(d.value for d in at.dataframe if t("classroom.col_override_reason", lang) in d.value.columns)
    reasons = reasons.set_index("email")
    assert reasons.loc["ann@class.test", t("classroom.col_extension_reason", lang)] == "hospital stay"
    assert reasons.loc["bob@class.test", t("classroom.col_override_reason", lang)] == "oral re-examination"
    assert reasons.loc["bob@class.test", t("classroom.col_override", lang)] == "85%"

    def practice(email):
        page = _page(PRACTICE, session_token(hosted, user_id(hosted, email)), lang)
        page.selectbox(key="practice_class_ex").set_value("ex03").run()
        assert errors_of(page) == []
        return [x.value for x in page.info] + [c.value for c in page.caption]

    shown = practice("ann@class.test")
    assert t("classroom.own_deadline_extended", lang, ex_id="ex03", when=f"{until:%Y-%m-%d %H:%M}",
             class_when=f"{deadline:%Y-%m-%d %H:%M}") in shown, shown
    assert not [line for line in shown if "hospital" in line]  # the reason is staff's
    shown = practice("bob@class.test")
    assert t("classroom.own_deadline", lang, ex_id="ex03", when=f"{deadline:%Y-%m-%d %H:%M}") in shown, shown
    assert t("classroom.own_override", lang, ex_id="ex03", score="85") in shown, shown
    assert not [line for line in shown if "oral" in line]
