"""Class mode under load: a burst of submissions graded by two workers, and gradebook speed.

    python bench/classroom.py [--learners 50] [--workers 2] [--idle-runs 5] [--book-learners 1000]
                              [--book-runs 3] [--skip-burst] [--skip-idle] [--gradebook-browser]
                              [--skip-regrade] [--skip-position] [--regrade-learners 300]
                              [--live-pages 50] [--live-rounds 5] [--skip-book] [--explain] [--no-hostile]

1. `--learners` learners submit at once (threads; 40% correct = solutions/, 40%
   wrong = exercises/ stubs and known-mistake copies, 20% hostile: with 50,
   20 / 20 / 10), while `--workers` worker processes (`python -m classroom
   worker`, strict sandbox when available, else process mode, as logged) grade
   them. Checks that every submission got exactly one verdict, prints the time
   to drain the queue and the p50/p95 time from submit to feedback (goals:
   drained < 90 s, p95 < 75 s).
1b. The same burst three times on one class and one worker pool: a warm-up on the fresh class (its
   forecasts have no measured grading times yet), then on an idle queue, then while a class-wide regrade
   runs (--regrade-learners synthetic learners x 10 exercises, graded once, all queued just before).
   Prints both p95s (submit -> feedback) and their ratio (goal: <= 1.2), and how far the wait forecast
   each page showed just after its submission (classroom/line/eta.py) was from the actual wait: median and
   p90 of |forecast - actual| / actual and the share within 25% (goal: at least 80%); also the forecast shown
   halfway through each wait (the page polls), against the wait left then (bench/forecasts.py). --explain:
   per submission, its forecast, its wait and the jobs (and hangs) ahead; --no-hostile: bursts without hostile
   files (their 20% correct instead).
1c. A new submission's position in claim order behind a 20,000-job regrade (200 learners x 10 exercises x
   10 submissions), from line.position and from the page's live snapshot (goal: <= workers + 1).
2. One submission on an idle queue: a learner's correct ex01, then --idle-runs
   correct ex03 one after another, each waited for -> submit -> feedback
   median (goal < 3 s; the first, which starts a worker's warm server, apart).
3. Gradebook and analytics for --book-learners learners x every exercise x 10
   attempts in SQLite: median time to build the data frames over --book-runs
   (goal < 1 s for 1,000 learners), read afresh and from the class frame the app keeps.
4. With --gradebook-browser: that class served by `streamlit run app.py`, an instructor signed in in
   headless Chromium; seconds from navigating to the gradebook (then the analytics) page until its
   table (and chart) are drawn and the page's script has finished, median of --book-runs visits
   (goal < 3 s; the first visit of a fresh server apart).
5. With --live-pages N: live feedback while N Practice pages are open. One real page (headless
   Chromium, learner l000, on `streamlit run app.py`) follows its submission while N - 1 pollers (threads
   in this process, one learner each, each following a queued submission of its own) call the page's own
   per-poll function (classroom.line.live.state_of) every live.POLL_S. The bench itself moves the queue
   (no worker): a job ahead is claimed (queued position N -> N - 1), the page's job is claimed (-> grading),
   its verdict stored (-> done). Prints p50/p95 of change -> shown on the page (the page stamps the
   moment the text appears with a MutationObserver) over --live-rounds rounds, and the database queries
   per poll of the pollers (goal: shown within 1 s).
"""

import argparse
import os
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

from classroom.analytics import analytics, frames  # noqa: E402
from classroom.data import exercise_table  # noqa: E402
from classroom.data.roster import import_roster, init_class, list_users, user_by_email  # noqa: E402
from classroom.data.sessions import create_sign_in_link  # noqa: E402
from classroom.data.settings import set_setting  # noqa: E402
from classroom.data.submissions import submit  # noqa: E402
from classroom.data.db import Store  # noqa: E402
from classroom.data.models import Job, Result, Submission, User, Worker, utcnow  # noqa: E402
from bench.forecasts import (WITHIN, WITHIN_GOAL, burst_with_forecasts, error_summary, explain,  # noqa: E402
                             forecast_errors, halfway_errors, percentile, set_aside_summary, within)

HOSTILE = {  # (exercise, source): mild on purpose, the machine is shared
    "infinite loop": ("ex00", "while True:\n    pass\n"),
    "4 GB allocation": ("ex01", "blob = bytearray(4 * 1024 ** 3)\n"),
    "os._exit at import": ("ex06", "import os\nos._exit(3)\n"),
    "output flood": ("ex00", "print('spam ' * 10_000_000)\n"),
    "reads solutions/": ("ex01", f"exec(open({str(ROOT / 'solutions' / 'ex01_softmax.py')!r}).read())\n"),
}
EASY = ("ex00", "ex01", "ex06")  # exercises with no dependencies: one submission each is gradable


def published_class(url, instructor):
    """A new class that grades the published exercises (variants off): the bench submits the references, which
    pass only their own, published variant."""
    store = init_class(url, instructor)
    set_setting(store, "variants", 0)
    return store


def submissions_mix(count, seed=0, hostile=True):
    """[(label, exercise, source)]: 40% correct, 40% wrong, 20% hostile (without `hostile`: 60% correct)."""
    from grader import checks
    from grader.mistakes import apply_mistake

    rng = random.Random(seed)
    mix = []
    for i in range(count):
        ex_id = EASY[i % len(EASY)]
        reference = (ROOT / "solutions" / exercise_table.get(ex_id).filename).read_text()
        if i % 5 in (0, 1):
            mix.append(("correct", ex_id, reference))
        elif i % 5 == 2:
            mix.append(("wrong: stub", ex_id, (ROOT / "exercises" / exercise_table.get(ex_id).filename).read_text()))
        elif i % 5 == 3:
            mistake = rng.choice(checks.for_exercise(ex_id).MISTAKES)
            mix.append((f"wrong: {mistake.id}", ex_id, apply_mistake(reference, mistake)))
        elif not hostile:
            mix.append(("correct", ex_id, reference))
        else:
            name = list(HOSTILE)[(i // 5) % len(HOSTILE)]
            mix.append((f"hostile: {name}", *HOSTILE[name]))
    return mix


def burst(args, folder):
    """Part 1 -> prints the figures; exits non-zero if a submission was lost or graded twice."""
    url = f"sqlite:///{folder / 'burst.db'}"
    store = published_class(url, "prof@bench.test")
    roster = folder / "roster.csv"
    roster.write_text("email,name,role\n" + "".join(f"l{i:03d}@bench.test,L{i},learner\n"
                                                     for i in range(args.learners)))
    import_roster(store, roster)
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
    users = {u.email: u.id for u in list_users(store, "learner")}
    acked, lock, gate = {}, threading.Lock(), threading.Barrier(args.learners)

    def learner(i):
        label, ex_id, source = mix[i]
        gate.wait()
        sid = submit(store, users[f"l{i:03d}@bench.test"], ex_id, source, f"{ex_id}.py")
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


def wait_graded(store, submission_ids, timeout_s=900):
    """{submission id: its first verdict's time}, once every one has a verdict."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with store.session() as session:
            rows = session.execute(select(Result.submission_id, func.min(Result.created_at))
                                   .where(Result.submission_id.in_(list(submission_ids)))
                                   .group_by(Result.submission_id)).all()
        if len(rows) == len(submission_ids):
            return dict(rows)
        time.sleep(0.2)
    raise TimeoutError(f"{len(submission_ids) - len(rows)} submissions were not graded in {timeout_s} s")


def worker_time(store, since, until):
    """{reason: (jobs, seconds of grading)} of the jobs claimed between since and until."""
    with store.session() as session:
        rows = session.execute(select(Job.reason, Job.started_at, Job.finished_at)
                               .where(Job.started_at >= since, Job.started_at <= until,
                                      Job.finished_at.is_not(None))).all()
    spent = {}
    for reason, started, finished in rows:
        jobs, seconds = spent.get(reason, (0, 0.0))
        spent[reason] = (jobs + 1, seconds + (finished - started).total_seconds())
    return spent


def report_burst(name, acked, graded, store, shown=None, explaining=False):
    """Prints one burst's p50/p95 submit -> feedback, the workers' time in it and its forecast error, at submission
    and halfway (with `shown`), and with `explaining` where the error came from -> (p95, errors, halfway errors)."""
    waits = [(graded[sid] - submitted).total_seconds() for sid, (_, submitted, _) in acked.items()]
    errors = forecast_errors(acked, graded)
    since, until = min(submitted for _, submitted, _ in acked.values()), max(graded.values())
    spent = worker_time(store, since, until)
    print(f"  {name}: all graded {(until - since).total_seconds():.1f} s after the first submission; jobs claimed "
          f"meanwhile: " + ", ".join(f"{reason} {jobs} ({seconds:.1f} s of grading)"
                                     for reason, (jobs, seconds) in sorted(spent.items())))
    print(f"  {name}: submit -> feedback p50 {statistics.median(waits):.1f} s, p95 {percentile(waits, 0.95):.1f} s; "
          f"forecast error |est - actual| / actual over {len(errors)}: {error_summary(errors)}; signed median "
          f"{statistics.median(forecast_errors(acked, graded, True)):+.0%} (+: forecast too long); "
          f"{set_aside_summary(store, acked)}")
    later = halfway_errors(acked, graded, shown) if shown is not None else []
    if later:
        print(f"  {name}: the forecast shown halfway through the wait, |est - actual| / wait left then, over "
              f"{len(later)}: {error_summary(later)}; / the whole wait: "
              f"{error_summary(halfway_errors(acked, graded, shown, of_left=False))}")
    if explaining:
        explain(store, acked, graded, name, shown)
    return percentile(waits, 0.95), errors, later


def regrade_burst(args, folder):
    """Part 1b -> the burst on an idle queue, then again while a class-wide regrade runs; prints both p95s, their
    ratio (goal <= 1.2) and the wait forecast's error (goal: 80% within 25%)."""
    from classroom.line import queue

    url = f"sqlite:///{folder / 'regrade.db'}"
    store = published_class(url, "prof@bench.test")
    for key in ("max_in_flight", "per_hour"):
        set_setting(store, key, 0)
    history = fill_class(store, learners=args.regrade_learners, attempts=1)  # the class's graded past
    roster = folder / "regrade-roster.csv"
    roster.write_text("email,name,role\n" + "".join(f"l{i:03d}@bench.test,L{i},learner\n"
                                                     for i in range(args.learners)))
    import_roster(store, roster)
    users = [user_by_email(store, f"l{i:03d}@bench.test").id for i in range(args.learners)]
    mix = submissions_mix(args.learners, hostile=not args.no_hostile)
    pool, _ = start_pool(url, args.workers, folder, "regrade-workers.log")
    try:
        warm = burst_with_forecasts(store, users, mix, "warm-up")  # warm servers and a history of grading times
        report_burst("warm-up burst on a fresh class (forecasts without history)", warm, wait_graded(store, warm),
                     store)
        shown = {}
        idle_acked = burst_with_forecasts(store, users, mix, "idle", shown)
        idle_p95, idle_errors, idle_later = report_burst("idle queue", idle_acked, wait_graded(store, idle_acked),
                                                         store, shown, args.explain)
        queued = queue.enqueue_regrade(store, range(1, history + 1))
        while queue.queue_status(store)["jobs"]["done"] < len(warm) + len(idle_acked) + args.workers:
            time.sleep(0.2)  # the workers are grading regrades now
        print(f"  regrade: {queued} jobs queued; the second burst starts while they run")
        busy_acked = burst_with_forecasts(store, users, mix, "regrade", shown)
        busy_p95, busy_errors, busy_later = report_burst("during the regrade", busy_acked,
                                                         wait_graded(store, busy_acked), store, shown, args.explain)
        left = queue.queue_status(store)["jobs"]["queued"]
    finally:
        pool.send_signal(signal.SIGTERM)
        pool.wait(timeout=300)
    ratio = busy_p95 / idle_p95
    errors = idle_errors + busy_errors
    print(f"burst of {args.learners} with {args.workers} workers: p95 idle {idle_p95:.1f} s, during a "
          f"{queued}-job regrade {busy_p95:.1f} s ({left} regrade jobs still queued after it): ratio {ratio:.2f}; "
          f"goal <= 1.20: {'met' if ratio <= 1.2 else 'NOT met'}")
    mix_name = "no hostile files" if args.no_hostile else "hostile files included"
    print(f"  wait forecast shown at submission vs actual ({mix_name}), all {len(errors)}: {error_summary(errors)}; "
          f"goal {WITHIN_GOAL:.0%} within {WITHIN:.0%}: {'met' if within(errors) >= WITHIN_GOAL else 'NOT met'}")
    later = idle_later + busy_later
    if later:
        print(f"  wait forecast shown halfway vs the wait left then, all {len(later)}: {error_summary(later)}; goal "
              f"{WITHIN_GOAL:.0%} within {WITHIN:.0%}: {'met' if within(later) >= WITHIN_GOAL else 'NOT met'}")
    print(f"  (load average {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} {os.getloadavg()[2]:.1f})")
    store.close()


def regrade_position(args, folder):
    """Part 1c -> prints the claim-order position of a new submission behind a 20,000-job regrade (goal <=
    workers + 1), as line.position and the page's live snapshot give it."""
    from classroom.line import line, live, queue

    store = published_class(f"sqlite:///{folder / 'position.db'}", "prof@bench.test")
    fill_class(store, learners=200, attempts=10)
    start = time.perf_counter()
    queued = queue.enqueue_regrade(store)
    queued_s = time.perf_counter() - start
    user = list_users(store, "learner")[57].id
    sid = submit(store, user, "ex00", "x = 2\n", "ex00.py")
    start = time.perf_counter()
    _, position = line.position(store, sid)
    position_s = time.perf_counter() - start
    start = time.perf_counter()
    shown = live.Snapshot(store).get(sid).position
    snapshot_s = time.perf_counter() - start
    print(f"regrade of {queued} jobs (queued in {queued_s:.1f} s): a new submission is at position {position} in "
          f"claim order ({position_s:.2f} s to compute), {shown} on its page (snapshot {snapshot_s:.2f} s); "
          f"goal <= workers + 1 = {args.workers + 1}: {'met' if position <= args.workers + 1 else 'NOT met'}")
    store.close()


def start_pool(url, workers, folder, name, sandbox="strict"):
    """`python -m classroom worker` x workers on url (--sandbox: strict when available, else process), once they
    are registered -> (Popen, store)."""
    store = Store(url)
    pool = subprocess.Popen([sys.executable, "-m", "classroom", "worker", "--db", url, "--concurrency",
                             str(workers), "--sandbox", sandbox], cwd=ROOT, stderr=open(folder / name, "w"))
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
    published_class(url, "prof@bench.test").close()
    roster = folder / "idle-roster.csv"
    roster.write_text("email,name,role\nidle@bench.test,Idle,learner\n")
    pool, store = start_pool(url, args.workers, folder, "idle-workers.log")
    import_roster(store, roster)
    user = list_users(store, "learner")[0].id
    try:
        ex01 = submit(store, user, "ex01", (ROOT / "solutions" / "ex01_softmax.py").read_text(), "ex01_softmax.py")
        first = graded_in(store, ex01)
        source = (ROOT / "solutions" / "ex03_scoring.py").read_text()
        times = []
        for _ in range(args.idle_runs):
            start = time.monotonic()
            sid = submit(store, user, "ex03", source, "ex03_scoring.py")
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
    users = [u.id for u in list_users(store, "learner")]
    mistakes = {ex.id: [m.id for m in checks.for_exercise(ex.id).MISTAKES] for ex in exercise_table.EXERCISES}
    start = utcnow() - timedelta(days=30)
    subs, sub_id = [], 0
    for user in users:
        for ex in exercise_table.EXERCISES:
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


def build_pages(store, kept=False):
    """What the gradebook and analytics pages compute -> (gradebook, summary, bars per exercise); `kept`: from
    the class frame the app keeps between runs (frames.class_frame), else read afresh."""
    frame = frames.class_frame(store) if kept else frames.submissions_frame(store)
    ids = exercise_table.EXERCISE_IDS
    book = analytics.gradebook(frame, ids, frames.learners(store))
    summary = analytics.exercise_summary(frame, ids)
    bars = {ex_id: analytics.mistake_bars(frame, ex_id) for ex_id in ids}
    return book, summary, bars


def gradebook_bench(args, folder):
    """Part 3 -> prints the median build time."""
    store = published_class(f"sqlite:///{folder / 'book.db'}", "prof@bench.test")
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
    build_pages(store, kept=True)
    kept = []
    for _ in range(args.book_runs):
        start = time.perf_counter()
        build_pages(store, kept=True)
        kept.append(time.perf_counter() - start)
    print(f"  the same from the class frame the app keeps (class unchanged since the last page run): median "
          f"{statistics.median(kept):.2f} s ({', '.join(f'{t:.2f}' for t in kept)})")
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
            link, _ = create_sign_in_link(store, "prof@bench.test", f"{server}/gradebook")
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


# Records in window.shownAt[text] the Date.now() at which `text` first shows in the page's main area.
SHOWN_AT_JS = """
window.shownAt = {}; window.watched = arguments[0];
const look = () => {
  const main = document.querySelector('[data-testid="stMain"]');
  const text = main ? main.innerText : '';
  for (const w of window.watched) if (!(w in window.shownAt) && text.includes(w)) window.shownAt[w] = Date.now();
};
if (!window.shownObserver) {
  window.shownObserver = new MutationObserver(look);
  window.shownObserver.observe(document.body, {subtree: true, childList: true, characterData: true});
}
look();
"""


def shown_after(driver, text, since, timeout=30):
    """Seconds from the wall-clock time `since` until `text` showed on the page (stamped by SHOWN_AT_JS)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        stamp = driver.execute_script("return window.shownAt[arguments[0]]", text)
        if stamp is not None:
            return stamp / 1000 - since
        time.sleep(0.05)
    raise TimeoutError(f"{text!r} did not show within {timeout} s")


def poll_like_pages(store, follow, stop, polls):
    """One thread per (user id, submission id) in `follow`: live.state_of every live.POLL_S until `stop` is set."""
    from classroom.line import live

    def page(user, submission):
        since = time.monotonic()
        while not stop.wait(live.POLL_S):
            live.state_of(store, user, submission, since)
            polls.append(1)

    threads = [threading.Thread(target=page, args=pair, daemon=True) for pair in follow]
    for thread in threads:
        thread.start()
    return threads


def server_cpu_s(url):
    """CPU seconds used so far by the `streamlit run` process serving `url` (http://127.0.0.1:PORT)."""
    import os

    port = url.rsplit(":", 1)[1]
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if b"streamlit" in argv and port.encode() in argv:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            continue
    return float("nan")


def live_bench(args, folder):
    """Part 5 -> prints change -> shown p50/p95 on the real page, and queries per poll of the pollers."""
    import os

    from selenium.webdriver.common.by import By
    from sqlalchemy import event

    from classroom.line import queue
    from course.common.i18n import t
    from tests.browser_support import new_driver, running_app, wait_for_text

    url = f"sqlite:///{folder / 'live.db'}"
    store = published_class(url, "prof@bench.test")
    for key in ("max_in_flight", "per_hour"):
        set_setting(store, key, 0)
    roster = folder / "live-roster.csv"
    roster.write_text("email,name,role\n" + "".join(f"l{i:03d}@bench.test,L{i},learner\n"
                                                     for i in range(args.live_pages)))
    import_roster(store, roster)
    users = [user_by_email(store, f"l{i:03d}@bench.test").id for i in range(args.live_pages)]
    env = dict(os.environ, ATTENTION_LAB_HOME=str(folder / "home"), ATTENTION_LAB_CLASS_DB=url)
    verdict = dict(status="passed", passed=True, raw_score=1.0, score=1.0, checks=[], mistake_ids=[],
                   report={}, sandbox="process", grader_version="bench", run_s=0.0)
    latencies = {"queued position": [], "grading": [], "done": []}
    selects, polls, stop = [], [], threading.Event()
    pages_store = Store(url)  # the pollers' own engine: its reads are theirs only
    event.listen(pages_store.engine, "before_cursor_execute", lambda conn, cursor, statement, *rest:
                 selects.append(1) if statement.lstrip().upper().startswith("SELECT") else None)
    with running_app(env) as server:
        driver = new_driver("en", tempfile.mkdtemp(prefix="chromium-profile-", dir=folder))
        try:
            link, _ = create_sign_in_link(store, "l000@bench.test", f"{server}/practice")
            driver.get(link)
            wait_for_text(driver, t("classroom.practice_title", "en"))
            cpu_start, wall_start = server_cpu_s(server), time.monotonic()
            for round_ in range(args.live_rounds):
                follow = [(u, submit(store, u, "ex00", f"x = {round_}\n", "ex00_paths.py"))
                          for u in users[1:]]  # the other pages' submissions, queued ahead of the page's
                stop.clear()
                pollers = poll_like_pages(pages_store, follow, stop, polls)
                ahead = len(follow)
                driver.find_element(By.CSS_SELECTOR, '[data-testid="stBaseButton-primary"]').click()
                wait_for_text(driver, t("classroom.state_queued", "en", position=ahead + 1))
                summary = f"bench round {round_}"
                texts = {"queued position": t("classroom.state_queued", "en", position=ahead),
                         "grading": t("classroom.state_running", "en"), "done": summary}
                driver.execute_script(SHOWN_AT_JS, list(texts.values()))
                phase = random.Random(round_)  # each change at a random moment of the pages' poll cycle
                time.sleep(phase.uniform(0, 1))
                claims = [queue.claim(store, "bench")]  # the first job ahead: the page's position - 1
                latencies["queued position"].append(shown_after(driver, texts["queued position"], time.time()))
                claims += [queue.claim(store, "bench") for _ in range(ahead - 1)]  # the rest of the jobs ahead
                time.sleep(phase.uniform(0, 1))
                claims.append(queue.claim(store, "bench"))  # the page's job
                latencies["grading"].append(shown_after(driver, texts["grading"], time.time()))
                assert claims[-1].user_id == users[0], "the page's job was not the last claimed"
                time.sleep(phase.uniform(0, 1))
                queue.finish(store, claims[-1], dict(verdict, summary=summary))
                latencies["done"].append(shown_after(driver, texts["done"], time.time()))
                stop.set()
                for thread in pollers:
                    thread.join()
                for claim in claims[:-1]:
                    queue.finish(store, claim, dict(verdict, summary=""))
                wait_for_text(driver, summary)
            cpu, wall = server_cpu_s(server) - cpu_start, time.monotonic() - wall_start
            driver.find_element(By.CSS_SELECTOR, '[data-testid="stBaseButton-primary"]').click()
            wait_for_text(driver, t("classroom.state_queued", "en", position=1))  # followed, nothing changes
            idle_start = server_cpu_s(server)
            time.sleep(10)
            idle_cpu = server_cpu_s(server) - idle_start
        finally:
            stop.set()
            driver.quit()
            store.close()
            pages_store.close()
    every = sorted(x for values in latencies.values() for x in values)
    def p(values, q):
        values = sorted(values)
        return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]
    print(f"live: 1 page in Chromium + {args.live_pages - 1} pollers every {live_poll_s()} s, "
          f"{args.live_rounds} rounds: change -> shown on the page p50 {p(every, 0.5):.2f} s, "
          f"p95 {p(every, 0.95):.2f} s, max {every[-1]:.2f} s; goal < 1 s: {'met' if p(every, 0.95) < 1 else 'NOT met'}")
    for name, values in latencies.items():
        print(f"  {name}: " + ", ".join(f"{x:.2f}" for x in values))
    print(f"  pollers: {len(polls)} polls, {len(selects)} database reads ({len(selects) / max(1, len(polls)):.3f} per poll)")
    print(f"  the app server, serving the one real page: {cpu:.1f} CPU s in {wall:.0f} s "
          f"({100 * cpu / wall:.0f}% of a core, every run included); following a queued job with nothing "
          f"changing: {1000 * idle_cpu / (10 / live_poll_s()):.1f} CPU ms per poll of the page")


def live_poll_s():
    from classroom.line import live

    return live.POLL_S


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--idle-runs", type=int, default=5)
    parser.add_argument("--book-learners", type=int, default=1000)
    parser.add_argument("--book-runs", type=int, default=3)
    parser.add_argument("--skip-burst", action="store_true")
    parser.add_argument("--skip-idle", action="store_true")
    parser.add_argument("--skip-regrade", action="store_true", help="skip the burst during a regrade (1b, 1c)")
    parser.add_argument("--skip-position", action="store_true", help="skip the position behind a regrade (1c)")
    parser.add_argument("--regrade-learners", type=int, default=300,
                        help="synthetic learners x 10 exercises graded once: the regrade of part 1b")
    parser.add_argument("--explain", action="store_true",
                        help="part 1b: per submission, its forecast, its wait and the jobs (and hangs) ahead of it")
    parser.add_argument("--no-hostile", action="store_true", help="bursts without hostile files (60%% correct)")
    parser.add_argument("--live-pages", type=int, default=0, help="time live feedback with this many open pages")
    parser.add_argument("--live-rounds", type=int, default=5)
    parser.add_argument("--skip-book", action="store_true")
    parser.add_argument("--gradebook-browser", action="store_true",
                        help="also time the gradebook and analytics pages in headless Chromium")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-classroom-"))
    ok = True
    if not args.skip_burst:
        ok = burst(args, folder)
    if not args.skip_regrade:
        regrade_burst(args, folder)
    if not args.skip_position:
        regrade_position(args, folder)
    if not args.skip_idle:
        idle(args, folder)
    if not args.skip_book:
        gradebook_bench(args, folder)
        if args.gradebook_browser:
            gradebook_browser(args, folder)
    if args.live_pages:
        live_bench(args, folder)
    print(f"(databases and worker log in {folder})")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
