"""The autograder: `python -m grader` grades exercises/ against solutions/.

Public entry points: `grade(target, ex_ids)` returns a Report; the CLI in
grader/cli.py prints it as a table or JSON and saves the learner's progress.
"""

from .core import Submission, grade, grade_submissions  # noqa: F401
from .report import Report  # noqa: F401
from .sandbox import SandboxLimits  # noqa: F401
