"""Prometheus metrics of a class (`python -m classroom metrics`): read from the class database at each scrape.

`ClassCollector` is a prometheus_client Collector: every scrape runs a few aggregate reads (one transaction) and
keeps nothing between scrapes, so each number is what the database held at that scrape, whichever process or
machine wrote it, and an exporter restarted (or two of them) shows the same numbers. Counts of things that only
grow (jobs finished, runs set aside) are counters; the rest are gauges. The waiting and grading times are gauge
histograms over the jobs finished in the last WINDOW_S seconds, not since the class began: a query over every job
ever graded would grow with the class, and a window says how the queue does now.

The reads stay cheap with a 20,000-job regrade queued: the unfinished jobs counted by claim batch
(queue.claim_order), the finished ones by (reason, state) (the ix_jobs_reason_state_created index), the oldest
queued job of each reason (one row of that index each), the window's times and verdicts summed in SQL (one pass
over the jobs table's narrow rows, the verdicts joined by their unique job id), the runs set aside through
ix_jobs_set_aside_at, the LMS outbox's due rows through ix_lti_scores_due_next_try, and the workers seen lately
(a handful). No label holds anything a learner wrote: a verdict's status is one of the grader's statuses
(exercise_index.GRADER_STATUSES; anything else is counted as "other"), a worker is named by its id (host:pid).

Served by prometheus_client's HTTP server (`serve`), on loopback unless told otherwise: the numbers are the
class's operations, for the instructor's monitoring, not for the learners.
"""

import signal
import sys
import threading
from datetime import timedelta

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeHistogramMetricFamily, GaugeMetricFamily
from sqlalchemy import case, extract, func, select
from sqlalchemy.exc import DBAPIError

from course.common.exercise_index import GRADER_STATUSES

from . import grading_times, queue
from ..data.models import JOB_STATES, REGRADE, SET_ASIDE, SUBMIT, Job, LtiScore, Result, utcnow

PREFIX = "attention_lab"
DEFAULT_PORT = 9464
WINDOW_S = 3600.0  # the histograms and verdicts cover the jobs finished this long before the scrape
BATCHES = {SUBMIT: "submit", SET_ASIDE: "set_aside", REGRADE: "regrade"}  # queue.claim_order's batches, by name
REASONS = ("submit", "regrade")  # Job.reason
UNFINISHED, FINISHED = JOB_STATES[:2], JOB_STATES[2:]  # (queued, running), (done, error)
# waiting (queued to claimed) and grading (claimed to verdict) seconds; the grading buckets hold the sandbox's
# time limit (grading_times.LIMIT_S: a job at it ran to the limit, an endless loop's regrade or a run set aside)
WAIT_BUCKETS = (1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)
GRADING_BUCKETS = tuple(sorted({0.25, 0.5, 1.0, 2.0, 5.0, 10.0, grading_times.LIMIT_S, 30.0, 60.0, 120.0}))


def seconds_between(dialect, later, earlier):
    """A SQL expression for the seconds from `earlier` to `later` (two naive UTC DateTime columns) on this dialect
    (SQLite stores them as text: julianday's difference in days; Postgres subtracts timestamps)."""
    if dialect == "postgresql":
        return extract("epoch", later - earlier)
    return (func.julianday(later) - func.julianday(earlier)) * 86400.0


def _histogram_columns(seconds, buckets, name):
    """Columns summing a window's `seconds` column: the jobs at or under each bucket, then their count and total."""
    return ([func.sum(case((seconds <= bound, 1), else_=0)).label(f"{name}_le_{i}") for i, bound in enumerate(buckets)]
            + [func.count().label(f"{name}_count"), func.coalesce(func.sum(seconds), 0).label(f"{name}_sum")])


def read(session, now, window_s=WINDOW_S):
    """What the metrics show, read in one transaction at `now` (naive UTC) -> dict (see ClassCollector)."""
    order = queue.claim_order()
    unfinished = {(state, batch): count for state, batch, count in session.execute(
        select(order.c.state, order.c.batch, func.count()).group_by(order.c.state, order.c.batch))}
    finished = {(reason, state): count for reason, state, count in session.execute(
        select(Job.reason, Job.state, func.count(Job.id)).where(Job.state.in_(FINISHED))
        .group_by(Job.reason, Job.state))}
    oldest = {reason: session.scalar(select(Job.created_at).where(Job.reason == reason, Job.state == "queued")
                                     .order_by(Job.created_at).limit(1)) for reason in REASONS}
    expired = session.scalar(select(func.count(Job.id)).where(Job.state == "running", Job.lease_until < now))
    since = now - timedelta(seconds=window_s)
    dialect = session.get_bind().dialect.name
    # each job's two times computed once, then summed by bucket: the CTE is materialized, as inlined SQLite would
    # compute them again in every bucket's sum (four times the CPU on 20,000 jobs)
    timed = (select(Job.reason, seconds_between(dialect, Job.started_at, Job.created_at).label("wait"),
                    seconds_between(dialect, Job.finished_at, Job.started_at).label("grading"))
             .where(Job.finished_at >= since, Job.started_at.is_not(None)).cte("timed").prefix_with("MATERIALIZED"))
    times = {row.reason: row for row in session.execute(
        select(timed.c.reason, *_histogram_columns(timed.c.wait, WAIT_BUCKETS, "wait"),
               *_histogram_columns(timed.c.grading, GRADING_BUCKETS, "grading")).group_by(timed.c.reason))}
    verdicts = dict(session.execute(select(Result.status, func.count(Result.id)).join(Job, Job.id == Result.job_id)
                                    .where(Job.finished_at >= since).group_by(Result.status)).all())
    due, failing, failed_pushes = session.execute(
        select(func.count(LtiScore.id), func.coalesce(func.sum(case((LtiScore.tries > 0, 1), else_=0)), 0),
               func.coalesce(func.sum(LtiScore.tries), 0)).where(LtiScore.due.is_(True))).one()
    return {"unfinished": unfinished, "finished": finished, "expired": expired,
            "oldest_s": {reason: None if at is None else max((now - at).total_seconds(), 0.0)
                         for reason, at in oldest.items()},
            "times": times, "verdicts": verdicts, "set_aside": grading_times.set_aside_counts(session),
            "outbox": {"due": due, "failing": failing, "failed_pushes": failed_pushes}}


def _histogram(name, documentation, rows, prefix, buckets):
    """A gauge histogram by reason from the window's summed rows (_histogram_columns)."""
    family = GaugeHistogramMetricFamily(name, documentation, labels=["reason"])
    for reason in REASONS:
        row = rows.get(reason)
        count = row._mapping[f"{prefix}_count"] if row is not None else 0
        bounds = [(f"{bound:g}", row._mapping[f"{prefix}_le_{i}"] if row is not None else 0)
                  for i, bound in enumerate(buckets)]
        family.add_metric([reason], bounds + [("+Inf", count)],
                          float(row._mapping[f"{prefix}_sum"]) if row is not None else 0.0)
    return family


class ClassCollector:
    """The class's metrics, read from its store at each scrape (one scrape at a time: each takes a transaction,
    on SQLite the database's write lock for its few reads)."""

    def __init__(self, store, window_s=WINDOW_S, clock=utcnow, log=None):
        self.store, self.window_s, self.clock = store, window_s, clock
        self.log = log or (lambda line: print(line, file=sys.stderr, flush=True))
        self._lock = threading.Lock()

    def collect(self):
        """The metric families of one scrape; `attention_lab_database_up` 0 alone when the database cannot be
        read (the scrape still answers, so an alert can tell a database down from an exporter down)."""
        with self._lock:
            try:
                now = self.clock()
                with self.store.session() as session:
                    found = read(session, now, self.window_s)
                status = queue.queue_status(self.store, self.clock)
            except DBAPIError as err:
                self.log(f"metrics: the class database cannot be read: {str(err.orig).strip()[:300]}")
                yield GaugeMetricFamily(f"{PREFIX}_database_up", "1 when the class database was read at this scrape",
                                        value=0)
                return
        yield GaugeMetricFamily(f"{PREFIX}_database_up", "1 when the class database was read at this scrape", value=1)
        yield from self._families(found, status)

    def _families(self, found, status):
        window = f"jobs finished in the last {self.window_s:g} s before the scrape (a window, not since the start)"
        jobs = GaugeMetricFamily(f"{PREFIX}_jobs", "Unfinished grading jobs by state (queued, running) and claim "
                                 "batch (submit: new submissions; set_aside: submissions whose first run passed "
                                 "their exercise's set-aside time, run again after the others; regrade)",
                                 labels=["state", "batch"])
        for state in UNFINISHED:
            for batch, name in BATCHES.items():
                jobs.add_metric([state, name], found["unfinished"].get((state, batch), 0))
        yield jobs
        done = CounterMetricFamily(f"{PREFIX}_jobs_finished", "Grading jobs finished since the class began, by "
                                   "state (done: a verdict; error: given up) and reason (submit, regrade)",
                                   labels=["state", "reason"])
        for state in FINISHED:
            for reason in REASONS:
                done.add_metric([state, reason], found["finished"].get((reason, state), 0))
        yield done
        oldest = GaugeMetricFamily(f"{PREFIX}_oldest_queued_seconds", "Seconds the oldest queued job of each "
                                   "reason has waited since it was queued (0 when none is queued)", labels=["reason"])
        for reason in REASONS:
            oldest.add_metric([reason], found["oldest_s"][reason] or 0.0)
        yield oldest
        yield GaugeMetricFamily(f"{PREFIX}_jobs_lease_expired", "Running jobs whose worker's lease ran out (the "
                                "worker probably died; the job is claimed again)", value=found["expired"])
        yield _histogram(f"{PREFIX}_job_wait_seconds", f"Seconds from queued to the last claim, of the {window}",
                         found["times"], "wait", WAIT_BUCKETS)
        yield _histogram(f"{PREFIX}_job_grading_seconds", f"Seconds from the last claim to the verdict, of the "
                         f"{window}", found["times"], "grading", GRADING_BUCKETS)
        verdicts = GaugeMetricFamily(f"{PREFIX}_verdicts", f"Verdicts of the {window}, by the grader's status",
                                     labels=["status"])
        for status_name in GRADER_STATUSES:
            verdicts.add_metric([status_name], found["verdicts"].get(status_name, 0))
        verdicts.add_metric(["other"], sum(count for name, count in found["verdicts"].items()
                                           if name not in GRADER_STATUSES))
        yield verdicts
        aside = found["set_aside"]
        yield CounterMetricFamily(f"{PREFIX}_runs_set_aside", "Submissions' first runs set aside so far (past "
                                  "their exercise's set-aside time; each runs again with the whole time limit)",
                                  value=aside["runs"])
        yield CounterMetricFamily(f"{PREFIX}_runs_set_aside_graded", "Of the runs set aside, those graded since "
                                  "with the whole time limit", value=aside["graded"])
        yield CounterMetricFamily(f"{PREFIX}_runs_set_aside_not_endless", "Of those graded, the runs that ended "
                                  f"before the {grading_times.LIMIT_S:g} s limit (slow code, not an endless loop: "
                                  "the set-aside time may be too short)", value=aside["not_endless"])
        outbox = found["outbox"]
        yield GaugeMetricFamily(f"{PREFIX}_lms_outbox_due", "LMS passback rows (learner x exercise x course) "
                                "waiting to be pushed", value=outbox["due"])
        yield GaugeMetricFamily(f"{PREFIX}_lms_outbox_failing", "Of those, the rows whose last push failed "
                                "(retried with a backoff)", value=outbox["failing"])
        yield GaugeMetricFamily(f"{PREFIX}_lms_outbox_failed_pushes", "Failed pushes of the due rows since each "
                                "one's last success", value=outbox["failed_pushes"])
        workers = status["workers"]
        yield GaugeMetricFamily(f"{PREFIX}_workers_alive", "Workers heard from within their lease",
                                value=sum(w["alive"] for w in workers))
        seen = GaugeMetricFamily(f"{PREFIX}_worker_heartbeat_age_seconds", "Seconds since each worker's last "
                                 f"heartbeat (workers seen in the last {queue.FORGET_S:g} s; dead past its lease)",
                                 labels=["worker", "sandbox"])
        lease = GaugeMetricFamily(f"{PREFIX}_worker_lease_seconds", "Each worker's lease: it counts as dead when "
                                  "its heartbeat is older", labels=["worker", "sandbox"])
        for w in workers:
            seen.add_metric([w["id"], w["sandbox"]], w["seen_s_ago"])
            lease.add_metric([w["id"], w["sandbox"]], w["lease_s"])
        yield seen
        yield lease


def serve(store, port=DEFAULT_PORT, host="127.0.0.1", log=None):
    """Serve the class's metrics at http://host:port/metrics until SIGTERM or SIGINT -> 0.
    OSError when the address cannot be bound (the port in use, a host not of this machine)."""
    log = log or (lambda line: print(line, file=sys.stderr, flush=True))
    registry = CollectorRegistry(auto_describe=False)
    registry.register(ClassCollector(store, log=log))
    server, thread = start_http_server(port, addr=host, registry=registry)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    shown = f"[{host}]" if ":" in host else host
    log(f"metrics of {store.engine.url.render_as_string(hide_password=True)} at http://{shown}:{port}/metrics "
        "(Ctrl-C to stop)")
    while not stop.wait(1.0):
        pass
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)
    return 0
