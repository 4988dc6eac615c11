"""The grading report: per-check and per-exercise results, its JSON form and the text table.

Plain data classes shared by the grader's command line, the notebooks' grading
cell and the app's grading client (which reads the JSON, version REPORT_VERSION).
"""

import sys
from dataclasses import asdict, dataclass, field

from course.common.exercise_index import GRADER_STATUSES

REPORT_VERSION = 1
STATUS_LABELS = {"passed": "passed", "failed": "FAILED", "not_written": "not written yet", "error": "ERROR"}
assert set(STATUS_LABELS) == set(GRADER_STATUSES), "every status the grader saves needs a label"


@dataclass
class CheckResult:
    name: str
    passed: bool
    message: str = ""
    hint: str | None = None
    call: str = ""
    kind: str = "ok"  # ok | mismatch | not_implemented | error | missing

@dataclass
class ExerciseResult:
    id: str
    title: str
    file: str
    status: str  # passed | failed | not_written | error
    passed: bool
    score: float
    duration_s: float
    summary: str
    checks: list = field(default_factory=list)
    output: str = ""

    def to_dict(self):
        return asdict(self)

@dataclass
class Report:
    target: str
    exercises: list

    @property
    def passed(self):
        return all(ex.passed for ex in self.exercises)

    def to_dict(self):
        return {
            "version": REPORT_VERSION,
            "target": self.target,
            "passed": self.passed,
            "exercises": [ex.to_dict() for ex in self.exercises],
        }


def print_table(report, out=sys.stdout):
    """The readable summary: one row per exercise, then the first problem of each."""
    rows = [(ex.id, ex.title, STATUS_LABELS[ex.status],
             f"{sum(c['passed'] if isinstance(c, dict) else c.passed for c in ex.checks)}/{len(ex.checks)}")
            for ex in report.exercises]
    widths = [max(len(r[i]) for r in rows + [("id", "exercise", "status", "checks")]) for i in range(4)]
    line = "  ".join(f"{{:<{w}}}" for w in widths)
    print(line.format("id", "exercise", "status", "checks"), file=out)
    print(line.format(*("-" * w for w in widths)), file=out)
    for row in rows:
        print(line.format(*row), file=out)
    for ex in report.exercises:
        if ex.passed:
            continue
        print(f"\n{ex.id} {ex.title} ({ex.file}): {STATUS_LABELS[ex.status]}", file=out)
        if ex.status == "not_written":
            print(f"  {ex.summary}", file=out)
            continue
        first = next(c for c in ex.checks if not c.passed)
        print(f"  check:    {first.name}", file=out)
        if first.call:
            print(f"  called:   {first.call}", file=out)
        print(f"  problem:  {first.message}", file=out)
        if first.hint:
            print(f"  hint:     {first.hint}", file=out)
        others = sum(not c.passed for c in ex.checks) - 1
        if others:
            print(f"  ({others} more failing check(s); fix this one first)", file=out)
        if ex.output.strip():
            print("  your code printed:\n    " + "\n    ".join(ex.output.strip().splitlines()[:10]), file=out)
    passed = sum(ex.passed for ex in report.exercises)
    print(f"\n{passed}/{len(report.exercises)} exercises passed.", file=out)
