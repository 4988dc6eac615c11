"""The diagnosis on a learner's own exercise variant: every learner bug that must be named on the published
exercise (tests/test_diagnosis.py MUST_NAME) and every registered mistake (grader/checks MISTAKES) is named on
a non-default variant too, and a file right for another value of the parameter is told exactly that.

Files are written for the variant the way tests/exercise_variant_support.py `personalise` writes them. The
learner bugs are graded in the sandbox (the whole path, demo stage included); the registered mistakes (trusted
reference-derived files, over 80) are run in this process and judged by the grader's own judge_exercise.
"""

from pathlib import Path

import pytest
import torch

from grader import checks as checks_registry
from grader import variants
from grader.core import reference_modules
from grader.diagnosis import mutants, variant_default
from grader.harness import seed_call
from grader.harness.child import describe_error
from grader.judge import judge_exercise
from grader.mistakes import apply_mistake
from grader.sandbox import JobResult, SandboxLimits
from tests.exercise_variant_support import PROCEDURES, built, load_module, personalise
from tests.test_diagnosis import MUST_NAME, is_right
from tests.test_exercise_variants import correct_files

ROOT = Path(__file__).resolve().parent.parent
NUMBER = 123457  # a non-default variant of every exercise
EXERCISES = sorted(variants.PARAMETERS)


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny tensors: one torch thread, as the grader runs them."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def judged(ex_id, source, tag, number=NUMBER, lang="en"):
    """The ExerciseResult of a trusted file on a variant: run here, judged as the grader judges."""
    mutants.ensure([ex_id])
    checks, references = built(ex_id, number)
    module = load_module(ex_id, source, tag)

    def modules(name):
        return module if name == module.EXERCISE_MODULE else reference_modules(name)

    records = []
    for index, check in enumerate(checks):
        seed_call(index)
        try:
            records.append({"ok": PROCEDURES[check.procedure](modules, variants.learner_spec(check.spec))})
        except Exception as err:  # a raising file fails the check
            records.append({"error": describe_error(err, str(ROOT / "tests"))})
    job = JobResult(records, None, {}, "")
    return judge_exercise(ex_id, checks, references, job, f"{tag}.py", SandboxLimits(), source, lang).result


def first_hint(result):
    return next(c for c in result.checks if not c.passed).hint


def registered():
    """Every registered mistake but the import slips: the module they import exists in this process (the
    sandbox stages only the learner's files), and their error message names them the same on every variant."""
    return [(ex_id, m) for ex_id in EXERCISES for m in checks_registry.for_exercise(ex_id).MISTAKES
            if "No module named" not in (m.raises or "")]


@pytest.mark.slow  # judges every registered mistake on a variant
@pytest.mark.parametrize("ex_id,mistake", registered(), ids=[f"{e}/{m.id}" for e, m in registered()])
def test_a_registered_mistake_is_named_on_a_variant(ex_id, mistake):
    source = personalise(apply_mistake(correct_files(ex_id)[0].read_text(encoding="utf-8"), mistake), ex_id, NUMBER)
    result = judged(ex_id, source, mistake.id)
    assert result.status == "failed", result.summary
    assert mistake.id in {c.mistake for c in result.checks}, [(c.id, c.mistake, c.hint) for c in result.checks
                                                               if not c.passed][:3]


@pytest.mark.slow  # judges a file on a variant
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_file_right_for_the_published_value_is_told_its_default_and_nothing_else(lang):
    source = correct_files("ex01")[0].read_text(encoding="utf-8")  # written for variant 0: temperature=1.0
    value = variants.describe(variants.variant("ex01", NUMBER))[0][1]
    hint = first_hint(judged("ex01", source, "published_default", lang=lang))
    assert f"temperature={value}" in hint and ("is 1," in hint if lang == "en" else "是 1，" in hint), hint
    # the whole hint: the value and what to write, no mutant guessed after it
    assert hint.endswith(f"temperature={value} as the default." if lang == "en" else f"temperature={value}。"), hint


def test_the_value_is_read_from_the_source_without_running_it():
    source = ("raise SystemExit('never run')\n"
              "class PositionalEncoding:\n    def __init__(self, num_hiddens, dropout, max_len=1000, base=2500.0):\n"
              "        pass\n")
    assert variant_default.written("ex06", source) == [
        variant_default.Written("PositionalEncoding.__init__", 2500.0, "default")]
    fixed = "class PositionalEncoding:\n    def __init__(self, n, max_len=1000):\n        x = 1 / 1000.0 ** 2\n"
    said = variant_default.written("ex06", fixed)
    assert [(w.value, w.how) for w in said] == [(1, "constant"), (1000.0, "constant"), (2, "constant"),
                                                (None, "missing")]
    assert variant_default.written("ex06", "def broken(:\n") == []


@pytest.mark.slow  # grades 21 learner bugs in the sandbox (with the demo stage), about 15 s
def test_every_learner_bug_that_must_be_named_is_named_on_a_variant():
    from grader.core import Submission, grade_submissions

    paths = [ROOT / "tests" / "learner_bugs" / f"{bug}.py" for bug in sorted(MUST_NAME)]
    submissions = [Submission(p.parent.name, personalise(p.read_text(encoding="utf-8"), p.parent.name, NUMBER),
                              p.name, variant=NUMBER) for p in paths]
    results = grade_submissions(submissions)
    wrong = [(p.stem, r.status, first_hint(r)) for p, r in zip(paths, results)
             if r.status != "failed" or not (first_hint(r) and is_right(p, first_hint(r)))]
    assert not wrong, wrong
