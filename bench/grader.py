"""Wall time of grading all the reference solutions, in both sandbox modes (goal: under 10 s
on 2 cores), what the strict sandbox adds per exercise (goal: at most 150 ms), and what naming an
unlisted mistake (grader/diagnosis/) adds to grading a failing exercise (goal: under 1 s).

    python bench/grader.py [--runs 3] [--modes process strict] [--no-diagnosis] [--practice]

Each run is a fresh `python -m grader --json` process (interpreter start, torch import,
sandbox, comparisons), as a learner or the class worker would run it. Prints every run,
the median per mode, and for strict mode the added cost per exercise: the median over
exercises of (strict minus process) sandboxed run time, each the median over runs, and
the whole-run difference divided by the number of exercises. The diagnosis figure grades learner-written bug files
(tests/learner_bugs/) one exercise at a time, with the diagnosis on and switched off
(ATTENTION_LAB_DIAGNOSIS=0), on and off runs interleaved, after one run that builds the mutant caches; it
prints per file the median over runs of (on minus off) of each pair, and the median and worst over files.

--practice: only the Practice page's Grade click -> result, as the page calls the grading client
(course/app/grading_client.run_grader), one exercise (ex03) and all of them: a fresh `python -m grader`
per click (before) against the page's long-lived grading server (after; its first click, which starts
it, apart), medians over --runs clicks. Then the first click of a fresh app, cold (no mutant caches, the
server started by the click: the app before it started its server early) against the app's early start (the
server started as the app opens, the click --first-click-after s later), each on a correct ex03 and a wrong
ex01 (whose feedback needs ex01's mutant cache), medians over --runs fresh starts.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from course.common.exercise_index import EXERCISES  # noqa: E402


def run_mode(mode, runs, target, env):
    """([wall seconds per run], {ex_id: [sandboxed seconds per run]})."""
    times, per_exercise = [], {}
    for run in range(runs):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "grader", "--target", str(target), "--json",
                               "--sandbox", mode], cwd=ROOT, env=env, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            sys.exit(f"grading the references ({mode}) failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        for ex in json.loads(done.stdout)["exercises"]:
            per_exercise.setdefault(ex["id"], []).append(ex["duration_s"])
        print(f"{mode} run {run + 1}: {times[-1]:.2f} s")
    return times, per_exercise


DIAGNOSED = ("ex01/global_max", "ex03/scaled_by_num_keys", "ex05/merge_heads_swapped", "ex07/dropout_after_residual")


def grade_once(target, ex_id, env):
    """Seconds to grade one exercise of target in a fresh `python -m grader` process."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "grader", ex_id, "--target", str(target), "--json"],
                   cwd=ROOT, env=env, capture_output=True, text=True)
    return time.perf_counter() - start


def diagnosis_cost(runs, env):
    """{bug file: median seconds the diagnosis adds to grading it}."""
    added = {}
    for name in DIAGNOSED:
        ex_id, stem = name.split("/")
        target = Path(tempfile.mkdtemp(prefix="bench-diagnosis-"))
        try:
            for path in (ROOT / "solutions").glob("ex*.py"):
                shutil.copy(path, target / path.name)
            bug = ROOT / "tests" / "learner_bugs" / ex_id / f"{stem}.py"
            shutil.copy(bug, target / next((ROOT / "solutions").glob(f"{ex_id}_*.py")).name)
            grade_once(target, ex_id, env)  # builds this exercise's mutants once per grader version
            on, off = [], []
            for _ in range(runs):  # interleaved, so that a slow spell of the machine falls on both
                on.append(grade_once(target, ex_id, env))
                off.append(grade_once(target, ex_id, dict(env, ATTENTION_LAB_DIAGNOSIS="0")))
        finally:
            shutil.rmtree(target, ignore_errors=True)
        added[name] = statistics.median(a - b for a, b in zip(on, off))
        print(f"diagnosis of {name}: on {statistics.median(on):.2f} s, off {statistics.median(off):.2f} s, "
              f"added (median of the {runs} paired runs) {added[name]:.2f} s")
    return added


def practice_clicks(runs, target):
    """Prints the median click -> result of the Practice page, one-shot grader vs the grading server."""
    from course.app import grading_client

    def click(ex_ids, server):
        start = time.perf_counter()
        report = grading_client.run_grader(ex_ids, target=target, server=server)
        assert report["passed"], report
        return time.perf_counter() - start

    server = grading_client.GradingServer()
    try:
        first = click(["ex03"], server)
        for label, ex_ids in (("ex03", ["ex03"]), (f"all {len(EXERCISES)}", [])):
            before = [click(ex_ids, None) for _ in range(runs)]
            after = [click(ex_ids, server) for _ in range(runs)]
            print(f"practice click -> result, {label}: fresh grader per click median {statistics.median(before):.2f} s "
                  f"({', '.join(f'{t:.2f}' for t in before)}); grading server median {statistics.median(after):.2f} s "
                  f"({', '.join(f'{t:.2f}' for t in after)})")
        print(f"  (the grading server's first click, which starts it: {first:.2f} s; load {os.getloadavg()[0]:.2f})")
    finally:
        server.close()
    first_clicks(runs, target)


def first_clicks(runs, target, after_s=10.0):
    """Prints the median first click -> result of a fresh app: cold, and with the server started early."""
    from course.app import grading_client

    wrong = Path(tempfile.mkdtemp(prefix="bench-grader-wrong-"))
    source = (ROOT / "solutions" / "ex01_softmax.py").read_text(encoding="utf-8")
    (wrong / "ex01_softmax.py").write_text(source.replace('float("-inf")', "0.0"), encoding="utf-8")
    cases = {"ex03 (correct)": (["ex03"], target, True), "ex01 (wrong)": (["ex01"], wrong, False)}
    for label, (ex_ids, folder, passes) in cases.items():
        figures = {"cold": [], "early": []}
        for _ in range(runs):
            for how in figures:
                os.environ["ATTENTION_LAB_MUTANT_CACHE"] = tempfile.mkdtemp(prefix="bench-grader-mutants-")
                server = grading_client.GradingServer()
                try:
                    if how == "early":
                        server.start_early()
                        time.sleep(after_s)
                    start = time.perf_counter()
                    report = grading_client.run_grader(ex_ids, target=folder, server=server)
                    figures[how].append(time.perf_counter() - start)
                    assert report["passed"] == passes, report
                finally:
                    server.close()
                    shutil.rmtree(os.environ.pop("ATTENTION_LAB_MUTANT_CACHE"), ignore_errors=True)
        print(f"first click of a fresh app, {label}: cold median {statistics.median(figures['cold']):.2f} s "
              f"({', '.join(f'{t:.2f}' for t in figures['cold'])}); server started as the app opens, click "
              f"{after_s:g} s later: median {statistics.median(figures['early']):.2f} s "
              f"({', '.join(f'{t:.2f}' for t in figures['early'])}); load {os.getloadavg()[0]:.2f}")
    shutil.rmtree(wrong, ignore_errors=True)


def main():
    from grader.sandbox import strict_problem

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--modes", nargs="+", default=["process", "strict"], choices=["process", "strict"])
    parser.add_argument("--no-diagnosis", action="store_true", help="skip the diagnosis figure")
    parser.add_argument("--practice", action="store_true", help="only the Practice page's click -> result")
    args = parser.parse_args()
    target = Path(tempfile.mkdtemp(prefix="bench-grader-"))
    home = Path(tempfile.mkdtemp(prefix="bench-grader-home-"))
    for path in (ROOT / "solutions").glob("ex*.py"):
        shutil.copy(path, target / path.name)
    env = dict(os.environ, ATTENTION_LAB_HOME=str(home))
    if args.practice:
        os.environ["ATTENTION_LAB_HOME"] = str(home)
        try:
            practice_clicks(args.runs, target)
        finally:
            shutil.rmtree(target, ignore_errors=True)
            shutil.rmtree(home, ignore_errors=True)
        return
    results = {}
    try:
        for mode in args.modes:
            if mode == "strict" and strict_problem():
                print(f"strict: skipped ({strict_problem()})")
                continue
            results[mode] = run_mode(mode, args.runs, target, env)
    finally:
        shutil.rmtree(target, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)
    for mode, (times, _) in results.items():
        median = statistics.median(times)
        print(f"{mode}: grading all {len(EXERCISES)} references: median {median:.2f} s over {len(times)} runs "
              f"(goal < 10 s: {'met' if median < 10 else 'NOT met'}); cores: {os.cpu_count()}")
    if {"process", "strict"} <= set(results):
        process, strict = results["process"][1], results["strict"][1]
        added = [statistics.median(strict[ex]) - statistics.median(process[ex]) for ex in strict]
        per_ex = statistics.median(added) * 1000
        whole = (statistics.median(results["strict"][0]) - statistics.median(results["process"][0])) / len(EXERCISES) * 1000
        print(f"strict minus process, per exercise: median {per_ex:.0f} ms of sandboxed run time "
              f"(goal <= 150 ms: {'met' if per_ex <= 150 else 'NOT met'}); whole run / {len(EXERCISES)}: {whole:.0f} ms")
    if not args.no_diagnosis:
        home = Path(tempfile.mkdtemp(prefix="bench-grader-home-"))
        try:
            added = diagnosis_cost(args.runs, dict(env, ATTENTION_LAB_HOME=str(home)))
        finally:
            shutil.rmtree(home, ignore_errors=True)
        worst = max(added.values())
        print(f"diagnosis of a failing exercise adds: median {statistics.median(added.values()):.2f} s, "
              f"at most {worst:.2f} s over {len(added)} bug files (goal < 1 s: {'met' if worst < 1 else 'NOT met'})")


if __name__ == "__main__":
    main()
