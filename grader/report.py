"""The grading report: per-check and per-exercise results, its JSON form and the text table.

Plain data classes shared by the grader's command line, the notebooks' grading
cell, the app's grading client (which reads the JSON, version REPORT_VERSION) and
the class server (which stores the JSON and reads it back with `Report.from_dict`).
The JSON form is strict JSON: a NaN or infinite number (a learner's wrong weights)
is written as the text "NaN", "Infinity" or "-Infinity" (course/common/json_numbers.py).
Texts are in the report's language; beside them stay the stable ids a class
server aggregates on: each check's `id`, the `mistake` id of a known mistake
recognised in it, and each exercise's `id` and `status`. (Version 1 gained
`lang`, `id`, `mistake`, `checks_passed` and `checks_total`; readers of the older
fields are unaffected; `class_variant_warning` came later, with a default.)
"""

import sys
from dataclasses import asdict, dataclass, field, fields

from course.common.exercise_index import GRADER_STATUSES
from course.common.exercise_index import get as get_exercise
from course.common.i18n import t
from course.common.json_numbers import json_ready

from .text import tr

REPORT_VERSION = 1


def status_label(status, lang="en"):
    """The table's word for an exercise status."""
    return tr(f"status.{status}", lang)


@dataclass
class CheckResult:
    name: str
    passed: bool
    message: str = ""
    hint: str | None = None
    call: str = ""
    kind: str = "ok"  # ok | mismatch | not_implemented | error | missing
    id: str = ""  # stable check id, e.g. "ex03.DotProductAttention.2"
    mistake: str | None = None  # id of the known mistake recognised here, or of the automatic one ("auto:...")
    weights: dict | None = None  # the failing example's weights beside the expected ones (grader/weight_diff.py)

    @classmethod
    def from_dict(cls, data):
        """The check of one entry of a report's JSON (keys this version does not know are ignored)."""
        return cls(**_known(cls, data))


@dataclass
class ExerciseResult:
    id: str
    title: str
    file: str
    status: str  # one of GRADER_STATUSES: passed | failed | not_written | error | blocked
    passed: bool
    score: float
    duration_s: float
    summary: str
    checks: list = field(default_factory=list)
    output: str = ""
    checks_passed: int = 0  # before "not started" stubs were folded into one entry
    checks_total: int = 0
    # the exercise variant graded (grader/variants.py): {"number": N, "params": {name: value}}; params is {} for
    # an exercise without a parameter and None for a number that does not generate
    variant: dict | None = None
    # on the published exercise (variant 0): why every class variant will fail this file (it lacks the exercise's
    # parameter, whose checks were not applicable here; grader/diagnosis/variant_default.class_variant_warning), else ""
    class_variant_warning: str = ""

    def to_dict(self):
        """Its JSON form: a NaN or infinite number (a learner's weights) written as text (json_ready)."""
        return json_ready(asdict(self))

    @classmethod
    def from_dict(cls, data):
        """The exercise result of one entry of a report's JSON (inverse of to_dict)."""
        if data.get("status") not in GRADER_STATUSES:
            raise ValueError(f"unknown exercise status {data.get('status')!r}; use one of {GRADER_STATUSES}")
        known = _known(cls, data)
        known["checks"] = [CheckResult.from_dict(c) for c in data.get("checks", [])]
        return cls(**known)

    @classmethod
    def error(cls, ex_id, message, check="sandbox", lang="en"):
        """An exercise that could not be graded, with one failing check saying why (check: its stable id)."""
        return cls._one_check(ex_id, "error", message, check, lang)

    @classmethod
    def blocked(cls, ex_id, deps, hosted, lang="en"):
        """An exercise not run because the learner's own `deps` did not pass ("pass ex03 first").

        hosted: the dependencies came from the learner's earlier submissions (none passed),
        else from this run's own submissions (they failed here).
        """
        why = tr("blocked.hosted" if hosted else "blocked.this_run", lang)
        message = tr("blocked.message", lang, names=tr("blocked.and", lang).join(deps), ex_id=ex_id, why=why)
        return cls._one_check(ex_id, "blocked", message, "dependencies", lang)

    @classmethod
    def _one_check(cls, ex_id, status, message, check, lang):
        return cls(ex_id, t(f"exercises.{ex_id}.title", lang), get_exercise(ex_id).filename, status, False, 0.0,
                   0.0, message, [CheckResult(tr(f"check.{check}", lang), False, message, kind="error",
                                              id=f"{ex_id}.{check}")], checks_passed=0, checks_total=1)


@dataclass
class Report:
    target: str
    exercises: list
    lang: str = "en"

    @property
    def passed(self):
        return all(ex.passed for ex in self.exercises)

    def to_dict(self):
        return {
            "version": REPORT_VERSION,
            "lang": self.lang,
            "target": self.target,
            "passed": self.passed,
            "exercises": [ex.to_dict() for ex in self.exercises],
        }

    @classmethod
    def from_dict(cls, data):
        """The report of its JSON form (to_dict, or a stored version-1 report); a newer version is refused."""
        version = data.get("version", REPORT_VERSION)
        if not isinstance(version, int) or version > REPORT_VERSION:
            raise ValueError(f"report version {version!r}: this grader reads versions up to {REPORT_VERSION}")
        return cls(data.get("target", ""), [ExerciseResult.from_dict(e) for e in data["exercises"]],
                   data.get("lang", "en"))


def _known(cls, data):
    """The items of `data` that are fields of the dataclass `cls`."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}


def _counts(ex):
    """(passed, total) checks of an exercise result (object or JSON dict)."""
    get = ex.get if isinstance(ex, dict) else lambda k, d=None: getattr(ex, k, d)
    if get("checks_total"):
        return get("checks_passed", 0), get("checks_total")
    checks = get("checks", [])
    return sum(c["passed"] if isinstance(c, dict) else c.passed for c in checks), len(checks)


def print_table(report, out=sys.stdout, lang=None):
    """The readable summary: one row per exercise, then the first problem of each."""
    lang = lang or getattr(report, "lang", "en")
    head = tuple(tr(f"table.{k}", lang) for k in ("id", "exercise", "status", "checks"))
    rows = [(ex.id, ex.title, status_label(ex.status, lang), "{}/{}".format(*_counts(ex)))
            for ex in report.exercises]
    widths = [max(_width(r[i]) for r in rows + [head]) for i in range(4)]
    print("  ".join(_pad(c, w) for c, w in zip(head, widths)).rstrip(), file=out)
    print("  ".join("-" * w for w in widths), file=out)
    for row in rows:
        print("  ".join(_pad(c, w) for c, w in zip(row, widths)).rstrip(), file=out)
    for ex in report.exercises:
        if ex.passed:
            continue
        print("\n" + tr("table.exercise_line", lang, ex_id=ex.id, title=ex.title, file=ex.file,
                         status=status_label(ex.status, lang)), file=out)
        if ex.status == "not_written":
            print(f"  {ex.summary}", file=out)
            continue
        first = next(c for c in ex.checks if not c.passed)
        label = _labels(lang)
        print(f"  {label['check']}{first.name}", file=out)
        if first.call:
            print(f"  {label['called']}{first.call}", file=out)
        print(f"  {label['problem']}{first.message}", file=out)
        if first.weights:
            from .weight_diff import text_lines

            for line in text_lines(first.weights, lang):
                print(f"    {line}", file=out)
        if first.hint:
            print(f"  {label['hint']}{first.hint}", file=out)
        elif ex.status == "failed":
            print("  " + tr("table.no_hint", lang, ex_id=ex.id), file=out)
        others = sum(not c.passed for c in ex.checks) - 1
        if others:
            print("  " + tr("table.more_failing_one" if others == 1 else "table.more_failing", lang, count=others),
                  file=out)
        if ex.output.strip():
            print("  " + tr("table.printed", lang) + "\n    "
                  + "\n    ".join(ex.output.strip().splitlines()[:10]), file=out)
    for ex in report.exercises:
        if ex.class_variant_warning:
            print("\n" + tr("table.class_variant", lang, warning=ex.class_variant_warning), file=out)
    passed = sum(ex.passed for ex in report.exercises)
    key = "table.passed_one" if len(report.exercises) == 1 else "table.passed"
    print("\n" + tr(key, lang, passed=passed, total=len(report.exercises)), file=out)


def _width(text):
    """Columns a string takes in a terminal (CJK characters take two)."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in str(text))


def _pad(text, width):
    """text padded with spaces to `width` terminal columns."""
    return str(text) + " " * (width - _width(text))


def _labels(lang):
    """The aligned labels of the problem lines: check, called, problem, hint."""
    names = {k: tr(f"table.{k}", lang) for k in ("check", "called", "problem", "hint")}
    colon = tr("table.colon", lang)  # full-width in Chinese
    width = max(_width(v) for v in names.values()) + 2
    return {k: _pad(v + colon, width) for k, v in names.items()}
