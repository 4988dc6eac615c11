"""Command line: `python -m grader [ex03 ...] [--target DIR] [--json] [--watch] [--sandbox MODE]`.

Also `python -m grader hint ex03 [--lang zh|en]`: the known pitfalls of one exercise, and
`python -m grader mutants [exNN ...]`: build the automatic mutants' caches once (grader/diagnosis/), and
`python -m grader serve`: grade request after request with one warm sandbox server (grader/serve.py).
`--lang zh|en` (default: from LC_ALL, LC_MESSAGES, LANG) sets the language of every
message; the JSON report keeps stable ids (check ids, mistake ids, statuses) beside them.
Exit code 0 when everything graded passed, 1 when something failed, 2 for a
usage error.
"""

import json
import os
import signal
import sys
import time
from pathlib import Path

from course.common.exercise_index import BY_ID
from course.common.exercise_index import get as get_exercise
from course.common.i18n import LANGS

from course.common.paths import atomic_write_text, waiting_reports_dir

from . import checks as checks_registry
from . import notebook_submit, variants, warm_server
from .options import parse_args
from .report import print_table
from .sandbox import HARNESS_DIR, RUN_PREFIX, SandboxLimits
from .text import default_lang, hint_text, tr


def run_once(args, ex_ids):
    """Grade once and print; returns the Report.

    The run's sandbox server is started first, in a thread, so that its interpreter start and torch import
    overlap this process's (torch is imported with grader.core, after it); --watch keeps it for every run."""
    warm_server.prestart(args.sandbox, HARNESS_DIR, RUN_PREFIX)
    from .core import grade

    limits = SandboxLimits(timeout_s=args.timeout, mode=args.sandbox, warm=True)
    total = len(ex_ids)

    def on_progress(done, total, ex_id, status):
        if args.json:  # machine-read by the app's grading client: never translated
            print(f"progress: {done}/{total} {ex_id} {status}", file=sys.stderr, flush=True)

    ran = []

    def on_ran(ex_id):
        ran.append(ex_id)
        if not args.json:
            print("\r  " + tr("cli.ran", args.lang, done=len(ran), total=total, ex_id=ex_id),
                  end="", file=sys.stderr, flush=True)

    if not args.json:
        print(tr("cli.grading", args.lang, target=args.target, total=total), file=sys.stderr, flush=True)
        if args.variant:
            for ex_id in ex_ids:
                print("  " + variants.variant_line(ex_id, args.variant, args.lang), file=sys.stderr, flush=True)
    report = grade(args.target, ex_ids, limits, on_progress=on_progress, on_ran=on_ran, lang=args.lang,
                   variant=args.variant)
    if not args.json:
        print(file=sys.stderr)
    if not args.json and args.report_fd is None and not args.no_save:
        leave_for_app(report, args.target)
    if args.report_fd is not None:  # the app's grading client reads this descriptor, which it owns
        data = json.dumps(report.to_dict(), ensure_ascii=False, allow_nan=False).encode()  # strict JSON
        os.ftruncate(args.report_fd, 0)
        os.pwrite(args.report_fd, data, 0)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False, allow_nan=False))
    else:
        print_table(report, lang=args.lang)
    return report


def leave_for_app(report, target):
    """A person's terminal run: leave the report where the app's self-study Learner finds it, records it and
    removes it (course/app/progress.py); the grader itself records nothing."""
    name = f"{time.time_ns()}-{os.getpid()}.json"
    waiting = {"version": 1, "target": str(Path(target).resolve()), "report": report.to_dict()}
    atomic_write_text(waiting_reports_dir() / name, json.dumps(waiting, ensure_ascii=False, allow_nan=False))


def watch(args, ex_ids):
    """Re-grade an exercise whenever its file changes (polling, no extra deps)."""
    files = {ex_id: Path(args.target) / get_exercise(ex_id).filename for ex_id in ex_ids}

    def stamp(path):
        try:
            stat = path.stat()
            return (stat.st_mtime_ns, stat.st_size)
        except FileNotFoundError:
            return None

    seen = {ex_id: stamp(p) for ex_id, p in files.items()}
    print(tr("cli.watching", args.lang, target=args.target), flush=True)
    runs = 0
    run_once(args, ex_ids)
    runs += 1
    try:
        while args.watch_max_runs is None or runs < args.watch_max_runs:
            time.sleep(0.3)
            changed = [ex_id for ex_id, p in files.items() if stamp(p) != seen[ex_id]]
            if not changed:
                continue
            time.sleep(0.2)  # let the editor finish writing
            for ex_id in changed:
                seen[ex_id] = stamp(files[ex_id])
            print("\n" + tr("cli.changed", args.lang, ids=", ".join(changed)), flush=True)
            run_once(args, changed)
            runs += 1
    except KeyboardInterrupt:
        print("\n" + tr("cli.stopped", args.lang))
    return 0


def print_hints(ex_id, lang="en"):
    """The known pitfalls of one exercise, on demand (each hint once)."""
    exercise = get_exercise(ex_id)
    print(tr("cli.pitfalls", lang, ex_id=ex_id, filename=exercise.filename))
    hints = []
    for mistake in checks_registry.for_exercise(ex_id).MISTAKES:
        text = hint_text(ex_id, mistake, lang)
        if text not in hints:
            hints.append(text)
    for number, text in enumerate(hints, 1):
        print(f"  {number}. {text}")
    return 0


def _take_lang(argv):
    """(argv without --lang X / --lang=X, the language or the locale's default)."""
    lang, rest, i = default_lang(), [], 0
    while i < len(argv):
        if argv[i] == "--lang" and i + 1 < len(argv):
            lang, i = argv[i + 1], i + 2
            continue
        if argv[i].startswith("--lang="):
            lang = argv[i].split("=", 1)[1]
        else:
            rest.append(argv[i])
        i += 1
    return rest, lang


def _terminate(signum, frame):
    """SIGTERM: leave through the normal exits (finally blocks clean up)."""
    raise SystemExit(128 + signum)


def main(argv=None):
    """Entry point; returns the process exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["hint"]:
        rest, lang = _take_lang(argv)
        if len(rest) != 2 or rest[1] not in BY_ID or lang not in LANGS:
            print(f"usage: python -m grader hint EXERCISE [--lang {'|'.join(LANGS)}]  "
                  f"(EXERCISE: one of {', '.join(BY_ID)})", file=sys.stderr)
            return 2
        return print_hints(rest[1], lang)
    if argv[:1] == ["mutants"]:  # build the diagnosis caches ahead of a class (otherwise: at a first failure)
        from .diagnosis import mutants

        for line in mutants.build(argv[1:] or list(BY_ID))[0]:
            print(line)
        return 0
    if argv[:1] == ["serve"]:  # the Practice page's long-lived grader (grader/serve.py)
        from .serve import serve

        signal.signal(signal.SIGTERM, _terminate)
        return serve()
    if argv[:1] == ["notebooks"]:
        from .notebooks import main as notebooks_main

        return notebooks_main(argv[1:])
    try:
        args = parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    ex_ids = args.exercises or notebook_submit.default_exercises(args.target)
    os.environ.setdefault("PYTHONHASHSEED", "0")
    signal.signal(signal.SIGTERM, _terminate)  # so that the run folder is removed on the way out
    if args.watch:
        return watch(args, ex_ids)
    report = run_once(args, ex_ids)
    return 0 if report.passed else 1
