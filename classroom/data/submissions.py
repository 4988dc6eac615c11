"""Submitting (the class rules a submission must pass, its job queued) and storing a verdict.

Every function here that takes the store is one transaction. Access rules are checked by the callers in
classroom/web/access.py; these functions trust their arguments.
"""

from datetime import timedelta

from sqlalchemy import func, select

from course.common.i18n import LANGS


from . import exercise_table, lms_outbox, text_rules, turns
from .models import KINDS, SUBMIT, ExerciseRule, Job, Result, Submission, User, utcnow
from .settings import closes_at, extended_until, get_settings, late_penalty
from .variants import assigned_variant


MAX_SOURCE_BYTES = 1_000_000  # a submission's text (a notebook with outputs can be large)


class SubmitRefused(ValueError):
    """A submission the class rules do not accept now; the message says why and when to retry."""


def lateness(rule, now, extended_until=None):
    """(late, penalty) for a submission at `now`; SubmitRefused when the exercise is closed (for this learner: an
    extension moves the late window with the deadline)."""
    if not late_penalty(rule, now, extended_until)[0]:
        return False, 0.0
    closes = closes_at(rule, extended_until)
    if now > closes:
        raise SubmitRefused(f"{rule.exercise_id} closed at {closes:%Y-%m-%d %H:%M} UTC: "
                            "submissions are no longer accepted")
    return True, rule.late_penalty


def kind_of(filename):
    """'.py' or '.ipynb' from a file name; ValueError otherwise."""
    kind = "." + str(filename).rsplit(".", 1)[-1].lower() if "." in str(filename) else ""
    if kind not in KINDS:
        raise SubmitRefused(f"{filename}: submit a .py file or a .ipynb notebook")
    return kind


def submit(store, user_id, ex_id, source, filename, now=None, lang="en"):
    """Queue a submission (and its grading job) -> its id, returned after the commit.

    `lang` is the learner's language: the feedback is written in it (and kept by regrades).
    SubmitRefused says why the class rules refuse it now and when to try again.
    """
    exercise_table.get(ex_id)
    if lang not in LANGS:
        raise SubmitRefused(f"language {lang!r}: use one of {', '.join(LANGS)}")
    kind = kind_of(filename)
    if isinstance(source, bytes):
        try:
            source = source.decode("utf-8")
        except UnicodeDecodeError as err:
            raise SubmitRefused(f"{filename} is not UTF-8 text (byte {err.start}): save it as UTF-8") from None
    problem = text_rules.filename_problem(filename, lang) or text_rules.code_problem(source, filename, lang)
    if problem:  # refused here on every backend (Postgres refuses a NUL as a data error, not an outage)
        raise SubmitRefused(problem)
    if len(source.encode("utf-8")) > MAX_SOURCE_BYTES:
        raise SubmitRefused(f"{filename} is larger than {MAX_SOURCE_BYTES // 1000} kB: clear the notebook's "
                            "outputs, or submit the .py file")
    settings = get_settings(store)
    now = now or utcnow()
    with store.session() as session:
        # Lock the learner's row: their concurrent submissions are checked one at a time.
        user = session.scalar(select(User).where(User.id == user_id).with_for_update())
        if user is None or user.removed_at is not None:
            raise SubmitRefused("you are not on this class's roster: ask your instructor")
        _check_limits(session, user.id, settings, now)
        late, penalty = lateness(session.get(ExerciseRule, ex_id), now, extended_until(session, user.id, ex_id))
        submission = Submission(user_id=user.id, exercise_id=ex_id, source=source, kind=kind,
                                filename=str(filename)[-255:], created_at=now, late=late, penalty=penalty,
                                lang=lang, variant=assigned_variant(session, user.id, ex_id))
        session.add(submission)
        session.flush()
        session.add(Job(submission_id=submission.id, created_at=now,
                        turn=turns.next_turn(session, user.id, SUBMIT, now)))  # the learner's row is locked
        submission_id = submission.id
    return submission_id


def store_verdict(session, user_id, exercise_id, now, **result):
    """Store one verdict (the Result row's fields) inside the caller's transaction, and make its learner x exercise
    due in the LMS outbox in the same commit (lms_outbox.mark_changed): the one way a verdict is stored."""
    session.add(Result(created_at=now, **result))
    lms_outbox.mark_changed(session, user_id, exercise_id, now)


def _check_limits(session, user_id, settings, now):
    """SubmitRefused when the learner has too many submissions in flight or in the last hour."""
    if settings["max_in_flight"]:
        in_flight = session.scalar(  # the learner's own submissions waiting; regrade jobs do not count
            select(func.count(Job.id)).join(Submission, Submission.id == Job.submission_id).where(
                Submission.user_id == user_id, Job.reason == "submit", Job.state.in_(("queued", "running"))))
        if in_flight >= settings["max_in_flight"]:
            raise SubmitRefused(f"you have {in_flight} submission(s) waiting to be graded: you can submit "
                                "again as soon as its feedback arrives")
    if settings["per_hour"]:
        since = now - timedelta(hours=1)
        times = list(session.scalars(select(Submission.created_at).where(
            Submission.user_id == user_id, Submission.created_at > since).order_by(Submission.created_at)))
        if len(times) >= settings["per_hour"]:
            retry = times[len(times) - settings["per_hour"]] + timedelta(hours=1)
            raise SubmitRefused(f"{settings['per_hour']} submissions per hour at most: the next one is "
                                f"possible at {retry:%H:%M:%S} UTC (in {_minutes(retry - now)})")


def _minutes(delta):
    seconds = max(int(delta.total_seconds()), 0)
    return f"{seconds // 60} min {seconds % 60} s"
