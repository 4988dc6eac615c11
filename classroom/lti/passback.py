"""Scores to the LMS (AGS): drain the outbox, one line item per exercise and course, retried when it fails.

A line item is found by its resourceId (the exercise id) before one is made,
and its URL is kept, so re-syncs never add a second one. A score is posted
only when the LMS does not already hold it, with a timestamp later than the
last one sent for that learner and exercise (AGS keeps the newest), so a
re-sync posts nothing and a retried post replaces rather than adds. When the
LMS cannot be reached or answers with an error, the rows stay due and are
retried after a backoff; nothing is lost, since the row is only marked done
after the LMS accepted the score.
"""

from concurrent.futures import ThreadPoolExecutor
import os
import time
from dataclasses import dataclass, field
from datetime import timedelta
from urllib.parse import urlsplit

import requests
from pylti1p3.assignments_grades import AssignmentsGradesService
from pylti1p3.exception import LtiException
from pylti1p3.grade import Grade
from pylti1p3.lineitem import LineItem
from pylti1p3.service_connector import ServiceConnector
from sqlalchemy import delete, select

from ..data.models import LtiContext, LtiLineItem, LtiMember, LtiPlatform, utcnow
from . import config, outbox

AGS_SCOPES = ("https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
              "https://purl.imsglobal.org/spec/lti-ags/scope/score")
TIMEOUT_S = 15.0  # an LMS request that takes longer counts as failed (and is retried)
POSTS_AT_ONCE = 16  # scores in flight to one LMS at a time (AGS has no batch post)
CHUNK = 200  # scores recorded per commit


@dataclass
class PushReport:
    pushed: int = 0  # scores the LMS accepted
    unchanged: int = 0  # due rows whose score the LMS already held (nothing sent)
    failed: int = 0  # rows left due, retried later
    errors: list = field(default_factory=list)  # one message per course that failed


class Http(requests.Session):
    """A requests session whose calls time out (pylti1p3 sets none) and that reads the environment (proxies, CA
    bundle) once per host instead of on every call, and never reads ~/.netrc (the LMS's token is the only auth)."""

    def __init__(self):
        super().__init__()
        self.trust_env = False
        self.verify = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE") or True
        self._proxies = {}

    def request(self, method, url, *args, **kwargs):
        kwargs.setdefault("timeout", TIMEOUT_S)
        host = urlsplit(url)[:2]
        if host not in self._proxies:
            self._proxies[host] = requests.utils.get_environ_proxies(url)
        kwargs.setdefault("proxies", self._proxies[host])
        return super().request(method, url, *args, **kwargs)


def ags_service(platform, context, key, http=None):
    """pylti1p3's AGS client of one course, with its access token fetched."""
    connector = ServiceConnector(config.registration(platform, key), requests_session=http or Http())
    scopes = [scope for scope in AGS_SCOPES if scope in (context.ags_scopes or AGS_SCOPES)]
    connector.get_access_token(scopes)  # once, before the posts run at once (pylti1p3 keeps it)
    return AssignmentsGradesService(connector, {"scope": scopes, "lineitems": context.lineitems_url})


SERVICE_REUSE_S = 300.0  # a course's AGS client (its token and connections) serves passes this long
SERVICES = "lti_services"  # this module's entry in Store.kept: {(platform, course, tool key): (monotonic, client)}


def kept_service(store, platform, context, key):
    """The course's AGS client kept with the store: one token and one connection pool for SERVICE_REUSE_S of
    passes (a refused token drops it: forget_service)."""
    entry = store.kept(SERVICES)
    name = (platform.id, context.id, key.kid)
    with entry.lock:
        entry.value = entry.value or {}
        made_at, service = entry.value.get(name, (None, None))
        if made_at is None or time.monotonic() - made_at > SERVICE_REUSE_S:
            service = ags_service(platform, context, key)
            entry.value[name] = (time.monotonic(), service)
        return service


def forget_service(store, platform, context, key):
    """Fetch a fresh token for this course next time (the LMS refused the kept one, or it is down)."""
    entry = store.kept(SERVICES)
    with entry.lock:
        (entry.value or {}).pop((platform.id, context.id, key.kid), None)


def post_pool(store):
    """The store's thread pool for score posts (POSTS_AT_ONCE threads, started once)."""
    entry = store.kept(POOL)
    with entry.lock:
        if entry.value is None:
            entry.value = ThreadPoolExecutor(POSTS_AT_ONCE, thread_name_prefix="lti-post")
        return entry.value


POOL = "lti_post_pool"  # this module's entry in Store.kept


def line_item_url(store, ags, context_pk, exercise_id):
    """The URL of the exercise's line item in this course: stored, or found by resourceId, or made once."""
    with store.session() as session:
        url = session.scalar(select(LtiLineItem.url).where(LtiLineItem.context_pk == context_pk,
                                                           LtiLineItem.exercise_id == exercise_id))
    if url:
        return url
    wanted = (LineItem().set_label(f"Attention Lab {exercise_id}").set_score_maximum(1)
              .set_resource_id(exercise_id).set_tag("attention-lab"))
    url = ags.find_or_create_lineitem(wanted, find_by="resource_id").get_id()
    with store.session() as session:
        session.add(LtiLineItem(context_pk=context_pk, exercise_id=exercise_id, url=url))
    return url


def score_timestamp(previous, now):
    """An ISO 8601 timestamp (ms, UTC) after `previous`: the LMS ignores a score older than the one it holds."""
    when = now if previous is None or now > previous else previous + timedelta(milliseconds=1)
    return when.replace(microsecond=when.microsecond // 1000 * 1000), when.isoformat(timespec="milliseconds") + "Z"


def _grade(score, sub, stamp):
    """The AGS score of a learner: `score` (0..1), or None: none counts any more (an override cleared where nothing
    was graded), sent with no scoreGiven, which AGS reads as clearing the score the LMS holds."""
    if score is None:
        return (Grade().set_user_id(sub).set_timestamp(stamp).set_activity_progress("Initialized")
                .set_grading_progress("NotReady"))
    return (Grade().set_score_given(score).set_score_maximum(1.0).set_user_id(sub).set_timestamp(stamp)
            .set_activity_progress("Completed").set_grading_progress("FullyGraded"))


def push_course(store, platform, context, rows, subs, best, key, report, http=None):
    """Push one course's due rows; a failure leaves that row (and, when the LMS is unreachable, the rest) due."""
    todo, held = [], []
    for row in rows:
        score = best.get((row.user_id, row.exercise_id))
        # the LMS holds it already (nothing graded, nothing ever sent), or the learner has no account in this
        # course any more: done without a request; a score it holds that no longer counts is cleared (_grade)
        unsendable = score == row.pushed_score or row.user_id not in subs
        (held if unsendable else todo).append((row, score))
    with store.session() as session:
        outbox.record_pushed(session, [(row.id, row.version, row.pushed_score, row.pushed_at) for row, _ in held])
    report.unchanged += len(held)
    if not todo:
        return
    try:
        ags = ags_service(platform, context, key, http) if http else kept_service(store, platform, context, key)
        urls = {ex_id: line_item_url(store, ags, context.id, ex_id) for ex_id in sorted({r.exercise_id for r, _ in todo})}
    except (LtiException, requests.RequestException) as err:
        forget_service(store, platform, context, key)
        _fail(store, [row for row, _ in todo], err, context, report)
        return
    pool = post_pool(store)
    for start in range(0, len(todo), CHUNK):
        chunk = todo[start:start + CHUNK]
        outcomes = list(pool.map(lambda item: _post(ags, urls, subs, *item), chunk))
        done = [(row.id, row.version, score, when)
                for (row, score), (when, err) in zip(chunk, outcomes) if err is None]
        with store.session() as session:  # one commit per chunk, each row only after the LMS took it
            outbox.record_pushed(session, done)
        report.pushed += len(done)
        failed = [(row, err) for (row, _score), (_when, err) in zip(chunk, outcomes) if err is not None]
        for row, err in failed:
            _fail(store, [row], err, context, report)
        _forget_missing_line_items(store, context.id, failed)
        if any(_unreachable(err) for _row, err in failed):
            forget_service(store, platform, context, key)  # a refused token or an outage: a fresh one next time
            _fail(store, [row for row, _ in todo[start + CHUNK:]], failed[0][1], context, report)
            return


def _forget_missing_line_items(store, context_pk, failed):
    """A line item the LMS no longer has (404: deleted in the LMS) is found or made again at the retry."""
    gone = {row.exercise_id for row, err in failed if getattr(getattr(err, "response", None), "status_code", 0) == 404}
    if gone:
        with store.session() as session:
            session.execute(delete(LtiLineItem).where(LtiLineItem.context_pk == context_pk,
                                                      LtiLineItem.exercise_id.in_(gone)))


def _post(ags, urls, subs, row, score):
    """POST one score -> (its timestamp, None) or (None, the error)."""
    when, stamp = score_timestamp(row.pushed_at, utcnow())
    try:
        ags.put_grade(_grade(score, subs[row.user_id], stamp), LineItem({"id": urls[row.exercise_id]}))
    except (LtiException, requests.RequestException) as err:
        return None, err
    return when, None


def _fail(store, rows, err, context, report):
    """Keep rows due with a backoff, and say why once."""
    if not rows:
        return
    now, message = utcnow(), _describe(err, context)
    with store.session() as session:
        for row in rows:
            outbox.record_failed(session, row.id, message, now, row.tries)
    report.failed += len(rows)
    if message not in report.errors:
        report.errors.append(message)


def _unreachable(err):
    """Is the LMS down (no connection, a timeout, a 5xx, a refused token) rather than refusing this one score?"""
    response = getattr(err, "response", None)
    return response is None or response.status_code >= 500 or response.status_code in (401, 403, 429)


def _describe(err, context):
    response = getattr(err, "response", None)
    what = f"HTTP {response.status_code}" if response is not None else type(err).__name__
    return f"course {context.context_id} ({context.title or 'untitled'}): {what}: {str(err)[:300]}"


def push_due(store, limit=1000, http=None):
    """One pass over the due outbox rows (up to `limit`) -> PushReport."""
    report, key = PushReport(), config.tool_key(store)
    with store.session() as session:
        rows = outbox.due_rows(session, utcnow(), limit)
        if not rows:
            return report
        user_ids = {row.user_id for row in rows}
        best = outbox.best_scores(session, user_ids)
        courses = {c.id: c for c in session.scalars(select(LtiContext).where(
            LtiContext.id.in_({row.context_pk for row in rows})))}
        platforms = {p.id: p for p in session.scalars(select(LtiPlatform))}
        subs = {(m.context_pk, m.user_id): m.sub for m in session.scalars(
            select(LtiMember).where(LtiMember.user_id.in_(user_ids)))}
    for context_pk, context in courses.items():
        mine = [row for row in rows if row.context_pk == context_pk]
        course_subs = {user_id: sub for (pk, user_id), sub in subs.items() if pk == context_pk}
        push_course(store, platforms[context.platform_id], context, mine, course_subs, best, key, report, http)
    return report
