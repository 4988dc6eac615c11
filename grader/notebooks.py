"""Jupyter notebooks: `python -m grader notebooks` and the grading cell's `grade_in_notebook`.

- Export: grader/notebook_export.py writes one notebook per exercise.
- Submissions: grader/notebook_submit.py reads the tagged answer cells of
  saved notebooks (`python -m grader --target DIR|FILE.ipynb`).
- Inside a running notebook, `grade_in_notebook("ex03")` grades the answer
  cell the learner last ran, in the sandbox, and prints the command line's
  table.
"""

import argparse
import io
import sys
from pathlib import Path

from course.common import pages_index
from course.common.exercise_index import BY_ID
from course.common.exercise_index import get as get_exercise
from course.common.i18n import LANGS, t
from course.common.paths import PROJECT_ROOT

from .notebook_export import APP_URL, build_notebook, export_notebooks, notebook_text  # noqa: F401
from .notebook_submit import answer_marker, answer_tag, read_notebook_sources  # noqa: F401
from .text import tr


def parse_args(argv):
    """The export options."""
    parser = argparse.ArgumentParser(
        prog="python -m grader notebooks",
        description="Export each exercise as a Jupyter notebook with its grading cell.",
    )
    parser.add_argument("exercises", nargs="*", metavar="EXERCISE",
                        help=f"exercise ids to export ({', '.join(BY_ID)}); default: all")
    parser.add_argument("--lang", choices=LANGS, default="en", help="language of the text (default en)")
    parser.add_argument("--out", default=None, help="output folder (default: notebooks/<lang>/ in the repository)")
    parser.add_argument("--force", action="store_true",
                        help="overwrite notebooks whose answer cell holds work")
    args = parser.parse_args(argv)
    unknown = [e for e in args.exercises if e not in BY_ID]
    if unknown:
        parser.error(f"unknown exercise {unknown[0]!r}; use one of {', '.join(BY_ID)}")
    if args.out and Path(args.out).exists() and not Path(args.out).is_dir():
        parser.error(f"--out {args.out!r} is a file, not a folder")
    return args


def main(argv=None):
    """`python -m grader notebooks [EXERCISE ...] [--out DIR] [--lang zh|en]`; returns the exit code."""
    try:
        args = parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exit_:
        return int(exit_.code or 0)
    out = Path(args.out) if args.out else PROJECT_ROOT / "notebooks" / args.lang
    export_notebooks(out, args.lang, args.exercises or None, force=args.force)
    return 0


def last_answer(ex_id, history):
    """(source, input number) of the last executed cell that starts with the answer marker."""
    marker = answer_marker(ex_id)
    for number in range(len(history) - 1, -1, -1):
        lines = (history[number] or "").lstrip().splitlines()
        if lines and (lines[0].rstrip() == marker or lines[0].startswith(marker + " ")):
            return history[number], number
    return None, None


def _kernel_history():
    """The raw source of every cell run so far in this IPython kernel."""
    try:
        from IPython import get_ipython
    except ImportError:
        get_ipython = None
    shell = get_ipython() if get_ipython else None
    if shell is None:
        raise RuntimeError("grade_in_notebook runs inside Jupyter (an IPython kernel); "
                           "from a terminal use `python -m grader --target NOTEBOOK.ipynb`")
    return list(shell.history_manager.input_hist_raw)


def link_line(ex_id, lang):
    """Where to read about the exercise in the app, as plain text."""
    page = pages_index.BY_KEY.get(get_exercise(ex_id).chapter)
    if page is not None and page.file.is_file():
        return f"{t(page.heading_key, lang)}: {APP_URL}/{page.url_path}"
    return f"{t('nav.practice', lang)}: {APP_URL}/{pages_index.get('practice').url_path}?ex={ex_id}"


def grade_in_notebook(ex_id, lang="en", history=None, limits=None, out=None):
    """Grade the answer cell last run in this notebook and print the command line's feedback.

    `history` (the cells' sources in run order) defaults to the kernel's own.
    Returns the Report, or None when no answer cell has been run.
    """
    from .core import Submission, grade_submissions
    from .report import Report, print_table

    out = out or sys.stdout
    get_exercise(ex_id)  # a clear error for an unknown id
    source, number = last_answer(ex_id, _kernel_history() if history is None else history)
    if source is None:
        print(tr("notebook.no_answer", lang, ex_id=ex_id, marker=answer_marker(ex_id), tag=answer_tag(ex_id)),
              file=out)
        return None
    where = tr("notebook.answer_cell_n", lang, number=number) if number else tr("notebook.answer_cell", lang)
    submission = Submission(ex_id, source + "\n", tr("notebook.your", lang, where=where), where)
    report = Report("", grade_submissions([submission], limits, lang=lang), lang)
    text = io.StringIO()
    print_table(report, out=text, lang=lang)
    print(text.getvalue().rstrip(), file=out)
    print(f"\n{link_line(ex_id, lang)}", file=out)
    return report
