"""Per-learner adjustments staff grant for one exercise: a later deadline (an extension) and a score set by hand
(an override), each with its reason, who granted it and when, and an audit log of every grant, change and clear.

An extension moves that learner's deadline of that exercise (settings.deadline_for, the one rule of lateness), so
their submissions up to it count as on time: granting or clearing one decides the lateness of their submissions
of the exercise again at once, as a regrade would, and re-applies the late penalty to the scores already stored
(verdicts.penalised of each verdict's raw score; the grader does not run again). An override replaces the
computed best score wherever a score counts (which_counts.score_that_counts): the gradebook, its export, the
learner's records and the LMS; regrades leave it, and clearing it brings the computed score back.

Every function is one transaction, which also bumps the LMS outbox (classroom/data/lms_outbox.py) of that learner and
exercise when the score that counts changed. The command line (`python -m classroom extend` / `override`) is
their caller; reasons are for staff: the learner's page shows their deadline and overridden score, not why.
"""

import getpass
import math
import socket
from dataclasses import dataclass
from datetime import UTC, datetime

import pandas as pd
from sqlalchemy import select

from . import exercise_table, lms_outbox, text_rules, verdicts
from .models import AdjustmentLog, ExerciseRule, Extension, Result, ScoreOverride, Submission, User, utcnow
from .settings import deadline_for, extended_until, late_penalty
from .text_rules import clean_email
from .which_counts import counted_scores

MAX_REASON_CHARS = 500
STAFF = ("ta", "instructor")


@dataclass
class Outcome:
    """What a grant, change or clear did: the action logged (None: nothing changed), the score that counts before
    and after (None: none), the submissions whose lateness changed, the exercise's own deadline."""

    action: str | None
    before: float | None
    after: float | None
    relabelled: int = 0
    class_deadline: datetime | None = None


def _exercise(ex_id):
    ex_id = (ex_id or "").strip()
    if ex_id not in exercise_table.EXERCISE_IDS:
        raise ValueError(f"unknown exercise {ex_id!r}: use one of {', '.join(exercise_table.EXERCISE_IDS)}")
    return ex_id


def _learner(session, email, granting):
    """The roster member an adjustment is for; granting one needs a current learner, clearing only the person."""
    user = session.scalar(select(User).where(User.email == clean_email(email)))
    if user is None:
        raise LookupError(f"{email} is not on this class's roster: check the email (`python -m classroom links` "
                          "lists the roster's)")
    if granting and user.removed_at is not None:
        raise ValueError(f"{user.email} was taken off the roster: readmit them first (`roster import FILE "
                         "--readmit`)")
    if granting and user.role != "learner":
        raise ValueError(f"{user.email} is a {user.role}, not a learner: extensions and overrides are for learners")
    return user


def reason_text(reason, required=True):
    """A reason as stored: one line, spaces collapsed; ValueError when required and empty, too long or holding a
    control character."""
    bad = text_rules.name_problem((reason or "").replace("\t", " ").replace("\n", " ").replace("\r", " "))
    if bad:
        raise ValueError(f"--reason holds the control character {bad}, which is not text: delete it")
    text = " ".join((reason or "").split())
    if required and not text:
        raise ValueError("--reason is empty: say why (it is kept in the audit log and shown to staff, e.g. "
                         "--reason \"medical note, 3 days\")")
    if len(text) > MAX_REASON_CHARS:
        raise ValueError(f"--reason is {len(text)} characters long: use at most {MAX_REASON_CHARS}")
    return text


def actor_name(store, by=None):
    """Who grants: `by`, a TA or instructor on the roster, or else the command line's user@host."""
    if not by:
        return f"command line ({getpass.getuser()}@{socket.gethostname()})"[:320]
    with store.session() as session:
        user = session.scalar(select(User).where(User.email == clean_email(by)))
        if user is None or user.removed_at is not None or user.role not in STAFF:
            raise ValueError(f"--by {by}: name a TA or instructor on this class's roster (or leave --by out: the "
                             "log then names the command line's user)")
        return user.email


def parse_until(text):
    """An extended deadline from the command line: ISO 8601 with a time, 'YYYY-MM-DD HH:MM' read as UTC, or with
    an offset (+08:00) converted to UTC -> naive UTC datetime; ValueError saying the format otherwise."""
    text = (text or "").strip()
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        when = None
    if when is None or len(text) <= 10:  # a date alone would be its midnight: say the time
        raise ValueError(f"--until {text!r}: write a date and time, YYYY-MM-DD HH:MM (UTC) or with an offset such "
                         "as 2026-12-30T18:00+08:00")
    if when.tzinfo is not None:
        when = when.astimezone(UTC).replace(tzinfo=None)
    return when.replace(microsecond=0)


def parse_score(value):
    """A score from 0 to 1 (a fraction of the full score, like a verdict's); ValueError otherwise."""
    try:
        score = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"--score {value!r} is not a number: give a fraction from 0 to 1 (0.8 is 80%)") from None
    if not math.isfinite(score) or not 0.0 <= score <= 1.0:
        raise ValueError(f"--score {value}: give a fraction of the full score from 0 to 1 (0.8 is 80%)")
    return round(score, 4)


def _stamp(when):
    return f"{when:%Y-%m-%d %H:%M:%S}"


def _counted(session, user_id, ex_id):
    return counted_scores(session, [user_id]).get((user_id, ex_id))


def relabel(session, user_id, ex_id):
    """Decide the lateness of the learner's submissions of an exercise again under its deadline as it is now and
    their extension (settings.late_penalty), re-applying the penalty to every stored score of those whose lateness
    changed -> how many changed. Their rows are locked first: a worker storing a verdict of one meanwhile
    (queue.finish) reads the penalty after this transaction."""
    rule = session.get(ExerciseRule, ex_id)
    until = extended_until(session, user_id, ex_id)
    changed = 0
    for submission in session.scalars(select(Submission).where(
            Submission.user_id == user_id, Submission.exercise_id == ex_id).order_by(Submission.id)
            .with_for_update().execution_options(populate_existing=True)):
        late, penalty = late_penalty(rule, submission.created_at, until)
        if (bool(submission.late), submission.penalty) == (late, penalty):
            continue
        submission.late, submission.penalty = late, penalty
        for result in session.scalars(select(Result).where(Result.submission_id == submission.id)):
            result.score = verdicts.penalised(result.raw_score, penalty)
        changed += 1
    return changed


def _finish(session, user, ex_id, before, kind, action, old, new, reason, actor, now):
    """Log the action, bump the LMS outbox when the score that counts changed -> Outcome."""
    session.add(AdjustmentLog(at=now, actor=actor, user_id=user.id, exercise_id=ex_id, kind=kind, action=action,
                              before=old, after=new, reason=reason))
    session.flush()
    after = _counted(session, user.id, ex_id)
    if after != before:
        lms_outbox.mark_changed(session, user.id, ex_id, now)
    return Outcome(action, before, after)


def grant_extension(store, email, ex_id, until, reason, actor, now=None):
    """Give a learner a later deadline of one exercise (or change theirs) -> Outcome.

    `until` must be later than the exercise's deadline (an exercise without one has nothing to extend); it may be
    in the past: an extension granted afterwards excuses late work already submitted."""
    ex_id, reason, now = _exercise(ex_id), reason_text(reason), now or utcnow()
    with store.session() as session:
        user = _learner(session, email, granting=True)
        rule = session.get(ExerciseRule, ex_id)
        if deadline_for(rule) is None:
            raise ValueError(f"{ex_id} has no deadline, so there is nothing to extend: set one first (`python -m "
                             f"classroom deadline {ex_id} \"YYYY-MM-DD HH:MM\"`)")
        if until <= rule.deadline:
            raise ValueError(f"--until {_stamp(until)} UTC is not later than {ex_id}'s deadline, "
                             f"{_stamp(rule.deadline)} UTC: an extension gives a later deadline")
        before = _counted(session, user.id, ex_id)
        row = session.scalar(select(Extension).where(Extension.user_id == user.id, Extension.exercise_id == ex_id)
                             .with_for_update())
        if row is not None and (row.until, row.reason) == (until, reason):
            return Outcome(None, before, before, class_deadline=rule.deadline)
        old = _stamp(row.until) if row is not None else ""
        if row is None:
            session.add(Extension(user_id=user.id, exercise_id=ex_id, until=until, reason=reason, granted_by=actor,
                                  granted_at=now))
        else:
            row.until, row.reason, row.granted_by, row.granted_at = until, reason, actor, now
        session.flush()
        relabelled = relabel(session, user.id, ex_id)
        outcome = _finish(session, user, ex_id, before, "extension", "grant" if row is None else "change", old,
                          _stamp(until), reason, actor, now)
    outcome.relabelled, outcome.class_deadline = relabelled, rule.deadline
    return outcome


def clear_extension(store, email, ex_id, reason, actor, now=None):
    """Take a learner's extension of an exercise away: the exercise's deadline holds for them again -> Outcome."""
    ex_id, reason, now = _exercise(ex_id), reason_text(reason, required=False), now or utcnow()
    with store.session() as session:
        user = _learner(session, email, granting=False)
        row = session.scalar(select(Extension).where(Extension.user_id == user.id, Extension.exercise_id == ex_id)
                             .with_for_update())
        if row is None:
            raise LookupError(f"{user.email} has no extension of {ex_id}: nothing to clear")
        before = _counted(session, user.id, ex_id)
        old = _stamp(row.until)
        session.delete(row)
        session.flush()
        relabelled = relabel(session, user.id, ex_id)
        outcome = _finish(session, user, ex_id, before, "extension", "clear", old, "", reason, actor, now)
        rule = session.get(ExerciseRule, ex_id)
    outcome.relabelled, outcome.class_deadline = relabelled, rule.deadline if rule is not None else None
    return outcome


def set_override(store, email, ex_id, score, reason, actor, now=None):
    """Set the score that counts for a learner's exercise (or change it) -> Outcome; it holds until cleared,
    whatever later submissions and regrades score."""
    ex_id, score, reason, now = _exercise(ex_id), parse_score(score), reason_text(reason), now or utcnow()
    with store.session() as session:
        user = _learner(session, email, granting=True)
        before = _counted(session, user.id, ex_id)
        row = session.scalar(select(ScoreOverride).where(ScoreOverride.user_id == user.id,
                                                         ScoreOverride.exercise_id == ex_id).with_for_update())
        if row is not None and (row.score, row.reason) == (score, reason):
            return Outcome(None, before, before)
        old = f"{row.score:g}" if row is not None else ""
        if row is None:
            session.add(ScoreOverride(user_id=user.id, exercise_id=ex_id, score=score, reason=reason, set_by=actor,
                                      set_at=now))
        else:
            row.score, row.reason, row.set_by, row.set_at = score, reason, actor, now
        return _finish(session, user, ex_id, before, "override", "grant" if row is None else "change", old,
                       f"{score:g}", reason, actor, now)


def clear_override(store, email, ex_id, reason, actor, now=None):
    """Remove a learner's override of an exercise: the computed best score counts again -> Outcome."""
    ex_id, reason, now = _exercise(ex_id), reason_text(reason, required=False), now or utcnow()
    with store.session() as session:
        user = _learner(session, email, granting=False)
        row = session.scalar(select(ScoreOverride).where(ScoreOverride.user_id == user.id,
                                                         ScoreOverride.exercise_id == ex_id).with_for_update())
        if row is None:
            raise LookupError(f"{user.email} has no score override of {ex_id}: nothing to clear")
        before, old = _counted(session, user.id, ex_id), f"{row.score:g}"
        session.delete(row)
        session.flush()
        return _finish(session, user, ex_id, before, "override", "clear", old, "", reason, actor, now)


ADJUSTMENT_COLUMNS = ["email", "exercise_id", "extended_until", "extension_reason", "extension_by", "extension_at",
                      "override", "override_reason", "override_by", "override_at"]


def current(store, user_id=None):
    """The extensions and overrides in force, one row per learner x exercise having either (ADJUSTMENT_COLUMNS;
    blank where that learner has only the other), by email and exercise."""
    rows = {}
    with store.session() as session:
        extensions = select(User.email, Extension).join(User, User.id == Extension.user_id)
        scores = select(User.email, ScoreOverride).join(User, User.id == ScoreOverride.user_id)
        if user_id is not None:
            extensions = extensions.where(Extension.user_id == user_id)
            scores = scores.where(ScoreOverride.user_id == user_id)
        for email, row in session.execute(extensions):
            rows.setdefault((email, row.exercise_id), {}).update(
                extended_until=row.until, extension_reason=row.reason, extension_by=row.granted_by,
                extension_at=row.granted_at)
        for email, row in session.execute(scores):
            rows.setdefault((email, row.exercise_id), {}).update(
                override=row.score, override_reason=row.reason, override_by=row.set_by, override_at=row.set_at)
    frame = pd.DataFrame([{"email": email, "exercise_id": ex_id, **values}
                          for (email, ex_id), values in sorted(rows.items())], columns=ADJUSTMENT_COLUMNS)
    frame["override"] = frame["override"].astype(float)
    for column in ("extended_until", "extension_at", "override_at"):
        frame[column] = pd.to_datetime(frame[column])
    return frame


LOG_COLUMNS = ["at", "actor", "email", "exercise_id", "kind", "action", "before", "after", "reason"]


def audit_log(store, email=None, ex_id=None):
    """Every grant, change and clear, oldest first (LOG_COLUMNS), of one learner and/or exercise or all."""
    query = (select(AdjustmentLog.at, AdjustmentLog.actor, User.email, AdjustmentLog.exercise_id, AdjustmentLog.kind,
                    AdjustmentLog.action, AdjustmentLog.before, AdjustmentLog.after, AdjustmentLog.reason)
             .join(User, User.id == AdjustmentLog.user_id).order_by(AdjustmentLog.id))
    if email:
        query = query.where(User.email == clean_email(email))
    if ex_id:
        query = query.where(AdjustmentLog.exercise_id == _exercise(ex_id))
    with store.session() as session:
        return pd.DataFrame([tuple(row) for row in session.execute(query)], columns=LOG_COLUMNS)


def own_deadline(store, user_id, ex_id):
    """(the exercise's deadline, the learner's own: their extension's when later), naive UTC; None where none."""
    with store.session() as session:
        rule = session.get(ExerciseRule, ex_id)
        return deadline_for(rule), deadline_for(rule, extended_until(session, user_id, ex_id))


def own_override(store, user_id, ex_id):
    """The score staff set for this learner's exercise, or None."""
    with store.session() as session:
        return session.scalar(select(ScoreOverride.score).where(ScoreOverride.user_id == user_id,
                                                                ScoreOverride.exercise_id == ex_id))
