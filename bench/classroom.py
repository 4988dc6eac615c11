"""Class mode under load: a burst of submissions graded by two workers, and gradebook speed.

    python bench/classroom.py [--learners 50] [--workers 2] [--idle-runs 5] [--book-learners 1000]
                              [--book-runs 3] [--skip-burst] [--skip-idle] [--gradebook-browser]

1. `--learners` learners submit at once (threads; 40% correct = solutions/, 40%
   wrong = exercises/ stubs and known-mistake copies, 20% hostile: with 50,
   20 / 20 / 10), while `--workers` worker processes (`python -m classroom
   worker`, strict sandbox when available, else process mode, as logged) grade
   them. Checks that every submission got exactly one verdict, prints the time
   to drain the queue and the p50/p95 time from submit to feedback (goals:
   drained < 90 s, p95 < 75 s).
2. One submission on an idle queue: a learner's correct ex01, then --idle-runs
   correct ex03 one after another, each waited for -> submit -> feedback
   median (goal < 3 s; the first, which starts a worker's warm server, apart).
3. Gradebook and analytics for --book-learners learners x every exercise x 10
   attempts in SQLite: median time to build the data frames over --book-runs
   (goal < 1 s for 1,000 learners).
4. With --gradebook-browser: that class served by `streamlit run app.py`, an instructor signed in in
   headless Chromium; seconds from navigating to the gradebook (then the analytics) page until its
   table (and chart) are drawn and the page's script has finished, median of --book-runs visits
   (goal < 3 s; the first visit of a fresh server apart).
"""

import argparse
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlalchemy import func, insert, select  # noqa: E402

from classroom import analytics, exercises, frames, store as store_ops  # noqa: E402
from classroom.db import Store  # noqa: E402
from classroom.models import Job, Result, Submission, User, Worker, utcnow  # noqa: E402

HOSTILE = {  # (exercise, source): mild on purpose, the machine is shared
    "infinite loop": ("ex00", "while True:\n    pass\n"),
    "4 GB allocation": ("ex01", "blob = bytearray(4 * 1024 ** 3)\n"),
    "os._exit at import": ("ex06", "import os\nos._exit(3)\n"),
    "output flood": ("ex00", "print('spam ' * 10_000_000)\n"),
    "reads solutions/": ("ex01", f"exec(open({str(ROOT / 'solutions' / 'ex01_softmax.py')!r}).read())\n"),
}
EASY = ("ex00", "ex01", "ex06")  # exercises with no dependencies: one submission each is gradable


def submissions_mix(count, seed=0):
    """[(label, exercise, source)]: 40% correct, 40% wrong, 20% hostile."""
    from grader import checks
    from grader.mistakes import apply_mistake

    rng = random.Random(seed)
    mix = []
    for i in range(count):
        ex_id = EASY[i % len(EASY)]
        reference = (ROOT / "solutions" / exercises.get(ex_id).filename).read_text()
        if i % 5 in (0, 1):
            mix.append(("correct", ex_id, reference))
        elif i % 5 == 2:
            mix.append(("wrong: stub", ex_id, (ROOT / "exercises" / exercises.get(ex_id).filename).read_text()))
        elif i % 5 == 3:
            mistake = rng.choice(checks.for_exercise(ex_id).MISTAKES)
            mix.append((f"wrong: {mistake.id}", ex_id, apply_mistake(reference, mistake)))
        else:
            name = list(HOSTILE)[(i // 5) % len(HOSTILE)]
            mix.append((f"hostile: {name}", *HOSTILE[name]))
    return mix


def burst(args, folder):
    """Part 1 -> prints the figures; exits non-zero if a submission was lost or graded twice."""
    url = f"sqlite:///{folder / 'burst.db'}"
    store = store_ops.init_class(url, "prof@bench.test")
    roster = folder / "roster.csv"
    roster.write_text("email,name,role\n" + "".join(f"l{i:03d}@bench.test,L{i},learner\n"
                                                     for i in range(args.learners)))
    store_ops.import_roster(store, roster)
    mix = submissions_mix(args.learners)
    pool = subprocess.Popen([sys.executable, "-m", "classroom", "worker", "--db", url, "--concurrency",
                             str(args.workers)], cwd=ROOT, stderr=open(folder / "workers.log", "w"))
    deadline = time.monotonic() + 120
    while True:  # wait until the workers are up (torch imported, sandbox chosen)
        with store.session() as session:
            if session.scalar(select(func.count(Worker.id))) >= args.workers:
                break
        if time.monotonic() > deadline or pool.poll() is not None:
            sys.exit(f"the workers did not start; see {folder / 'workers.log'}")
        time.sleep(0.2)
    users = {u.email: u.id for u in store_ops.list_users(store, "learner")}
    acked, lock, gate = {}, threading.Lock(), threading.Barrier(args.learners)

    def learner(i):
        label, ex_id, source = mix[i]
        gate.wait()
        sid = store_ops.submit(store, users[f"l{i:03d}@bench.test"], ex_id, source, f"{ex_id}.py")
        with lock:
            acked[sid] = label

    threads = [threading.Thread(target=learner, args=(i,)) for i in range(args.learners)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    submitted = time.monotonic() - start
    while True:
        with store.session() as session:
            graded = session.scalar(select(func.count(func.distinct(Result.submission_id))))
        if graded >= len(acked) or pool.poll() is not None:
            break
        time.sleep(0.1)
    drain = time.monotonic() - start
    pool.send_signal(signal.SIGTERM)
    pool.wait(timeout=120)
    with store.session() as session:
        rows = session.execute(select(Result.submission_id, Result.status, Submission.created_at,
                                      Result.created_at, Result.sandbox)
                               .join(Submission, Submission.id == Result.submission_id)).all()
        in_db = session.scalar(select(func.count(Submission.id)))
    per_submission = {}
    for sid, *_ in rows:
        per_submission[sid] = per_submission.get(sid, 0) + 1
    lost = set(acked) - set(per_submission)
    twice = [sid for sid, n in per_submission.items() if n > 1]
    latencies = sorted((done - created).total_seconds() for _, _, created, done, _ in rows)
    p50 = statistics.median(latencies)
    p95 = latencies[min(len(latencies) - 1, int(round(0.95 * (len(latencies) - 1))))]
    outcome = {}
    for sid, status, *_ in rows:
        kind = acked[sid].split(":")[0]
        outcome.setdefault(kind, {}).setdefault(status, 0)
        outcome[kind][status] += 1
    print(f"burst: {len(acked)} learners submitted at once (all acknowledged in {submitted:.2f} s), "
          f"{args.workers} workers, sandbox {', '.join(sorted({r[4] for r in rows}))}")
    print(f"  acknowledged {len(acked)}, in the database {in_db}, graded {len(per_submission)}, "
          f"lost {len(lost)}, graded twice {len(twice)}")
    print(f"  queue drained in {drain:.1f} s; submit -> feedback p50 {p50:.1f} s, p95 {p95:.1f} s")
    for kind, counts in sorted(outcome.items()):
        print(f"  {kind}: " + ", ".join(f"{n} {status}" for status, n in sorted(counts.items())))
    hostile = {acked[sid]: status for sid, status, *_ in rows if acked[sid].startswith("hostile")}
    for label, status in sorted(hostile.items()):
        print(f"    {label}: {status}")
    store.close()
    return not lost and not twice and in_db == len(acked)


def start_pool(url, workers, folder, name):
    """`python -m classroom worker` x workers on url, once they are registered -> (Popen, store)."""
    store = Store(url)
    pool = subprocess.Popen([sys.executable, "-m", "classroom", "worker", "--db", url, "--concurrency",
                             str(workers)], cwd=ROOT, stderr=open(folder / name, "w"))
    deadline = time.monotonic() + 180
    while True:
        with store.session() as session:
            if session.scalar(select(func.count(Worker.id))) >= workers:
                return pool, store
        if time.monotonic() > deadline or pool.poll() is not None:
            sys.exit(f"the workers did not start; see {folder / name}")
        time.sleep(0.2)


def graded_in(store, submission_id, timeout_s=300):
    """Seconds from now until the submission has a verdict."""
    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        with store.session() as session:
            if session.scalar(select(func.count(Result.id)).where(Result.submission_id == submission_id)):
                return time.monotonic() - start
        time.sleep(0.02)
    raise TimeoutError(f"submission {submission_id} was not graded in {timeout_s} s")


def idle(args, folder):
    """Part 2 -> prints the submit -> feedback median of a correct ex03 on an idle queue."""
    url = f"sqlite:///{folder / 'idle.db'}"
    store_ops.init_class(url, "prof@bench.test").close()
    roster = folder / "idle-roster.csv"
    roster.write_text("email,name,role\nidle@bench.test,Idle,learner\n")
    pool, store = start_pool(url, args.workers, folder, "idle-workers.log")
    store_ops.import_roster(store, roster)
    user = store_ops.list_users(store, "learner")[0].id
    try:
        ex01 = store_ops.submit(store, user, "ex01", (ROOT / "solutions" / "ex01_softmax.py").read_text(), "ex01_softmax.py")
        first = graded_in(store, ex01)
        source = (ROOT / "solutions" / "ex03_scoring.py").read_text()
        times = []
        for _ in range(args.idle_runs):
            start = time.monotonic()
            sid = store_ops.submit(store, user, "ex03", source, "ex03_scoring.py")
            times.append(time.monotonic() - start + graded_in(store, sid))
        with store.session() as session:
            statuses = session.scalars(select(Result.status)).all()
    finally:
        pool.send_signal(signal.SIGTERM)
        pool.wait(timeout=120)
    median = statistics.median(times)
    print(f"idle queue: first submission (ex01, starts a warm server) {first:.2f} s; correct ex03 submit -> feedback "
          f"median {median:.2f} s over {len(times)} ({', '.join(f'{t:.2f}' for t in times)}); "
          f"verdicts {sorted(set(statuses))}; goal < 3 s: {'met' if median < 3 else 'NOT met'}")
    store.close()


def fill_class(store, learners=200, attempts=10, seed=1):
    """Synthetic graded history: learners x every exercise x attempts (bulk inserts)."""
    from grader import checks

    rng = random.Random(seed)
    emails = [f"s{i:03d}@bench.test" for i in range(learners)]
    with store.session() as session:
        session.execute(insert(User), [{"email": e, "name": e.split("@")[0], "role": "learner"} for e in emails])
    users = [u.id for u in store_ops.list_users(store, "learner")]
    mistakes = {ex.id: [m.id for m in checks.for_exercise(ex.id).MISTAKES] for ex in exercises.EXERCISES}
    start = utcnow() - timedelta(days=30)
    subs, sub_id = [], 0
    for user in users:
        for ex in exercises.EXERCISES:
            for attempt in range(attempts):
                sub_id += 1
                subs.append({"id": sub_id, "user_id": user, "exercise_id": ex.id, "source": "# synthetic\n",
                             "kind": ".py", "filename": ex.filename, "status": "done",
                             "created_at": start + timedelta(minutes=sub_id), "attempts": 1,
                             "late": rng.random() < 0.05, "penalty": 0.0})
    jobs = [{"id": s["id"], "submission_id": s["id"], "state": "done", "attempts": 1,
             "created_at": s["created_at"], "reason": "submit", "error": ""} for s in subs]
    results = []
    for s in subs:
        passed = rng.random() < 0.35
        status = "passed" if passed else rng.choice(["failed", "failed", "failed", "not_written", "error"])
        found = [rng.choice(mistakes[s["exercise_id"]])] if status == "failed" and rng.random() < 0.7 else []
        score = 1.0 if passed else round(rng.random() * 0.9, 2)
        results.append({"submission_id": s["id"], "job_id": s["id"], "status": status, "passed": passed,
                        "raw_score": score, "score": score, "summary": "", "checks": [], "mistake_ids": found,
                        "report": {}, "sandbox": "process", "grader_version": "bench", "run_s": 1.0,
                        "grading_s": 1.0, "created_at": s["created_at"] + timedelta(seconds=20)})
    with store.session() as session:
        session.execute(insert(Submission), subs)
        session.execute(insert(Job), jobs)
        session.execute(insert(Result), results)
    return len(subs)


def build_pages(store):
    """What the gradebook and analytics pages compute -> (gradebook, summary, bars per exercise)."""
    frame = frames.submissions_frame(store)
    ids = exercises.EXERCISE_IDS
    book = analytics.gradebook(frame, ids, frames.learners(store))
    summary = analytics.exercise_summary(frame, ids)
    bars = {ex_id: analytics.mistake_bars(frame, ex_id) for ex_id in ids}
    return book, summary, bars


def gradebook_bench(args, folder):
    """Part 3 -> prints the median build time."""
    store = store_ops.init_class(f"sqlite:///{folder / 'book.db'}", "prof@bench.test")
    t0 = time.perf_counter()
    count = fill_class(store, learners=args.book_learners)
    print(f"gradebook: {count} graded submissions written in {time.perf_counter() - t0:.1f} s")
    times = []
    for _ in range(args.book_runs):
        start = time.perf_counter()
        book, summary, bars = build_pages(store)
        times.append(time.perf_counter() - start)
    median = statistics.median(times)
    print(f"  gradebook ({book.shape[0]} x {book.shape[1]}) + per-exercise summary + mistake bars: "
          f"median {median:.2f} s over {args.book_runs} runs ({', '.join(f'{t:.2f}' for t in times)}); "
          f"goal < 1 s: {'met' if median < 1 else 'NOT met'}")
    store.close()


# drawn: the gradebook's table (the page's first) and its last element; the summary table and the mistakes chart
GRADEBOOK_SHOWN = ('[data-testid="stDataFrame"] canvas', ".st-key-class_gradebook_regrade button")
ANALYTICS_SHOWN = ('[data-testid="stDataFrame"] canvas', '[data-testid="stVegaLiteChart"] :is(svg, canvas)',
                   ".st-key-class_analytics_sub_ex03")


def page_times(url, runs, folder):
    """{page: [seconds to drawn, per visit]} for the gradebook and analytics pages of the class at `url`, in a
    headless Chromium signed in as its instructor (the first visit of each page, on a fresh server, first)."""
    import os

    from tests.browser_support import new_driver, running_app, seconds_until_shown

    store = Store(url)
    env = dict(os.environ, ATTENTION_LAB_HOME=str(folder / "home"), ATTENTION_LAB_CLASS_DB=url)
    times = {"gradebook": [], "analytics": []}
    with running_app(env) as server:
        driver = new_driver("en", tempfile.mkdtemp(prefix="chromium-profile-", dir=folder))
        try:
            link, _ = store_ops.create_sign_in_link(store, "prof@bench.test", f"{server}/gradebook")
            seconds_until_shown(driver, link, GRADEBOOK_SHOWN)  # signs in (the cookie keeps the session)
            for _ in range(runs):
                times["gradebook"].append(seconds_until_shown(driver, f"{server}/gradebook", GRADEBOOK_SHOWN))
                times["analytics"].append(seconds_until_shown(driver, f"{server}/analytics", ANALYTICS_SHOWN))
        finally:
            driver.quit()
            store.close()
    return times


def gradebook_browser(args, folder):
    """Part 4 -> prints the median seconds to a drawn gradebook and analytics page."""
    times = page_times(f"sqlite:///{folder / 'book.db'}", args.book_runs, folder)
    for page, seconds in times.items():
        median = statistics.median(seconds)
        print(f"  {page} page in Chromium, navigation -> drawn: median {median:.2f} s over {len(seconds)} visits "
              f"({', '.join(f'{t:.2f}' for t in seconds)}); goal < 3 s: {'met' if median < 3 else 'NOT met'}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--idle-runs", type=int, default=5)
    parser.add_argument("--book-learners", type=int, default=1000)
    parser.add_argument("--book-runs", type=int, default=3)
    parser.add_argument("--skip-burst", action="store_true")
    parser.add_argument("--skip-idle", action="store_true")
    parser.add_argument("--gradebook-browser", action="store_true",
                        help="also time the gradebook and analytics pages in headless Chromium")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-classroom-"))
    ok = True
    if not args.skip_burst:
        ok = burst(args, folder)
    if not args.skip_idle:
        idle(args, folder)
    gradebook_bench(args, folder)
    if args.gradebook_browser:
        gradebook_browser(args, folder)
    print(f"(databases and worker log in {folder})")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
