"""LMS passback at class scale: after `regrade --all`, how soon the LMS holds the gradebook's scores.

    python bench/lti.py [--learners 1000] [--timeout 300] [--first-sync-only] [--regrade-in-bulk]

A SQLite class with --learners learners x every exercise (one graded
submission each, bench/classroom.py's synthetic history), all members of one
course of a local LMS (tests/lti_platform.py, in a process of its own). First
`python -m classroom lti-sync` brings the LMS up to date; then every
submission is regraded through the queue (claim and finish, as workers store
verdicts, with new scores for about half; with --regrade-in-bulk the same verdicts and outbox
changes are stored in one transaction, since the claims one by one take many minutes on a loaded
machine and passback starts from the stored verdicts either way), and a fresh `lti-sync` is started:
prints the seconds from the last stored verdict until the LMS's scores equal
the gradebook's, with the line items and score posts the LMS received
(goal: within 60 s for 1,000 learners; no line item or score twice), and the CPU seconds
lti-sync and the LMS spent (the wall time on an idle machine is about the larger of the two).
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.classroom import fill_class  # noqa: E402
from classroom.analytics import analytics, frames  # noqa: E402
from classroom.data import exercise_table  # noqa: E402
from classroom.data.roster import init_class, list_users  # noqa: E402
from classroom.line import queue  # noqa: E402
from classroom.lti import accounts, config  # noqa: E402
from classroom.data.models import Job, LtiPlatform, LtiScore, Result, Submission, utcnow  # noqa: E402
from sqlalchemy import func, insert, select, update  # noqa: E402


def start_lms(store, folder):
    """The local LMS in its own process -> (process, its registration args and URL)."""
    info = folder / "lms.json"
    code = ("import sys; from tests.lti_platform import serve_for_bench; "
            "serve_for_bench(sys.argv[1], sys.argv[2])")
    process = subprocess.Popen([sys.executable, "-c", code, json.dumps(config.tool_jwks(store)), str(info)],
                               cwd=ROOT)
    deadline = time.monotonic() + 60
    while not info.exists():
        if time.monotonic() > deadline or process.poll() is not None:
            raise SystemExit("the local LMS did not start")
        time.sleep(0.1)
    time.sleep(0.2)
    return process, json.loads(info.read_text())


def join_course(store, lms):
    """Every learner a member of the LMS course (as a launch or a roster sync would make them)."""
    claims = {accounts.CONTEXT_CLAIM: {"id": "course-1", "title": "Attention 101"},
              accounts.DEPLOYMENT_CLAIM: "dep-1",
              accounts.AGS_CLAIM: {"lineitems": f"{lms['url']}/ags/course-1/lineitems",
                                   "scope": ["https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
                                             "https://purl.imsglobal.org/spec/lti-ags/scope/score"]}}
    learners = list_users(store, "learner")
    with store.session() as session:
        platform = session.query(LtiPlatform).one()
        context = accounts.course(session, platform, claims)
        for user in learners:
            accounts.link_member(session, context, session.merge(user), f"lms-{user.email}")


def regrade_all(store, seed=2):
    """Queue a regrade of everything and store its verdicts through the queue -> seconds."""
    rng = random.Random(seed)
    started = time.perf_counter()
    queue.enqueue_regrade(store)
    while (claim := queue.claim(store, "bench-worker")) is not None:
        passed = rng.random() < 0.5
        score = 1.0 if passed else round(rng.random() * 0.9, 2)
        queue.finish(store, claim, dict(status="passed" if passed else "failed", passed=passed, raw_score=score,
                                        score=round(score * (1 - claim.penalty), 4), summary="", checks=[],
                                        mistake_ids=[], report={}, sandbox="process", grader_version="bench",
                                        run_s=0.0))
    return time.perf_counter() - started


def regrade_in_bulk(store, seed=2):
    """The same verdicts as regrade_all (a done regrade job and its result per submission, the LMS outbox bumped
    as queue.finish bumps it), stored in one transaction -> seconds (the queue's claims take minutes at 10,000
    jobs on a loaded machine, and passback starts from the stored verdicts either way)."""
    rng = random.Random(seed)
    started, now = time.perf_counter(), utcnow()
    with store.session() as session:
        subs = session.execute(select(Submission.id, Submission.penalty).order_by(Submission.id)).all()
        first = (session.scalar(select(func.max(Job.id))) or 0) + 1
        session.execute(insert(Job), [dict(id=first + i, submission_id=sid, reason="regrade", state="done",
                                           attempts=1, created_at=now, started_at=now, finished_at=now, error="")
                                      for i, (sid, _) in enumerate(subs)])
        results = []
        for i, (sid, penalty) in enumerate(subs):
            passed = rng.random() < 0.5
            score = 1.0 if passed else round(rng.random() * 0.9, 2)
            results.append(dict(submission_id=sid, job_id=first + i, status="passed" if passed else "failed",
                                passed=passed, raw_score=score, score=round(score * (1 - (penalty or 0.0)), 4),
                                summary="", checks=[], mistake_ids=[], report={}, sandbox="process",
                                grader_version="bench", run_s=0.0, created_at=now))
        session.execute(insert(Result), results)
        session.execute(update(LtiScore).values(version=LtiScore.version + 1, due=True))  # every learner x exercise
    return time.perf_counter() - started


def gradebook(store):
    book = analytics.gradebook(frames.submissions_frame(store), exercise_table.EXERCISE_IDS, frames.learners(store))
    return {(ex_id, f"lms-{row['email']}"): round(float(row[ex_id]), 4) for _, row in book.iterrows()
            for ex_id in exercise_table.EXERCISE_IDS if row[ex_id] == row[ex_id]}


def held(lms):
    import requests

    state = requests.get(f"{lms['url']}/held", timeout=60).json()
    return {(ex, user): round(score, 4) for ex, user, score in state["scores"]}, state


def cpu_s(pid):
    """User + system CPU seconds a running process has used (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def sync_until_equal(url, lms, want, timeout, lms_pid):
    """Run `lti-sync` until the LMS holds `want` -> (seconds or None, lti-sync CPU s, LMS CPU s)."""
    env = dict(os.environ, ATTENTION_LAB_CLASS_DB=url)
    started, lms_cpu = time.perf_counter(), cpu_s(lms_pid)
    sync = subprocess.Popen([sys.executable, "-m", "classroom", "lti-sync", "--interval", "0.5"], cwd=ROOT,
                            env=env, stdout=subprocess.DEVNULL)
    took, sync_cpu = None, 0.0
    try:
        while time.perf_counter() - started < timeout:
            if held(lms)[0] == want:
                took = time.perf_counter() - started
                break
            time.sleep(2.0)  # asking the LMS costs it CPU too
        sync_cpu = cpu_s(sync.pid)
        return took, sync_cpu, cpu_s(lms_pid) - lms_cpu
    finally:
        sync.terminate()
        sync.wait(30)


def report(what, count, timing):
    took, sync_cpu, lms_cpu = timing
    when = f"after {took:.1f} s" if took is not None else "NOT within the timeout"
    print(f"{what}: the LMS equals the gradebook ({count} scores) {when}; CPU: lti-sync {sync_cpu:.1f} s, "
          f"LMS {lms_cpu:.1f} s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=1000)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--first-sync-only", action="store_true",
                        help="stop after the first sync (the regrade through the queue is the slow part)")
    parser.add_argument("--regrade-in-bulk", action="store_true",
                        help="store the regrade's verdicts in one transaction instead of claim by claim")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-lti-"))
    url = f"sqlite:///{folder / 'class.db'}"
    store = init_class(url, "prof@bench.test")
    count = fill_class(store, learners=args.learners, attempts=1)
    process, lms = start_lms(store, folder)
    try:
        config.register_platform(store, lms["issuer"], lms["client_id"], lms["auth_login_url"],
                                 lms["auth_token_url"], lms["key_set_url"], lms["deployment_ids"])
        join_course(store, lms)
        want = gradebook(store)
        first = sync_until_equal(url, lms, want, args.timeout, process.pid)
        report(f"first sync of {count} graded submissions", len(want), first)
        ok = first[0] is not None and first[0] <= 60
        if not args.first_sync_only:
            regrade_s = regrade_in_bulk(store) if args.regrade_in_bulk else regrade_all(store)
            how = "in one transaction" if args.regrade_in_bulk else "through the queue"
            print(f"regrade --all of {count} submissions stored {how} in {regrade_s:.1f} s")
            want = gradebook(store)
            timing = sync_until_equal(url, lms, want, args.timeout, process.pid)
            report("after the regrade", len(want), timing)
            ok = timing[0] is not None and timing[0] <= 60
        state = held(lms)[1]
        print(f"the LMS received {state['line_items']} line items and {state['score_posts']} score posts in all")
        ok = ok and state["line_items"] == len(exercise_table.EXERCISE_IDS)
    finally:
        process.terminate()
        process.wait(30)
    print(f"(database in {folder})")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
