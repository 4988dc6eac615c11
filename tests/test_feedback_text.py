"""Practice feedback: code names as code, counted sentences in the singular for one, stubs score 0."""

import pytest

from course.app import progress
from course.app.feedback_text import code_names
from course.common import i18n
from course.common.exercise_index import saved_score, score_for
from course.common.paths import PROJECT_ROOT
from tests.app_helpers import errors_of, open_page


def test_code_names_keep_their_underscores_as_code():
    assert code_names("PositionalEncoding.__init__ (build the table P)") \
        == "`PositionalEncoding.__init__` (build the table P)"
    assert code_names("write transpose_qkv, MultiHeadAttention.forward in exercises/ex05_multihead.py") \
        == "write `transpose_qkv`, `MultiHeadAttention.forward` in `exercises/ex05_multihead.py`"
    assert code_names("请在 zh_ex03_scoring.ipynb 的第 6 个单元格中编写") == "请在 `zh_ex03_scoring.ipynb` 的第 6 个单元格中编写"


def test_code_names_leave_prose_code_spans_and_formulas_alone():
    assert code_names("Done. The shapes are right.") == "Done. The shapes are right."
    assert code_names("use `num_hiddens // num_heads` here") == "use `num_hiddens // num_heads` here"
    assert code_names("the scale $1/\\sqrt{d_k}$ and 0.5") == "the scale $1/\\sqrt{d_k}$ and 0.5"


def test_one_thing_is_said_in_the_singular_in_english():
    assert i18n.t_count("practice.passed_checks", "en", 1, names="a").endswith("1 check passed: a")
    assert i18n.t_count("practice.passed_checks", "en", 3, names="a").endswith("3 checks passed: a")
    assert "1 more failed check " in i18n.t_count("practice.more_failed", "en", 1)
    assert "2 more failed checks" in i18n.t_count("practice.more_failed", "en", 2)
    assert "1 项检查" in i18n.t_count("practice.passed_checks", "zh", 1, names="a")
    assert i18n.t_count("app.progress", "en", 1, passed=1, total=8)  # a key without a singular form: the key itself


def test_an_exercise_not_started_scores_0_whatever_its_stub_passes():
    assert score_for("not_written", 1, 13) == 0.0
    assert score_for("failed", 1, 13) == pytest.approx(0.0769)
    assert score_for("passed", 13, 13) == 1.0
    assert saved_score({"status": "not_written", "score": 0.0769}) == 0.0  # saved before the rule
    assert saved_score({"status": "failed", "score": 0.0769}) == pytest.approx(0.0769)
    assert saved_score({}) is None and saved_score(None) is None


@pytest.fixture
def stub_record_saved_at_8_percent():
    path = progress.progress_path()
    path.unlink(missing_ok=True)
    progress.save_results(PROJECT_ROOT / "exercises", {
        "ex05": {"passed": False, "score": 0.0769, "status": "not_written", "summary": "not started"}})
    yield
    path.unlink(missing_ok=True)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_practice_table_and_footer_show_0_for_a_stub(stub_record_saved_at_8_percent, lang):
    at = open_page("app_pages/practice.py", lang=lang)
    assert errors_of(at) == []
    table = at.dataframe[0].value
    row = table[table.iloc[:, 0] == "ex05"].iloc[0]
    assert row.iloc[-1] == "0%" and row.iloc[-2] == i18n.t("app.status.not_written", lang)
    at = open_page("app_pages/ch05_multihead.py", lang=lang)
    footer = [c.value for c in at.caption if c.value == i18n.t("app.footer_score", lang, score="0")]
    assert footer, [c.value for c in at.caption]
