"""On the published exercise (variant 0) a file without the exercise's parameter passes (its checks are not
applicable), while every class variant fails it: the report says so beforehand, in the learner's language
(grader/diagnosis/variant_default.class_variant_warning, ExerciseResult.class_variant_warning, the text table and the Practice
page)."""

import io
from pathlib import Path

import pytest

from course.common.i18n import t
from grader import variants
from grader.diagnosis import variant_default
from grader.core import Submission, grade_submissions
from grader.report import Report, print_table

ROOT = Path(__file__).resolve().parent
OLD = {"ex01": ROOT / "fresh_learners" / "set_a" / "ex01" / "01_amax_neginf.py",  # correct, written before the
       "ex03": ROOT / "fresh_learners" / "set_a" / "ex03" / "01_bmm.py"}  # exercises had a temperature


def test_the_warning_names_what_lacks_the_parameter_on_variant_0_only():
    ex03 = OLD["ex03"].read_text(encoding="utf-8")
    assert variant_default.lacking("ex03", ex03) == ["DotProductAttention", "AdditiveAttention"]
    assert variant_default.lacking("ex01", OLD["ex01"].read_text(encoding="utf-8")) == ["softmax", "masked_softmax"]
    for lang in ("en", "zh"):
        said = variant_default.class_variant_warning("ex03", 0, ex03, lang)
        assert said == t("grader.variant.class_will_fail", lang, ex_id="ex03", name="temperature",
                         where="DotProductAttention, AdditiveAttention", value="1")
    assert "every class variant" in variant_default.class_variant_warning("ex03", 0, ex03, "en")
    assert "每个课堂变体" in variant_default.class_variant_warning("ex03", 0, ex03, "zh")
    assert variant_default.class_variant_warning("ex03", 5, ex03) == ""  # a class variant's failing checks say it
    assert variant_default.class_variant_warning("ex03", -3, ex03) == ""  # a bad number is an error of its own
    for ex_id in sorted(variants.PARAMETERS):  # every reference takes its parameter
        reference = (ROOT.parent / "solutions" / variants.get_exercise(ex_id).filename).read_text(encoding="utf-8")
        assert variant_default.lacking(ex_id, reference) == [], ex_id
    one_missing = ex03.replace("def __init__(self, dropout", "def __init__(self, dropout, temperature=1.0", 1)
    assert one_missing != ex03 and variant_default.lacking("ex03", one_missing) == ["AdditiveAttention"]
    assert variant_default.lacking("ex03", None) == [] and variant_default.lacking("ex00x", ex03) == []


@pytest.mark.slow  # grades six files
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_file_without_the_parameter_passes_variant_0_and_is_told_a_class_variant_fails(lang):
    sources = {ex_id: path.read_text(encoding="utf-8") for ex_id, path in OLD.items()}
    reference = (ROOT.parent / "solutions" / "ex03_scoring.py").read_text(encoding="utf-8")
    submissions = [Submission(ex_id, source, path.name) for (ex_id, source), path in zip(sources.items(), OLD.values())]
    submissions += [Submission("ex03", sources["ex03"], "class.py", variant=5),
                    Submission("ex03", reference, "reference.py")]
    results = grade_submissions(submissions, lang=lang)
    for result, ex_id in zip(results[:2], OLD):
        assert result.passed, result.summary
        assert result.class_variant_warning == variant_default.class_variant_warning(ex_id, 0, sources[ex_id], lang) != ""
    assert not results[2].passed and results[2].class_variant_warning == ""  # the warning's claim: a class fails it
    assert results[3].passed and results[3].class_variant_warning == ""  # a file with the parameter: nothing to say
    report = Report("exercises", results, lang)
    again = Report.from_dict(report.to_dict())
    assert [r.class_variant_warning for r in again.exercises] == [r.class_variant_warning for r in results]
    out = io.StringIO()
    print_table(report, out)
    table = out.getvalue()
    for result in results[:2]:
        assert t("grader.table.class_variant", lang, warning=result.class_variant_warning) in table
    assert table.count(t("grader.table.class_variant", lang, warning="")) == 2
