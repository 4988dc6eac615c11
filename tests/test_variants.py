"""Correct answers in other styles pass: every file under tests/variants/exNN/ is graded as exNN.

The files are written as learners write them, from the stubs' docstrings alone (loops vs
vectorised, einsum vs bmm vs @, -inf vs -1e6 fills, float32 vs float64 tables, ...).
A grader that rejects one of them rejects a correct answer.
"""

from pathlib import Path

import pytest

from course.common.exercise_index import EXERCISES
from grader.core import Submission, grade_submissions

pytestmark = pytest.mark.slow  # grades every correct variant

VARIANTS = Path(__file__).resolve().parent / "variants"
FILES = sorted(VARIANTS.glob("ex*/*.py"))


@pytest.fixture(scope="module")
def graded():
    submissions = [Submission(path.parent.name, path.read_text(encoding="utf-8"), path.name) for path in FILES]
    return dict(zip(FILES, grade_submissions(submissions)))


def test_at_least_three_styles_per_exercise():
    for ex in EXERCISES:
        files = list((VARIANTS / ex.id).glob("*.py"))
        assert len(files) >= 3, (ex.id, files)
        for path in files:
            first = path.read_text(encoding="utf-8").splitlines()[0]
            assert first.startswith("# style: "), f"{path}: the first line names the style"


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.stem}" for p in FILES])
def test_correct_variant_passes(path, graded):
    result = graded[path]
    failing = [(c.name, c.message) for c in result.checks if not c.passed]
    assert result.passed and result.status == "passed", failing[:2]


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.stem}" for p in FILES])
def test_no_hint_on_a_passing_file(path, graded):
    result = graded[path]
    assert result.passed and not [c.hint for c in result.checks if c.hint]
