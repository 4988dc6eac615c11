"""The grading worker: claim a job, grade it (renewing the lease), store the verdict, repeat.

`python -m classroom worker --db URL [--concurrency N] [--once]`: N worker
processes (each grades one job at a time); `--once` exits when every job is
finished (it waits for running jobs: they return to the queue if their worker
dies). Any number of workers on any number of machines may share a Postgres
database. SIGTERM/SIGINT: finish the current job, then exit.

A database that goes away (a Postgres restart, a full or read-only disk) does
not end a worker: it retries with backoff, and a verdict waits in memory until
it can be stored. A database that refuses what was sent (a value it cannot
hold: `is_outage` tells the two apart) is not retried: a verdict it refuses is
replaced at once by an error verdict saying so, which closes the job. A job
whose sandbox fails under it (its warm server dies, or cannot start) is queued
again, up to queue.SANDBOX_TRIES runs (`sandbox_failed`). The pool (`--concurrency N`) restarts a worker process that
dies, with backoff; it passes the database URL to them in the environment,
never on a command line that `ps` shows.

Each worker registers the grader version it runs (classroom/data/verdicts.py grader_version). Once `python -m classroom
upgrade` has recorded the version the class expects, a worker of another version claims no job
(queue.VersionMismatch, checked in each claim's transaction): it says so in its log, with both versions and the
fix, and waits, checking again at every poll, rather than exiting. Waiting suits a rolling upgrade: a worker
restarted from the new checkout before `upgrade` ran starts grading the moment the class expects its version, and
one left on the old version stops claiming at that moment, stays listed alive in `status`, and keeps saying why
(again every REFUSAL_LOG_S) until it is restarted; an exit would have the pool or the service manager restart it
over and over. A mismatch is not an outage (nothing `retrying` waits out) and no job is touched: queued jobs stay
queued for a worker of the class's version. With `--once` the worker stops instead (VersionMismatch, exit code 1),
since it could never empty the queue. A class with no recorded version (never upgraded) lets any worker claim.
"""

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from . import grading, grading_times, queue, reference_times
from ..data import verdicts
from ..data.db import ENV_VAR, Store
from ..data.models import Job, utcnow


def log_line(text):
    """A timestamped log line on stderr."""
    print(f"{datetime.now():%H:%M:%S} worker {os.getpid()}: {text}", file=sys.stderr, flush=True)


class _Lease(threading.Thread):
    """Renews a claim's lease every lease_s / 4 (real seconds; the lease's end by `clock`) until stopped."""

    def __init__(self, store, claim, lease_s, clock=utcnow):
        super().__init__(daemon=True)
        self.store, self.claim, self.lease_s, self.clock = store, claim, lease_s, clock
        self.stopped = threading.Event()
        self.lost = False

    def run(self):
        while not self.stopped.wait(self.lease_s / 4):
            try:
                if not queue.renew(self.store, self.claim, self.lease_s, self.clock):
                    self.lost = True
                    return
            except Exception as err:  # a database hiccup: try again next time
                log_line(f"could not renew the lease of job {self.claim.job_id}: {err}")


def _unfinished(store):
    """Jobs queued or running (a running job comes back if its worker dies)."""
    with store.session() as session:
        return session.scalar(select(func.count(Job.id)).where(Job.state.in_(("queued", "running"))))


MAX_BACKOFF_S = 30.0  # the longest wait between retries (database) and restarts (pool)
# Postgres errors outside OperationalError that an outage gives: a read-only transaction (a standby after a
# failover, a server set read-only) and a session the server ended after it sat idle in a transaction
OUTAGE_SQLSTATES = {"25006", "25P03"}
REFUSAL_LOG_S = 300.0  # a worker refusing jobs for its grader version says so again this often (and at each change)


def is_outage(err):
    """Is this database error (a SQLAlchemy StatementError) an outage, which the same statement may outlast (the
    server, the connection or the disk gone, full or read-only; a lock or a deadlock), rather than the database
    refusing what was sent (a value it cannot hold, a broken constraint: DataError, IntegrityError, a value the
    driver cannot send), which it would refuse again?"""
    if isinstance(err, (OperationalError, InterfaceError)):
        return True
    return isinstance(err, DBAPIError) and (err.connection_invalidated
                                            or getattr(err.orig, "sqlstate", None) in OUTAGE_SQLSTATES)


def db_error_text(err):
    """A database error in one line for the log: its driver's type and message (at most 200 characters)."""
    cause = getattr(err, "orig", None) or err
    return f"{type(cause).__name__}: {' '.join(str(cause).split())[:200]}"


def retrying(action, what, log, give_up=lambda: False, max_backoff_s=MAX_BACKOFF_S):
    """action() until the database answers: waits 0.5, 1, 2 ... max_backoff_s s between tries of an outage.

    Raises the last database error once give_up() is true, and at once one that is not an outage (is_outage: a
    refusal the database would repeat).
    """
    delay = 0.5
    while True:
        try:
            return action()
        except DBAPIError as err:
            if give_up() or not is_outage(err):
                raise
            log(f"database unavailable while {what} ({db_error_text(err)}); retrying in {delay:g} s")
            time.sleep(delay)
            delay = min(delay * 2, max_backoff_s)


def run_worker(url, sandbox="strict", once=False, require_strict=False, lease_s=queue.LEASE_S,
               poll_s=grading_times.IDLE_POLL_S, worker_id=None, log=log_line, handle_signals=False,
               clock=utcnow, job_timeout_s=None, grader_version=None):
    """Grade jobs until stopped (or, with once, until none is left) -> number of jobs graded.

    handle_signals (the command line): SIGTERM/SIGINT finish the current job, then stop.
    job_timeout_s: seconds a job may run (None: the grader's default, SandboxLimits.timeout_s).
    clock: now as a naive UTC datetime, for the queue's leases and heartbeats (tests pass a fake one).
    grader_version: the version this worker registers and claims as (None: this process's,
    verdicts.grader_version; tests pass another to play a worker of another checkout). While the class expects
    another version it claims nothing and waits (see the module's docstring); with once it raises
    queue.VersionMismatch instead, after leaving `status`.
    """
    stop = threading.Event()
    if handle_signals:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
    store = retrying(lambda: Store(url), "connecting", log, stop.is_set)
    mode = grading.choose_sandbox(sandbox, require_strict, log)
    worker_id = worker_id or f"{socket.gethostname()}:{os.getpid()}"
    host = socket.gethostname()
    version = verdicts.grader_version() if grader_version is None else grader_version
    retrying(lambda: queue.register_worker(store, worker_id, host, os.getpid(), mode, lease_s, clock, version),
             "registering", log, stop.is_set)
    graded = 0
    beat = time.monotonic()
    refusing, refused = None, None  # the VersionMismatch being waited out, and when it was last logged
    log(f"{worker_id} ready, grader version {version} "
        f"({'until the queue is empty' if once else 'Ctrl-C to stop'})")
    while not stop.is_set():
        try:
            claim = retrying(lambda: queue.claim(store, worker_id, lease_s, clock=clock, grader_version=version),
                             "claiming a job", log, stop.is_set)
        except queue.VersionMismatch as mismatch:
            if once:
                refusing = mismatch
                break
            if (refusing is None or refusing.expected != mismatch.expected
                    or time.monotonic() - refused >= REFUSAL_LOG_S):
                log(f"refusing jobs: {mismatch}. Checking again every {poll_s:g} s")
                refused = time.monotonic()
            refusing, claim = mismatch, None
        else:
            if refusing is not None:
                log(f"the class's expected grader version now admits this worker's ({version}): claiming jobs again")
                refusing = None
        if claim is None:
            if once and retrying(lambda: _unfinished(store), "reading the queue", log, stop.is_set) == 0:
                break
            if time.monotonic() - beat >= lease_s / 4:
                retrying(lambda: queue.heartbeat(store, worker_id, clock), "sending a heartbeat", log, stop.is_set)
                beat = time.monotonic()
            stop.wait(poll_s)
            continue
        graded += grade_job(store, claim, mode, lease_s, log, clock, job_timeout_s)
        beat = time.monotonic()
    try:
        queue.unregister_worker(store, worker_id)
    except DBAPIError:  # the database is gone: status shows this worker dead after its lease
        pass
    store.close()
    log(f"{worker_id} stopped after {graded} job(s)")
    if once and refusing is not None:
        raise refusing
    return graded


def set_aside_after(store, claim, limit_s, mode, log=None):
    """Seconds a claimed submission's first run may take before it is set aside (reference_times.set_aside_s of
    its exercise's reference run on this worker, in its sandbox `mode`: no learner's job moves it), or None: it
    runs to limit_s (a regrade, a run already set aside, no reference time, or a set-aside time not below the
    limit)."""
    if not claim.may_set_aside:
        return None
    return reference_times.set_aside_s(reference_times.reference_s(store, claim.exercise_id, mode, log), limit_s)


def ran_to(verdict, limit_s):
    """Did the verdict's sandboxed run last its whole time limit (the sandbox stopped it: Result.run_s is the run's
    time)?"""
    return grading_times.ran_to(verdict.get("run_s", 0.0), limit_s)


def grade_job(store, claim, mode, lease_s, log, clock=utcnow, job_timeout_s=None):
    """Grade one claimed job and store its verdict -> 1 if stored, 0 if the claim was lost, the submission was
    set aside (its first run passed its exercise's set-aside time: queue.set_aside; it runs again later) or its
    sandbox failed under it with tries left (queue.sandbox_failed; it is graded again)."""
    lease = _Lease(store, claim, lease_s, clock)
    lease.start()
    started = time.monotonic()
    aside_s = None
    try:
        limits = grading.job_limits(job_timeout_s)
        aside_s = retrying(lambda: set_aside_after(store, claim, limits.timeout_s, mode, log),
                           f"reading job {claim.job_id}", log, lambda: lease.lost)
        if aside_s is not None:
            limits = grading.job_limits(aside_s)
        verdict = retrying(lambda: grading.grade_claim(store, claim, mode, limits), f"reading job {claim.job_id}", log,
                           lambda: lease.lost)
    except Exception as err:  # the grader failed: an error verdict, logged in full
        if grading.sandbox_failed(err):  # not the submission's doing: graded again while it has tries left
            lease.stopped.set()
            log(f"job {claim.job_id}: the sandbox failed under it: {type(err).__name__}: {err}")
            verdict = sandbox_failed(store, claim, err, mode, log, clock)
            if verdict is None:
                return 0
        else:
            log(f"job {claim.job_id}: the grader failed:\n{traceback.format_exc()}")
            verdict = grading.failure_verdict(claim, err, mode)
        aside_s = None
    finally:
        lease.stopped.set()
    if aside_s is not None and ran_to(verdict, aside_s):
        held = retrying(lambda: queue.set_aside(store, claim, clock), f"setting job {claim.job_id} aside", log)
        log(f"job {claim.job_id} (submission {claim.submission_id}, {claim.exercise_id}): past its set-aside time "
            f"({aside_s:.1f} s, from its reference's run): set aside, to run "
            "with the whole time limit after the other submissions"
            if held else f"job {claim.job_id}: lease lost while grading (another worker took it over)")
        return 0
    # The fencing token makes a retried finish safe: it stores nothing once another worker took the job.
    try:
        stored = retrying(lambda: queue.finish(store, claim, verdict, clock),
                          f"storing the verdict of job {claim.job_id}", log)
    except Exception as err:  # not an outage (retrying waits those out): the same verdict would be refused again
        log(f"job {claim.job_id}: the database refused its verdict ({db_error_text(err)}); storing an error verdict "
            f"instead:\n{traceback.format_exc()}")
        verdict = grading.refused_verdict(claim, mode)
        stored = retrying(lambda: queue.finish(store, claim, verdict, clock),
                          f"storing the error verdict of job {claim.job_id}", log)
    took = time.monotonic() - started
    if stored:
        log(f"job {claim.job_id} (submission {claim.submission_id}, {claim.exercise_id}): "
            f"{verdict['status']} {verdict['score']:.2f} in {took:.1f} s")
    else:
        log(f"job {claim.job_id}: lease lost while grading (another worker took it over); verdict dropped")
    return int(stored)


def sandbox_failed(store, claim, err, mode, log, clock=utcnow):
    """A job whose sandbox failed under it (grading.sandbox_failed(err)): queued again while it has runs left
    (queue.sandbox_failed) -> None, or at its last run the error verdict to store, saying the grading sandbox failed
    (the learner's code was not at fault)."""
    outcome = retrying(lambda: queue.sandbox_failed(store, claim, f"{type(err).__name__}: {err}", clock=clock),
                       f"queueing job {claim.job_id} again", log)
    if outcome == "queued":
        log(f"job {claim.job_id} (submission {claim.submission_id}, {claim.exercise_id}): queued again, to be graded "
            "again")
        return None
    if outcome is None:
        log(f"job {claim.job_id}: lease lost while grading (another worker took it over)")
        return None
    log(f"job {claim.job_id}: the sandbox failed under it {queue.SANDBOX_TRIES} times: an error verdict")
    return grading.failure_verdict(claim, err, mode, tries=queue.SANDBOX_TRIES)


def check_version(url, log=log_line, grader_version=None):
    """Raise queue.VersionMismatch when the class expects another grader version than this process's (or
    grader_version), as a claim would."""
    store = retrying(lambda: Store(url), "connecting", log)
    try:
        with store.session() as session:
            refused = queue.version_refusal(session, grader_version or verdicts.grader_version())
    finally:
        store.close()
    if refused is not None:
        raise refused


def child_command(sandbox, once, require_strict, lease_s, job_timeout_s=None):
    """The command line of one pool worker: no database URL (it travels in the environment)."""
    command = [sys.executable, "-m", "classroom", "worker", "--concurrency", "1", "--sandbox", sandbox,
               "--lease", str(lease_s)]
    timeout = ["--job-timeout", str(job_timeout_s)] if job_timeout_s is not None else []
    return command + ["--once"] * once + ["--require-strict"] * require_strict + timeout


def run_pool(url, concurrency, sandbox, once, require_strict, lease_s, log=log_line,
             max_backoff_s=MAX_BACKOFF_S, steady_s=60.0, job_timeout_s=None):
    """Run `concurrency` worker processes, restarting any that dies (backoff 1, 2, 4 ... s) -> exit code.

    A child that ran steady_s seconds before dying restarts after 1 s again. With once,
    a child that exits 0 found the queue empty and is not restarted. SIGTERM/SIGINT
    are passed on; the pool then waits for its children and restarts none.
    """
    retrying(lambda: Store(url).close(), "checking the database", log)  # a wrong URL or schema: say so once
    if require_strict:  # refuse once here, instead of restarting children that refuse
        grading.choose_sandbox(sandbox, True, log)
    if once:  # likewise a grader version the class does not expect: the children would stop (without once, wait)
        check_version(url, log)
    command = child_command(sandbox, once, require_strict, lease_s, job_timeout_s)
    env = dict(os.environ, **{ENV_VAR: url})
    slots = [{"child": subprocess.Popen(command, env=env), "started": time.monotonic(), "failures": 0,
              "restart_at": None, "code": None} for _ in range(concurrency)]
    stopping = threading.Event()

    def forward(signum, _frame):
        stopping.set()
        for slot in slots:
            if slot["child"] is not None and slot["child"].poll() is None:
                slot["child"].send_signal(signum)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, forward)
    while True:
        now = time.monotonic()
        for slot in slots:
            child = slot["child"]
            if child is None:
                if not stopping.is_set() and now >= slot["restart_at"]:
                    slot["child"], slot["started"] = subprocess.Popen(command, env=env), now
                    log(f"worker process {slot['child'].pid} started")
                continue
            code = child.poll()
            if code is None or slot["code"] is not None:
                continue
            if stopping.is_set() or (once and code == 0):
                slot["code"] = code
                continue
            slot["failures"] = 0 if now - slot["started"] >= steady_s else slot["failures"] + 1
            delay = min(2.0 ** (slot["failures"] - 1) if slot["failures"] else 1.0, max_backoff_s)
            log(f"worker process {child.pid} ended (exit code {code}); restarting it in {delay:g} s")
            slot["child"], slot["restart_at"] = None, now + delay
        if all(slot["code"] is not None or (slot["child"] is None and stopping.is_set()) for slot in slots):
            break
        stopping.wait(0.2)
    codes = [slot["code"] or 0 for slot in slots]
    return max(codes, key=abs)
