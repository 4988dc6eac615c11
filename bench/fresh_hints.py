"""How the grader's hints generalise: grade a fresh set of learner files (written from the exercise
docstrings alone) and print, per exercise and in total, the verdicts that are right, the failing files
whose hint names the function and the mistake, the misleading hints, the correct files that pass with no
hint, the failing files whose report names the sub-step that first differs, and what the diagnosis costs.

    python bench/fresh_hints.py tests/fresh_learners/set_a [--grader PATH] [--list]

Each file's header: line 1 `# style: ...`, line 2 `# bug: <function> | <what is wrong>` or `# bug: none`,
and for a failing file a line `# expect: <function> | <phrase>`: the phrase a right hint contains
(tests/learner_bugs/README.md). A hint is right when it names the function (or is the registered hint of
a known mistake) and contains the phrase; any other hint counts as misleading.

--grader PATH grades with the grader of another checkout (main's, for the figure before a change); the
mutant caches of that grader version are built first, outside the timing. The diagnosis time is the wall
time of the hinting steps (known mistakes, raising mistakes, automatic mutants) while judging one failing
exercise, measured inside the judging fork; it excludes the sandboxed run.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--grader", type=Path, default=HERE, help="the checkout whose grader grades")
    parser.add_argument("--list", action="store_true", help="print every file's outcome")
    parser.add_argument("--jsonl", type=Path, help="also write every file's whole outcome (bug line, expect line, "
                        "verdict, first hint, first failing check's message) to this file, one JSON object a line, "
                        "for judging the hints by reading")
    return parser.parse_args()


def header(path):
    """{'bug': ..., 'expect': (function, phrase) or None} from a fresh file's comment lines."""
    found = {"bug": None, "expect": None}
    for line in path.read_text(encoding="utf-8").splitlines()[:6]:
        key, _, value = line.lstrip("# ").partition(":")
        if key == "bug":
            found["bug"] = value.strip()
        elif key == "expect":
            function, _, phrase = value.partition("|")
            found["expect"] = (function.strip(), phrase.strip())
    return found


def fresh_files(folder):
    """(path, header) of every exercise file under folder/exNN/."""
    return [(p, header(p)) for p in sorted(folder.glob("ex*/*.py"))]


def _failing(args):
    """Does one of a hinting step's arguments hold a failing check result?"""
    return any(isinstance(a, list) and any(getattr(r, "passed", True) is False for r in a) for a in args)


def timed(module, name, log):
    """Wrap module.name so that each call on a failing exercise appends its wall time to `log` (this runs
    inside the judging fork)."""
    inner = getattr(module, name)

    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            if _failing(args):
                ex_id = next(a for a in args if isinstance(a, str))
                with open(log, "a", encoding="utf-8") as out:
                    out.write(f"{os.getpid()} {ex_id} {time.perf_counter() - start:.6f}\n")

    setattr(module, name, wrapper)


def first_hint(result):
    """The hint of the first failing check that has one, else ''."""
    return next((c.hint for c in result.checks if not c.passed and c.hint), "")


def located(result):
    """Does a failing check's message name the sub-step that first differs (or, for an error, the learner's
    line that raised)?"""
    return any(not c.passed and ("Located:" in c.message or "定位：" in c.message
                                 or c.kind == "error" and ", line " in c.message) for c in result.checks)


def hint_is_right(expect, hint, registered):
    """The one rule for a right hint: it names the expected function (or is the registered hint of a known
    mistake) and contains the expected phrase. expect: (function, phrase); registered: the exercise's hints."""
    function, phrase = expect
    return bool(hint) and (function in hint or hint in registered) and phrase.lower() in hint.lower()


def judge_file(path, head, result, registered):
    """One file's outcome: kind ('correct'/'failing'), verdict_right, hinted_right, misleading, quiet."""
    hint = first_hint(result)
    if head["expect"] is None:  # a correct file (`# bug: none`, or judged correct after reading it)
        quiet = result.passed and not any(c.hint for c in result.checks)
        return {"kind": "correct", "right": result.passed, "quiet": quiet, "hint": hint}
    right = hint_is_right(head["expect"], hint, registered)
    return {"kind": "failing", "right": result.status == "failed", "hinted": right,
            "misleading": bool(hint) and not right, "located": located(result), "hint": hint}


def main():
    args = parse_args()
    grader_root = args.grader.resolve()
    sys.path.insert(0, str(grader_root))
    os.chdir(grader_root)
    from grader import checks as checks_registry
    from grader import judge
    from grader.core import Submission, grade_submissions
    from grader.diagnosis import mutants
    from grader.text import hint_text

    files = fresh_files(args.folder.resolve())
    ex_ids = sorted({p.parent.name for p, _ in files})
    mutants.BUILD_TIMEOUT_S = 3600  # a loaded machine may need longer than the grader's bound; outside the timing
    mutants.ensure(ex_ids)
    log = Path(tempfile.mkstemp(prefix="fresh-hints-", suffix=".log")[1])
    for name in ("add_hints", "add_error_hints", "add_mutant_hint"):
        timed(judge, name, log)
    start = time.perf_counter()
    results = grade_submissions([Submission(p.parent.name, p.read_text(encoding="utf-8"), p.name) for p, _ in files])
    wall = time.perf_counter() - start
    diag = _diagnosis_times(log)
    log.unlink(missing_ok=True)
    rows = {}
    for (path, head), result in zip(files, results):
        ex_id = path.parent.name
        registered = {hint_text(ex_id, m, "en") for m in checks_registry.for_exercise(ex_id).MISTAKES}
        outcome = judge_file(path, head, result, registered)
        rows.setdefault(ex_id, []).append((path, outcome, result))
        if args.list:
            _print_file(path, head, outcome, result)
        if args.jsonl:
            _write_row(args.jsonl, path, head, outcome, result)
    _print_table(rows, diag)
    print(f"graded {len(files)} files in {wall:.1f} s (load {os.getloadavg()[0]:.2f})")


def _diagnosis_times(log):
    """{ex_id: [seconds per judged exercise]}: the hinting steps of one judging (one fork) summed."""
    per_fork = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        pid, ex_id, seconds = line.split()
        key = (pid, ex_id)
        per_fork[key] = per_fork.get(key, 0.0) + float(seconds)
    times = {}
    for (_, ex_id), seconds in per_fork.items():
        times.setdefault(ex_id, []).append(seconds)
    return times


def _tag(outcome):
    """A failing file's outcome in a word: RIGHT, MISLEADING or no hint."""
    return "RIGHT" if outcome["hinted"] else ("MISLEADING" if outcome["misleading"] else "no hint")


def _write_row(out, path, head, outcome, result):
    """One file's whole outcome as a JSON line appended to out."""
    failing = next((c for c in result.checks if not c.passed), None)
    row = {"file": f"{path.parent.name}/{path.name}", "bug": head["bug"], "expect": head["expect"],
           "status": result.status, "passed": result.passed,
           "tag": "correct" if outcome["kind"] == "correct" else _tag(outcome),
           "located": outcome.get("located"), "hint": outcome["hint"],
           "first_failing": failing and {"name": failing.name, "message": failing.message}}
    with open(out, "a", encoding="utf-8") as stream:
        stream.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")


def _print_file(path, head, outcome, result):
    mark = {True: "ok", False: "--"}
    if outcome["kind"] == "correct":
        print(f"{path.parent.name}/{path.name}: correct, passed={result.passed} quiet={mark[outcome['quiet']]}"
              + (f" hint={outcome['hint'][:100]!r}" if outcome["hint"] else ""))
        return
    tag = _tag(outcome)
    print(f"{path.parent.name}/{path.name}: {result.status}, {tag}, located={mark[outcome['located']]}"
          f" expect={head['expect']} hint={outcome['hint'][:160]!r}")


def _print_table(rows, diag):
    print(f"{'ex':5} {'verdicts':>9} {'hinted':>8} {'mislead':>8} {'quiet ok':>9} {'located':>8} "
          f"{'diag med':>9} {'diag max':>9}")
    totals = [0] * 9
    all_times = []
    for ex_id, items in sorted(rows.items()):
        failing = [o for _, o, r in items if o["kind"] == "failing"]
        correct = [o for _, o, r in items if o["kind"] == "correct"]
        failed_times = [t for t in diag.get(ex_id, [])]
        counts = [sum(o["right"] for _, o, _ in items), len(items), sum(o["hinted"] for o in failing), len(failing),
                  sum(o["misleading"] for o in failing), sum(o["quiet"] for o in correct), len(correct),
                  sum(o["located"] or o["hinted"] for o in failing), 0]
        totals = [a + b for a, b in zip(totals, counts)]
        all_times += failed_times
        med = f"{statistics.median(failed_times):.3f}" if failed_times else "-"
        worst = f"{max(failed_times):.3f}" if failed_times else "-"
        print(f"{ex_id:5} {counts[0]:>4}/{counts[1]:<4} {counts[2]:>3}/{counts[3]:<4} {counts[4]:>8} "
              f"{counts[5]:>4}/{counts[6]:<4} {counts[7]:>3}/{counts[3]:<4} {med:>9} {worst:>9}")
    med = f"{statistics.median(all_times):.3f}" if all_times else "-"
    worst = f"{max(all_times):.3f}" if all_times else "-"
    print(f"{'total':5} {totals[0]:>4}/{totals[1]:<4} {totals[2]:>3}/{totals[3]:<4} {totals[4]:>8} "
          f"{totals[5]:>4}/{totals[6]:<4} {totals[7]:>3}/{totals[3]:<4} {med:>9} {worst:>9}")
    if totals[3]:
        print(f"hint rate: {totals[2]}/{totals[3]} = {100 * totals[2] / totals[3]:.0f}% of failing files; "
              f"misleading: {totals[4]}; hint or sub-step: {totals[7]}/{totals[3]}")


if __name__ == "__main__":
    main()
