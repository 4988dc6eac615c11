"""The grading command's options: shared by the command line (grader/cli.py) and the long-lived grading
server (grader/serve.py). The grader only reports; it records nothing (the mode's Learner does)."""

import argparse
from pathlib import Path

from course.common.exercise_index import BY_ID
from course.common.i18n import LANGS

from . import notebook_submit, variants
from .sandbox import INSTALL_LINE, MODES, strict_problem
from .text import default_lang

DEFAULT_TARGET = Path(__file__).resolve().parent.parent / "exercises"


def parse_args(argv):
    """The grading options."""
    parser = argparse.ArgumentParser(
        prog="python -m grader",
        description="Grade the Attention Lab exercises against the reference solutions.",
        epilog="Also: `python -m grader hint ex03` lists the known pitfalls of an exercise.",
    )
    parser.add_argument("exercises", nargs="*", metavar="EXERCISE",
                        help=f"exercise ids to grade ({', '.join(BY_ID)}); default: all")
    parser.add_argument("--target", default=str(DEFAULT_TARGET),
                        help="directory laid out like exercises/, a directory of exported notebooks "
                             "or one .ipynb (default: exercises/)")
    parser.add_argument("--json", action="store_true", help="print a machine-readable JSON report")
    parser.add_argument("--watch", action="store_true", help="re-grade an exercise each time its file is saved")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per exercise (default 20)")
    parser.add_argument("--lang", choices=LANGS, default=default_lang(),
                        help="language of the messages (default: from LC_ALL / LC_MESSAGES / LANG)")
    parser.add_argument("--sandbox", choices=MODES, default="process",
                        help="process: fast, for grading your own work (default); strict: each exercise in its "
                             "own unprivileged bubblewrap sandbox, for code you do not trust (needs root, "
                             f"bubblewrap and setpriv: `{INSTALL_LINE}`)")
    parser.add_argument("--variant", default="0",
                        help="your exercise variant (a class gives each learner one; 0, the default, is the "
                             "published exercise): its parameter values are printed before the report")
    parser.add_argument("--no-save", action="store_true",
                        help="leave no report for the app to record: the run does not count as progress "
                             "(checking the references, a trial run)")
    parser.add_argument("--report-fd", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--watch-max-runs", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    unknown = [e for e in args.exercises if e not in BY_ID]
    if unknown:
        parser.error(f"unknown exercise {unknown[0]!r}; use one of {', '.join(BY_ID)}")
    try:
        args.variant = variants.check_number(args.variant)
    except variants.VariantError as err:
        parser.error(f"--variant: {err}")
    if not (Path(args.target).is_dir() or notebook_submit.is_notebook_file(args.target)):
        parser.error(f"--target {args.target!r} is not a directory or a .ipynb notebook")
    if args.watch and notebook_submit.is_notebook_file(args.target):
        parser.error("--watch follows .py exercise files; grade a notebook without --watch")
    if args.sandbox == "strict" and strict_problem():
        parser.error(f"--sandbox strict cannot run here: {strict_problem()}")
    return args

