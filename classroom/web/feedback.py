"""Stored verdicts in words for the class pages: the grader's own table and its mistake hints.

The web side reads these; the grading worker (classroom/line/grading.py) stays out
of its imports. The grader is imported where it is used (it loads torch and the checks).
"""

import io


def feedback_text(report):
    """The command line's table and messages for a stored version-1 report (an empty report: '')."""
    from grader.report import Report, print_table

    if not report or not report.get("exercises"):
        return ""
    out = io.StringIO()
    print_table(Report.from_dict(report), out=out)
    return out.getvalue()


def mistake_labels(ex_id, lang="en", ids=()):
    """{mistake id: text} for the analytics bars: every known mistake of an exercise (its hint), and each
    of `ids` that names an automatically found slip (worded from the id alone, in `lang`)."""
    from grader import checks as checks_registry
    from grader.diagnosis.explain import label
    from grader.text import hint_text

    labels = {m.id: hint_text(ex_id, m, lang) for m in checks_registry.for_exercise(ex_id).MISTAKES}
    for mistake in ids:
        text = label(mistake, lang)
        if text and mistake not in labels:
            labels[mistake] = text
    return labels
