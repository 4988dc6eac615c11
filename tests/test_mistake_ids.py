"""A slip named by an automatic mutant carries a stable mistake id, which class analytics group
submissions by and word in the instructor's language.

The id is made of names from the reference (function, the line's role, the operator and its fields),
so it is the same in every run, in either feedback language, and in every grader version of the same
reference (line numbers and the rest of the file do not enter it).
"""

from pathlib import Path

import pytest

from classroom.analytics import analytics, frames
from classroom.data.settings import set_setting
from classroom.data.submissions import submit
from classroom.web.feedback import mistake_labels
from classroom.line.worker import run_worker
from grader.core import Submission, grade_submissions
from grader.diagnosis import explain, mutants, operators
from tests.classroom_support import user_id

ROOT = Path(__file__).resolve().parent.parent
BUGS = ROOT / "tests" / "learner_bugs"
BASE_1000 = "auto:PositionalEncoding.__init__:angles:const_smaller:factor=10"
BASE_1000_EN = ("Found automatically in PositionalEncoding.__init__, in the line that computes `angles`: "
                "a constant is 10 times smaller than it should be")


def _ids(source, function):
    return {explain.mistake_id(mutants.describe(m)) for m in operators.mutations(source) if m.function == function}


def test_the_id_does_not_depend_on_lines_or_code_elsewhere_in_the_file():
    source = (ROOT / "solutions" / "ex06_positional_encoding.py").read_text(encoding="utf-8")
    moved = ("# a comment and blank lines move every line down\n\n\n" + source
             + "\n\ndef unrelated(x):\n    \"\"\"Not part of the exercise.\"\"\"\n    return x * 10000\n")
    before, after = _ids(source, "PositionalEncoding.__init__"), _ids(moved, "PositionalEncoding.__init__")
    assert BASE_1000 in before
    assert before == after


def test_an_id_is_worded_back_and_other_ids_are_not():
    assert explain.label(BASE_1000, "en") == BASE_1000_EN
    zh = explain.label(BASE_1000, "zh")
    assert zh.startswith("自动发现的错误") and "PositionalEncoding.__init__" in zh and "小了 10 倍" in zh
    assert "：" in zh and ":" not in zh.replace("__init__", "")
    for other in ("dot_no_scale", "auto:", "auto:f", None, "auto:f:x:no_such_operator:k=v"):
        text = explain.label(other, "en")
        assert text is None or text.startswith("Found automatically in f"), (other, text)


@pytest.mark.slow  # grades learner files
def test_an_automatic_hint_records_its_id_in_every_language():
    paths = [BUGS / "ex06" / "base_1000.py", BUGS / "ex04" / "old_state_returned.py"]
    wanted = [BASE_1000, "auto:Seq2SeqAttentionDecoder.forward:(return):old_returned:param=state"]
    for lang in ("en", "zh"):
        results = grade_submissions([Submission(p.parent.name, p.read_text(encoding="utf-8"), p.name)
                                     for p in paths], lang=lang)
        for result, mistake in zip(results, wanted):
            hinted = [c for c in result.checks if c.hint]
            assert hinted and hinted[0].mistake == mistake, [(c.hint, c.mistake) for c in result.checks]
            assert result.to_dict()["checks"][result.checks.index(hinted[0])]["mistake"] == mistake


@pytest.mark.slow  # a real worker grades three submissions
def test_class_analytics_group_and_label_automatic_mistakes(class_store, sqlite_url):
    set_setting(class_store, "variants", 0)  # the bugs are written for the published exercise
    base_1000 = (BUGS / "ex06" / "base_1000.py").read_text(encoding="utf-8")
    odd = (BUGS / "ex06" / "odd_num_hiddens_breaks.py").read_text(encoding="utf-8")
    name = "ex06_positional_encoding.py"
    ann = submit(class_store, user_id(class_store, "ann@class.test"), "ex06", base_1000, name, lang="zh")
    bob = submit(class_store, user_id(class_store, "bob@class.test"), "ex06", base_1000, name)
    cy = submit(class_store, user_id(class_store, "cy@class.test"), "ex06", odd, name)
    assert run_worker(sqlite_url, sandbox="process", once=True, log=lambda _: None) == 3
    frame = frames.submissions_frame(class_store)
    ids = {m for found in frame["mistake_ids"] for m in found}
    for lang in ("en", "zh"):
        bars = analytics.mistake_bars(frame, "ex06", mistake_labels("ex06", lang, ids))
        top = bars.iloc[0]
        assert top["mistake_id"] == BASE_1000  # ann's feedback in Chinese, bob's in English: one bar
        assert top["submission_ids"] == [ann, bob] and top["count"] == 2 and top["share"] == pytest.approx(2 / 3)
        assert [cy] in bars["submission_ids"].tolist()
        assert all(label != mistake for label, mistake in zip(bars["label"], bars["mistake_id"]))
        if lang == "en":
            assert top["label"] == BASE_1000_EN
        else:
            assert top["label"].startswith("自动发现的错误") and "小了 10 倍" in top["label"]
