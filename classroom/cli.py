"""Command line: `python -m classroom COMMAND --db URL ...` (run `python -m classroom -h`).

The command line acts as the class's operator (whoever holds the database
URL); `submit --as EMAIL` submits on behalf of a roster member under the same
rules as the app. Exit codes: 0 done, 1 refused or failed, 2 usage error.
"""

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.exc import DBAPIError

from course.common.i18n import LANGS

from .data import adjustments, exercise_table, which_counts
from .data.models import utcnow
from .data.roster import (RosterError, import_roster, init_class, instructor_name, list_users, remove_user,
                          removed_emails, user_by_email)
from .data.sessions import create_sign_in_link, revoke_links, revoke_sessions
from .data.settings import get_settings, parse_deadline, set_rule, set_setting
from .data.submissions import SubmitRefused
from .analytics import analytics, frames
from .line import eta, grading_times, live, metrics, queue
from .data.db import ENV_VAR, SchemaError, Store, normalize_url
from .lti import cli as lti_cli
from .data import backup
from .data.models import Job, Submission, User


def _db(parser):
    parser.add_argument("--db", default=os.environ.get(ENV_VAR, ""),
                        help=f"database URL, e.g. sqlite:///class.db or postgresql://user@host/class "
                             f"(default: ${ENV_VAR})")


def number(kind, least=0, above=False):
    """An argparse type: a finite number of `kind` (int or float) >= least (> least with above)."""

    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {'whole ' * (kind is int)}number") from None
        if not math.isfinite(value) or value < least or (above and value == least):
            raise argparse.ArgumentTypeError(f"{text}: use a number {'above' if above else 'of at least'} {least}")
        return value

    return parse


def port_number(text):
    """A TCP port, 1 to 65535 (argparse type)."""
    value = number(int, 1)(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"{text}: a port is at most 65535")
    return value


def fraction(text):
    """A number from 0 to 1 (argparse type)."""
    value = number(float)(text)
    if value > 1:
        raise argparse.ArgumentTypeError(f"{text}: a fraction of the score, from 0 to 1")
    return value


def build_parser():
    """The commands and their options."""
    parser = argparse.ArgumentParser(prog="python -m classroom", description="Attention Lab class mode.")
    commands = parser.add_subparsers(dest="command", required=True)

    p = commands.add_parser("init", help="create or upgrade the database and add the first instructor")
    _db(p)
    p.add_argument("--instructor", required=True, metavar="EMAIL")
    p.add_argument("--name", default="", help="the instructor's name as the class shows it (default: the one "
                                              "given before; none: their email)")

    p = commands.add_parser("upgrade", help="after pulling a new version of the project: bring the database to "
                                            "its schema, rebuild the grader's mutant caches, and record the grader "
                                            "version the class's workers must run")
    _db(p)
    p.add_argument("--skip-mutants", action="store_true",
                   help="leave the mutant caches (the unlisted-mistake hints) as they are: each exercise's is then "
                        "built at its first failing submission, or by `python -m grader mutants`")
    p.add_argument("--exercise", action="append", choices=list(exercise_table.EXERCISE_IDS), metavar="EXID",
                   help="rebuild only this exercise's mutant cache (repeatable; default: every exercise's)")

    p = commands.add_parser("roster", help="roster import FILE.csv (columns email,name,role) | roster remove EMAIL")
    p.add_argument("action", choices=["import", "remove"])
    p.add_argument("file", metavar="FILE|EMAIL")
    p.add_argument("--readmit", action="store_true",
                   help="import: also let back in the people taken off the roster whom the file lists "
                        "(without it they stay removed)")
    _db(p)

    p = commands.add_parser("worker", help="grade queued submissions")
    _db(p)
    p.add_argument("--concurrency", type=number(int, above=True), default=1,
                   help="worker processes, restarted when they die (default 1)")
    p.add_argument("--once", action="store_true", help="exit when every job is finished")
    p.add_argument("--sandbox", choices=["strict", "process"], default="strict")
    p.add_argument("--require-strict", action="store_true",
                   help="refuse to start when the strict sandbox is unavailable")
    p.add_argument("--lease", type=number(float, above=True), default=queue.LEASE_S,
                   help="lease seconds (default %(default)s)")
    p.add_argument("--job-timeout", type=number(float, above=True), default=None, metavar="SECONDS",
                   help="seconds one job may run (default: the grader's time limit)")

    p = commands.add_parser("submit", help="submit a .py or .ipynb on behalf of a roster member")
    _db(p)
    p.add_argument("--as", dest="email", required=True, metavar="EMAIL")
    p.add_argument("exercise", choices=list(exercise_table.EXERCISE_IDS), metavar="EXID")
    p.add_argument("file")
    p.add_argument("--lang", choices=LANGS, default=None,
                   help="language of the feedback (default: from LC_ALL / LC_MESSAGES / LANG, like the grader)")

    p = commands.add_parser("status", help="queue and worker state")
    _db(p)
    p.add_argument("--json", action="store_true")
    p.add_argument("--submission", type=number(int, 1), default=None, metavar="ID",
                   help="also its state and wait forecast (position, seconds to start and to feedback)")

    p = commands.add_parser("export", help="the gradebook as CSV")
    _db(p)
    p.add_argument("--out", required=True)

    p = commands.add_parser("links", help="one-time sign-in links (CSV: email,name,link,expires); "
                                          "links revoke [EMAIL | --all]")
    _db(p)
    p.add_argument("action", nargs="?", choices=["create", "revoke"], default="create",
                   help="create (default): a new link per person, replacing their older unused ones")
    p.add_argument("revoke_email", nargs="?", metavar="EMAIL", help="revoke: this person's unused links")
    p.add_argument("--all", action="store_true", help="revoke: everyone's unused links")
    p.add_argument("--base-url", default="http://localhost:8501/")
    p.add_argument("--role", choices=["learner", "ta", "instructor", "all"], default="all")
    p.add_argument("--email", action="append", help="only these users (repeatable)")

    p = commands.add_parser("regrade", help="grade every submission again and report changed scores")
    _db(p)
    p.add_argument("--all", action="store_true", required=True)
    p.add_argument("--here", action="store_true", help="grade in this process instead of waiting for workers")
    p.add_argument("--sandbox", choices=["strict", "process"], default="strict")
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds to wait for the workers")

    p = commands.add_parser("sessions", help="sessions revoke [EMAIL | --all]: sign people out on every browser")
    _db(p)
    p.add_argument("action", choices=["revoke"])
    p.add_argument("email", nargs="?", metavar="EMAIL")
    p.add_argument("--all", action="store_true", help="everyone")

    p = commands.add_parser("deadline", help="set an exercise's deadline and late policy")
    _db(p)
    p.add_argument("exercise", choices=list(exercise_table.EXERCISE_IDS), metavar="EXID")
    p.add_argument("when", help="YYYY-MM-DD HH:MM (UTC), or 'none'")
    p.add_argument("--policy", choices=["accept", "close"], default="accept")
    p.add_argument("--window-h", type=number(float), default=0.0, help="hours late submissions are accepted")
    p.add_argument("--penalty", type=fraction, default=0.0, help="fraction of the score removed when late")

    p = commands.add_parser("extend", help="give one learner a later deadline of one exercise (--until), or take "
                                           "it back (--clear); every grant and clear is logged")
    _db(p)
    _adjustment_target(p)
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--until", metavar="ISO-DATETIME",
                      help="their deadline: YYYY-MM-DD HH:MM in UTC, or with an offset (2026-12-30T18:00+08:00); later "
                           "than the exercise's deadline, and may be past (it excuses late work already in)")
    what.add_argument("--clear", action="store_true", help="remove their extension: the exercise's deadline holds")

    p = commands.add_parser("override", help="set the score that counts for one learner's exercise (--score), "
                                             "kept through regrades, or remove it (--clear); every change is logged")
    _db(p)
    _adjustment_target(p)
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--score", metavar="0..1", help="a fraction of the full score (0.8 is 80%%)")
    what.add_argument("--clear", action="store_true", help="remove it: the computed best score counts again")

    p = commands.add_parser("adjustments", help="the extensions and overrides in force, with reasons (CSV), or "
                                                "--log: every grant, change and clear")
    _db(p)
    p.add_argument("--log", action="store_true", help="the audit log instead, oldest first")
    p.add_argument("--user", metavar="EMAIL", help="--log: only this learner's")
    p.add_argument("--exercise", metavar="EXID", help="--log: only this exercise's")

    p = commands.add_parser("limits", help="show or set the submission limits and sign-in lifetimes")
    _db(p)
    p.add_argument("--in-flight", type=number(int), help="submissions queued or grading per learner (0: no limit)")
    p.add_argument("--per-hour", type=number(int), help="submissions per learner per hour (0: no limit)")
    p.add_argument("--session-hours", type=number(int, above=True), help="how long a sign-in lasts (default 12)")
    p.add_argument("--link-hours", type=number(int, above=True), help="how long a new sign-in link stays valid (default 72)")
    p.add_argument("--variants", type=int, choices=(0, 1),
                   help="1 (default): each learner gets their own exercise variants, stored at first need and "
                        "kept; 0: everyone gets the published exercises (learners already assigned keep theirs)")
    p.add_argument("--lab-runs", type=number(int), metavar="N",
                   help="training-lab runs the app server trains at once, class-wide (default 0: learners start "
                        "none; TAs and instructors always may, one each)")
    p = commands.add_parser("metrics", help="serve the queue's, workers' and LMS outbox's numbers to Prometheus, "
                                            "read from the database at each scrape")
    _db(p)
    p.add_argument("--port", type=port_number, default=metrics.DEFAULT_PORT, help="default %(default)s")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default %(default)s: this machine only; put a proxy or a firewall "
                        "in front before listening on others)")
    lti_cli.add_commands(commands, _db)
    backup.add_commands(commands, _db)
    return parser


def _adjustment_target(parser):
    parser.add_argument("--user", required=True, metavar="EMAIL", help="the learner (on the roster)")
    parser.add_argument("--exercise", required=True, metavar="EXID", help="e.g. ex03")
    parser.add_argument("--reason", default="", help="why (required to grant or change; optional to clear): kept in "
                                                    "the log, shown to staff only")
    parser.add_argument("--by", metavar="EMAIL", help="the TA or instructor granting it (default: this command "
                                                       "line's user@host is logged)")


def main(argv=None):
    """Entry point -> exit code."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    handler = COMMANDS[args.command]
    try:
        return handler(args)
    except (SchemaError, queue.VersionMismatch, RosterError, SubmitRefused, LookupError,
            ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except DBAPIError as err:  # nothing was committed: say so plainly
        print(f"error: the database refused the operation, nothing was saved: {err.orig}", file=sys.stderr)
        return 1


def cmd_init(args):
    store = init_class(args.db, args.instructor, args.name)
    name = instructor_name(store)
    print(f"class database ready at {store.engine.url.render_as_string(hide_password=True)}; "
          f"instructor {args.instructor.strip().lower()}" + (f" (shown as {name})" if name else ""))
    return 0


def cmd_upgrade(args):
    """The database to the code's schema, the mutant caches for this grader version, then the class's expected
    grader version: workers of another version stop claiming jobs from then on (classroom/line/worker.py)."""
    from .data import verdicts
    from .data.db import make_engine, upgrade_schema

    if args.skip_mutants and args.exercise:
        raise ValueError("--exercise chooses the mutant caches to rebuild, --skip-mutants rebuilds none: "
                         "give one of them")
    engine = make_engine(args.db)
    try:
        before, after = upgrade_schema(engine)
    finally:
        engine.dispose()
    print(f"database schema: {before} -> {after}" if before != after else
          f"database schema: {after}, already this version's")
    failed = [] if args.skip_mutants else upgrade_mutants(args.exercise or list(exercise_table.EXERCISE_IDS))
    store = Store(args.db)
    version = verdicts.grader_version()
    previous = get_settings(store)["grader_version"]
    set_setting(store, "grader_version", version)
    print(f"grader version: {previous or 'none recorded'} -> {version}" if previous != version else
          f"grader version: {version}, already the class's")
    alive = [w for w in queue.queue_status(store)["workers"] if w["alive"]]
    others = [w for w in alive if w["grader_version"] not in ("", version)]
    unchecked = [w["id"] for w in alive if not w["grader_version"]]
    if others:
        print(f"{len(others)} live worker(s) run another grader version and claim no job until restarted from "
              "this version's checkout: " + ", ".join(f"{w['id']} ({w['grader_version']})" for w in others))
    if unchecked:
        print(f"{len(unchecked)} live worker(s) started before workers checked their grader version and go on "
              f"grading with the code they started with: restart them now: {', '.join(unchecked)}")
    print("restart the workers and the app from this checkout: a running process keeps the code it started with")
    if failed:
        print(f"error: the mutant caches of {', '.join(failed)} could not be built (grading is unaffected; those "
              "exercises' unlisted-mistake hints are built at their first failing submission): run `python -m "
              "grader mutants " + " ".join(failed) + "` to see why", file=sys.stderr)
        return 1
    return 0


def upgrade_mutants(ex_ids):
    """Build the mutant caches this grader version lacks (grader/diagnosis/mutants.py `build`), saying what was done
    -> the exercises whose build failed."""
    from grader.diagnosis import mutants

    lines, current, failed = mutants.build(ex_ids)
    for line in lines:
        print(f"mutant cache {line}")
    if current:
        print(f"mutant caches already built for this grader version: {', '.join(current)}")
    print(f"mutant caches (grader version {mutants.version_key()}) in {mutants.cache_dir()}")
    return failed


def cmd_roster(args):
    if args.action == "remove":
        if args.readmit:
            raise ValueError("--readmit goes with `roster import FILE`; `roster remove` takes people off")
        sessions, links = remove_user(Store(args.db), args.file)
        print(f"removed {args.file.strip().lower()}: they can no longer sign in ({sessions} session(s) and "
              f"{links} unused link(s) revoked); their submissions stay in the gradebook, marked removed")
        return 0
    added, updated, unchanged, kept = import_roster(Store(args.db), args.file, readmit=args.readmit)
    print(f"roster imported: {added} added, {updated} updated, {unchanged} unchanged")
    if kept:
        print(f"kept off the roster ({len(kept)}, removed earlier; they still cannot sign in): {', '.join(kept)}\n"
              f"to let them back in, import again with --readmit: python -m classroom roster import "
              f"{args.file} --readmit (it readmits every removed person the file lists)")
    return 0


def cmd_worker(args):
    from .line import worker

    try:
        if args.concurrency > 1:
            return worker.run_pool(args.db, args.concurrency, args.sandbox, args.once, args.require_strict,
                                   args.lease, job_timeout_s=args.job_timeout)
        worker.run_worker(args.db, args.sandbox, args.once, args.require_strict, args.lease, handle_signals=True,
                          job_timeout_s=args.job_timeout)
    except RuntimeError as err:  # StrictUnavailable with --require-strict
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


def cmd_submit(args):
    from .web import access

    store = Store(args.db)
    user = user_by_email(store, args.email)
    if user is None:
        raise LookupError(f"{args.email} is not on this class's roster")
    path = Path(args.file)
    try:
        data = path.read_bytes()
    except OSError as err:
        raise ValueError(f"cannot read {path}: {err.strerror}") from None
    lang = args.lang
    if lang is None:  # the grader's rule; imported only here (the grader package loads torch)
        from grader.text import default_lang

        lang = default_lang()
    submission_id = access.submit(store, user.id, args.exercise, data, path.name, lang=lang)
    print(submission_id)  # only after the commit
    return 0


def submission_wait(store, submission_id):
    """A submission's state and wait forecast, as `status --submission` shows it -> dict."""
    now = live.Snapshot(store).get(submission_id)
    start, finish = (None, None) if now.start_s is None else (round(now.start_s, 1), round(now.finish_s, 1))
    return {"id": submission_id, "state": now.state, "position": now.position, "delayed": now.delayed,
            "start_s": start, "finish_s": finish}


def cmd_status(args):
    store = Store(args.db)
    status = queue.queue_status(store)
    with store.session() as session:
        status["set_aside"] = grading_times.set_aside_counts(session)
    if args.submission is not None:
        status["submission"] = submission_wait(store, args.submission)
    if args.json:
        print(json.dumps(status, indent=2))
        return 0
    jobs = status["jobs"]
    print(f"jobs: {jobs['queued']} queued, {jobs['running']} running ({status['expired_leases']} with an "
          f"expired lease), {jobs['done']} done, {jobs['error']} error")
    if status["oldest_queued_s"] is not None:
        print(f"oldest queued job waits for {status['oldest_queued_s']:.0f} s")
    aside = status["set_aside"]
    if aside["runs"]:
        print(f"first runs set aside (past their exercise's set-aside time): {aside['runs']}; of the "
              f"{aside['graded']} graded since, {aside['not_endless']} ended before the {eta.LIMIT_S:g} s limit "
              f"(slow, not endless: their learners waited behind the other submissions)")
    expected = status["grader_version"]
    if expected is not None:
        print(f"grader version expected of the workers: {expected} (recorded by `python -m classroom upgrade`)")
    for w in status["workers"]:
        doing = f"grading job {w['current_job']}" if w["current_job"] else "idle"
        if expected is not None and not w["grader_version"]:  # it checks no version: it claims what it finds
            doing += (", started before workers checked their grader version: restart it from a checkout of the "
                      "class's version")
        elif expected is not None and w["grader_version"] != expected:
            doing = (f"REFUSING JOBS: it runs grader version {w['grader_version']}, not the class's; restart it "
                     "from a checkout of the class's version")
        if not w["alive"]:
            doing = f"DEAD (no heartbeat for longer than its {w['lease_s']:g} s lease; was {doing})"
        print(f"worker {w['id']} ({w['sandbox']}): {w['jobs_done']} done, {doing}, seen {w['seen_s_ago']:.0f} s ago")
    if not any(w["alive"] for w in status["workers"]):
        print("no live worker: queued jobs wait until one starts (`python -m classroom worker`)")
    elif expected is not None and not any(w["alive"] and w["grader_version"] in (expected, "")  # "" claims anyway
                                          for w in status["workers"]):
        print("no live worker runs the class's grader version: queued jobs wait until one starts")
    wait = status.get("submission")
    if wait is not None:
        if wait["state"] == "finished":
            print(f"submission {wait['id']}: no unfinished job")
        else:
            print(f"submission {wait['id']}: {wait['state']}, "
                  + eta.sentence(wait["position"], wait["start_s"], wait["finish_s"], "en"))
    return 0


def cmd_export(args):
    store = Store(args.db)
    book = analytics.gradebook(frames.submissions_frame(store), exercise_table.EXERCISE_IDS, frames.learners(store),
                               removed_emails(store), adjustments.current(store))
    Path(args.out).write_text(analytics.gradebook_csv(book), encoding="utf-8", newline="")
    print(f"wrote {args.out}: {len(book)} learners x {len(exercise_table.EXERCISE_IDS)} exercises")
    return 0


def _one_or_all(args, email, what):
    """The email to act on, or None for --all; ValueError unless exactly one was given."""
    if bool(email) == bool(args.all):
        raise ValueError(f"{what}: name one EMAIL or pass --all")
    return email


def cmd_links(args):
    import pandas as pd

    store = Store(args.db)
    if args.action == "revoke":
        email = _one_or_all(args, args.revoke_email, "links revoke")
        revoked = revoke_links(store, email)
        print(f"revoked {revoked} unused sign-in link(s) of {email or 'everyone'}")
        return 0
    if args.revoke_email or args.all:
        raise ValueError("EMAIL and --all go with `links revoke`; to create links use --email EMAIL")
    users = list_users(store, None if args.role == "all" else args.role)
    wanted = {e.strip().lower() for e in args.email or []}
    unknown = wanted - {u.email for u in users}
    if unknown:
        raise LookupError(f"not on the roster (with role {args.role}): {', '.join(sorted(unknown))}")
    rows = []
    for user in users:
        if wanted and user.email not in wanted:
            continue
        link, expires = create_sign_in_link(store, user.email, args.base_url)
        rows.append([user.email, user.name, link, f"{expires:%Y-%m-%d %H:%M}"])
    sys.stdout.write(analytics.spreadsheet_csv(pd.DataFrame(rows, columns=["email", "name", "link", "expires_utc"],
                                                            dtype=object), bom=False))
    print("each new link replaces that person's older unused links (they no longer work)", file=sys.stderr)
    return 0


def cmd_sessions(args):
    email = _one_or_all(args, args.email, "sessions revoke")
    revoked = revoke_sessions(Store(args.db), email)
    print(f"revoked {revoked} session(s) of {email or 'everyone'}: they must sign in again")
    return 0


def newest_results(session, submission_ids=None):
    """{submission id: newest Result} (see classroom/data/which_counts.py)."""
    return {s.id: r for s, r in which_counts.newest_results(session, submission_ids=submission_ids)}


def cmd_regrade(args):
    store = Store(args.db)
    with store.session() as session:
        before = newest_results(session)
        first_job = (session.scalar(select(Job.id).order_by(Job.id.desc())) or 0) + 1
    count = queue.enqueue_regrade(store)
    print(f"queued {count} regrade job(s): each submission is graded as submitted, with the learner's "
          "dependencies as they stood when it was submitted, and lateness under today's deadlines",
          file=sys.stderr)
    if args.here:
        from .line import worker

        worker.run_worker(args.db, args.sandbox, once=True)
    deadline = time.monotonic() + args.timeout
    while True:
        with store.session() as session:
            left = session.scalar(select(Job.id).where(Job.id >= first_job, Job.state.in_(("queued", "running"))))
        if left is None:
            break
        if time.monotonic() > deadline:
            print("error: the regrade jobs did not finish in time: are workers running?", file=sys.stderr)
            return 1
        time.sleep(1.0)
    for line in regrade_report(store, before):
        print(line)
    return 0


def regrade_report(store, before):
    """Lines 'submission N (email, exNN): 0.5 -> 1 (failed -> passed)' for each changed verdict."""
    with store.session() as session:
        after = newest_results(session, before)
        owners = dict(session.execute(select(Submission.id, User.email).join(User, User.id == Submission.user_id)).all())
        exercise = dict(session.execute(select(Submission.id, Submission.exercise_id)).all())
    lines = []
    for sid, old in sorted(before.items()):
        new = after.get(sid)
        if new is None or (new.score, new.status) == (old.score, old.status):
            continue
        lines.append(f"submission {sid} ({owners[sid]}, {exercise[sid]}): score {old.score:g} -> {new.score:g} "
                     f"({old.status} -> {new.status})")
    lines.append(f"{len(lines)} of {len(before)} graded submission(s) changed")
    return lines


def cmd_deadline(args):
    store = Store(args.db)
    when = None if args.when.strip().lower() == "none" else parse_deadline(args.when)
    set_rule(store, args.exercise, when, args.policy, args.window_h, args.penalty)
    print(f"{args.exercise}: deadline {when or 'none'} UTC, policy {args.policy}, window {args.window_h:g} h, "
          f"penalty {args.penalty:g}")
    return 0


def _score_words(score):
    return "none" if score is None else f"{score:g}"


def _score_change(outcome):
    if outcome.before == outcome.after:
        return f"the score that counts stays {_score_words(outcome.after)}"
    return (f"the score that counts: {_score_words(outcome.before)} -> {_score_words(outcome.after)} (the LMS is sent "
            "it at its next sync)")


def cmd_extend(args):
    store = Store(args.db)
    actor = adjustments.actor_name(store, args.by)
    who = f"{args.user.strip().lower()}, {args.exercise.strip()}"
    if args.clear:
        outcome = adjustments.clear_extension(store, args.user, args.exercise, args.reason, actor)
        print(f"{who}: extension removed, the exercise's deadline "
              f"({outcome.class_deadline:%Y-%m-%d %H:%M} UTC) holds again; {outcome.relabelled} submission(s) "
              f"changed lateness; {_score_change(outcome)}" if outcome.class_deadline is not None else
              f"{who}: extension removed (the exercise has no deadline now); {_score_change(outcome)}")
        return 0
    until = adjustments.parse_until(args.until)
    outcome = adjustments.grant_extension(store, args.user, args.exercise, until, args.reason, actor)
    if outcome.action is None:
        print(f"{who}: already extended to {until:%Y-%m-%d %H:%M} UTC with this reason; nothing changed")
        return 0
    past = " (already past: it excuses late work submitted before it)" if until < utcnow() else ""
    print(f"{who}: deadline extended to {until:%Y-%m-%d %H:%M} UTC{past}, the exercise's being "
          f"{outcome.class_deadline:%Y-%m-%d %H:%M} UTC; {outcome.relabelled} submission(s) changed lateness; "
          f"{_score_change(outcome)}")
    return 0


def cmd_override(args):
    store = Store(args.db)
    actor = adjustments.actor_name(store, args.by)
    who = f"{args.user.strip().lower()}, {args.exercise.strip()}"
    if args.clear:
        outcome = adjustments.clear_override(store, args.user, args.exercise, args.reason, actor)
        print(f"{who}: override removed, the computed best score counts again; {_score_change(outcome)}")
        return 0
    outcome = adjustments.set_override(store, args.user, args.exercise, args.score, args.reason, actor)
    if outcome.action is None:
        print(f"{who}: the override is already {_score_words(outcome.after)} with this reason; nothing changed")
        return 0
    print(f"{who}: score set to {_score_words(outcome.after)} until cleared (regrades leave it); "
          f"{_score_change(outcome)}")
    return 0


def cmd_adjustments(args):
    store = Store(args.db)
    if not args.log and (args.user or args.exercise):
        raise ValueError("--user and --exercise choose log rows: add --log")
    frame = (adjustments.audit_log(store, args.user, args.exercise) if args.log else adjustments.current(store))
    sys.stdout.write(analytics.spreadsheet_csv(frame, bom=False))
    return 0


def cmd_limits(args):
    store = Store(args.db)
    if args.in_flight is not None:
        set_setting(store, "max_in_flight", args.in_flight)
    if args.per_hour is not None:
        set_setting(store, "per_hour", args.per_hour)
    if args.session_hours is not None:
        set_setting(store, "session_hours", args.session_hours)
    if args.link_hours is not None:
        set_setting(store, "link_hours", args.link_hours)
    if args.variants is not None:
        set_setting(store, "variants", args.variants)
    if args.lab_runs is not None:
        set_setting(store, "lab_runs", args.lab_runs)
    print(json.dumps(get_settings(store)))
    return 0


def cmd_metrics(args):
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        where = make_url(normalize_url(args.db)).render_as_string(hide_password=True)
        store = Store(args.db)
    except ArgumentError as err:  # not a URL SQLAlchemy reads, or a database it has no driver for
        raise ValueError(f"--db {args.db!r} is not a database URL ({err}): use e.g. sqlite:///class.db or "
                         "postgresql://user@host/class") from None
    except DBAPIError as err:
        print(f"error: cannot read the class database at {where}: {str(err.orig).strip()}\n"
              f"check --db (or ${ENV_VAR}), that the database server runs and that this machine may connect",
              file=sys.stderr)
        return 1
    try:
        return metrics.serve(store, args.port, args.host)
    except OSError as err:  # the port in use, or an address not of this machine
        print(f"error: cannot listen on {args.host} port {args.port}: {err.strerror or err}\n"
              "choose another --port (another exporter may be running) or a --host of this machine",
              file=sys.stderr)
        return 1
    finally:
        store.close()


COMMANDS = {"init": cmd_init, "upgrade": cmd_upgrade, "roster": cmd_roster, "worker": cmd_worker, "submit": cmd_submit,
            "status": cmd_status, "export": cmd_export, "links": cmd_links, "regrade": cmd_regrade,
            "deadline": cmd_deadline, "extend": cmd_extend, "override": cmd_override, "adjustments": cmd_adjustments,
            "limits": cmd_limits, "sessions": cmd_sessions, "metrics": cmd_metrics,
            **lti_cli.COMMANDS}
COMMANDS.update(backup.COMMANDS)  # backup, restore
