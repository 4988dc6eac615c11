"""The grading worker: claim a job, grade it (renewing the lease), store the verdict, repeat.

`python -m classroom worker --db URL [--concurrency N] [--once]`: N worker
processes (each grades one job at a time); `--once` exits when every job is
finished (it waits for running jobs: they return to the queue if their worker dies). Any number of workers on any number of machines may share a
Postgres database. SIGTERM/SIGINT: finish the current job, then exit.
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

from . import grading, queue
from .db import Store
from .models import Job


def log_line(text):
    """A timestamped log line on stderr."""
    print(f"{datetime.now():%H:%M:%S} worker {os.getpid()}: {text}", file=sys.stderr, flush=True)


class _Lease(threading.Thread):
    """Renews a claim's lease every lease_s / 4 until stopped."""

    def __init__(self, store, claim, lease_s):
        super().__init__(daemon=True)
        self.store, self.claim, self.lease_s = store, claim, lease_s
        self.stopped = threading.Event()
        self.lost = False

    def run(self):
        while not self.stopped.wait(self.lease_s / 4):
            try:
                if not queue.renew(self.store, self.claim, self.lease_s):
                    self.lost = True
                    return
            except Exception as err:  # noqa: BLE001 - a database hiccup: try again next time
                log_line(f"could not renew the lease of job {self.claim.job_id}: {err}")


def _unfinished(store):
    """Jobs queued or running (a running job comes back if its worker dies)."""
    with store.session() as session:
        return session.scalar(select(func.count(Job.id)).where(Job.state.in_(("queued", "running"))))


def run_worker(url, sandbox="strict", once=False, require_strict=False, lease_s=queue.LEASE_S,
               poll_s=1.0, worker_id=None, log=log_line, handle_signals=False):
    """Grade jobs until stopped (or, with once, until none is left) -> number of jobs graded.

    handle_signals (the command line): SIGTERM/SIGINT finish the current job, then stop.
    """
    store = Store(url)
    mode = grading.choose_sandbox(sandbox, require_strict, log)
    worker_id = worker_id or f"{socket.gethostname()}:{os.getpid()}"
    queue.register_worker(store, worker_id, socket.gethostname(), os.getpid(), mode)
    stop = threading.Event()
    if handle_signals:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
    graded = 0
    log(f"{worker_id} ready ({'until the queue is empty' if once else 'Ctrl-C to stop'})")
    while not stop.is_set():
        claim = queue.claim(store, worker_id, lease_s)
        if claim is None:
            if once and _unfinished(store) == 0:
                break
            stop.wait(poll_s)
            continue
        graded += grade_job(store, claim, mode, lease_s, log)
    store.close()
    log(f"{worker_id} stopped after {graded} job(s)")
    return graded


def grade_job(store, claim, mode, lease_s, log):
    """Grade one claimed job and store its verdict -> 1 if stored, 0 if the claim was lost."""
    lease = _Lease(store, claim, lease_s)
    lease.start()
    started = time.monotonic()
    try:
        verdict = grading.grade_claim(store, claim, mode)
    except Exception as err:  # noqa: BLE001 - the grader failed: an error verdict, logged in full
        log(f"job {claim.job_id}: the grader failed:\n{traceback.format_exc()}")
        verdict = grading.error_verdict(f"grading failed ({type(err).__name__}: {err}); submit again, "
                                        "or tell your instructor if it keeps happening", mode)
    finally:
        lease.stopped.set()
    stored = queue.finish(store, claim, verdict)
    took = time.monotonic() - started
    if stored:
        log(f"job {claim.job_id} (submission {claim.submission_id}, {claim.exercise_id}): "
            f"{verdict['status']} {verdict['score']:.2f} in {took:.1f} s")
    else:
        log(f"job {claim.job_id}: lease lost while grading (another worker took it over); verdict dropped")
    return int(stored)


def run_pool(url, concurrency, sandbox, once, require_strict, lease_s):
    """Start `concurrency` worker processes and wait for them -> exit code."""
    command = [sys.executable, "-m", "classroom", "worker", "--db", url, "--concurrency", "1",
               "--sandbox", sandbox, "--lease", str(lease_s)]
    command += ["--once"] * once + ["--require-strict"] * require_strict
    children = [subprocess.Popen(command) for _ in range(concurrency)]

    def forward(signum, _frame):
        for child in children:
            if child.poll() is None:
                child.send_signal(signum)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, forward)
    codes = [child.wait() for child in children]
    return max(codes, key=abs)
