"""The class's settings and its deadlines' rules: one rule of lateness (deadline_for, late_penalty), extensions.

Every function here that takes the store is one transaction. Access rules are checked by the callers in
classroom/web/access.py; these functions trust their arguments.
"""

from datetime import datetime, timedelta

from sqlalchemy import select



from . import exercise_table
from .models import LATE_POLICIES, ExerciseRule, Extension, Setting


DEFAULT_SETTINGS = {
    "max_in_flight": 1,  # a learner's submissions queued or grading at once (0: no limit)
    "per_hour": 30,  # a learner's submissions per rolling hour (0: no limit)
    "session_hours": 12,  # how long a sign-in lasts
    "link_hours": 72,  # how long a one-time sign-in link stays valid
    "variants": 1,  # 1: each learner gets their own exercise variants (grader/variants.py); 0: the published ones
    "lab_runs": 0,  # training-lab runs the app server trains at once (classroom/data/lab_runs.py); 0: none by learners
    # the grader version the class's workers must run (classroom/data/verdicts.py grader_version), recorded by
    # `python -m classroom upgrade`; "": none recorded, any worker grades (expected_grader_version)
    "grader_version": "",
}


def get_settings(store):
    """The class settings: DEFAULT_SETTINGS overridden by the settings table."""
    with store.session() as session:
        stored = {s.key: s.value for s in session.scalars(select(Setting))}
    return {key: type(default)(stored.get(key, default)) for key, default in DEFAULT_SETTINGS.items()}


def expected_grader_version(session):
    """The grader version the class expects of its workers (the "grader_version" setting, recorded by `python -m
    classroom upgrade`), read inside the caller's transaction -> the version, or None: none recorded (a class from
    before `upgrade`), so that any worker grades."""
    setting = session.get(Setting, "grader_version")
    return setting.value if setting is not None and setting.value else None


LIFETIMES = ("session_hours", "link_hours")  # must be positive; the other settings may be 0 (no limit)


def set_setting(store, key, value):
    """Change one class setting (a key of DEFAULT_SETTINGS); ValueError for a value it cannot take."""
    if key not in DEFAULT_SETTINGS:
        raise ValueError(f"unknown setting {key!r}; use one of {', '.join(DEFAULT_SETTINGS)}")
    value = type(DEFAULT_SETTINGS[key])(value)
    if isinstance(value, str):  # the grader version: as long as a Result's may be
        if len(value) > 64 or not value.isprintable() or value != value.strip():
            raise ValueError(f"{key} {value!r}: at most 64 printable characters, no spaces around them")
    elif key == "variants" and value not in (0, 1):
        raise ValueError(f"variants {value}: use 1 (each learner their own exercise variants) or 0 (the published ones)")
    elif value < 0 or (key in LIFETIMES and value == 0):
        raise ValueError(f"{key} {value}: use a whole number {'above' if key in LIFETIMES else 'of at least'} 0")
    with store.session() as session:
        session.merge(Setting(key=key, value=str(value)))


def set_rule(store, ex_id, deadline, late_policy="accept", late_window_h=0.0, late_penalty=0.0):
    """Set an exercise's deadline (naive UTC datetime or None) and late policy."""
    exercise_table.get(ex_id)
    if late_policy not in LATE_POLICIES:
        raise ValueError(f"late policy {late_policy!r}; use one of {', '.join(LATE_POLICIES)}")
    if not 0.0 <= late_penalty <= 1.0:
        raise ValueError(f"late penalty {late_penalty}: a fraction of the score between 0 and 1")
    with store.session() as session:
        session.merge(ExerciseRule(exercise_id=ex_id, deadline=deadline, late_policy=late_policy,
                                   late_window_h=late_window_h, late_penalty=late_penalty))


def deadline_for(rule, extended_until=None):
    """The deadline that holds for one learner's work on an exercise: the exercise's (rule; None: no rule), or
    their extension (classroom/data/adjustments.py) when it is later -> naive UTC datetime, or None (no deadline).

    The one rule of lateness: submitting (`lateness`), a regrade (classroom/line/queue.py) and an extension granted
    or cleared (classroom/data/adjustments.py) all decide through it, so the gradebook, the learner's page, the
    export and the LMS, which read the stored scores, agree."""
    if rule is None or rule.deadline is None:
        return None
    return max(rule.deadline, extended_until) if extended_until is not None else rule.deadline


def late_penalty(rule, when, extended_until=None):
    """(late, penalty) of work handed in at `when` under an exercise's rule (None: no rule) and the learner's
    extension (deadline_for); never refuses."""
    deadline = deadline_for(rule, extended_until)
    if deadline is None or when <= deadline:
        return False, 0.0
    return True, rule.late_penalty


def closes_at(rule, extended_until=None):
    """When the exercise stops taking this learner's submissions (the deadline plus the late window of an
    "accept" rule), or None: never."""
    deadline = deadline_for(rule, extended_until)
    if deadline is None:
        return None
    return deadline + timedelta(hours=rule.late_window_h if rule.late_policy == "accept" else 0)


def extended_until(session, user_id, ex_id):
    """The learner's extended deadline of an exercise (naive UTC), or None (classroom/data/adjustments.py)."""
    return session.scalar(select(Extension.until).where(Extension.user_id == user_id,
                                                        Extension.exercise_id == ex_id))


def extensions_by_key(session):
    """{(user id, exercise id): extended deadline} of the whole class (few rows: one per grant)."""
    return {(user_id, ex_id): until for user_id, ex_id, until in
            session.execute(select(Extension.user_id, Extension.exercise_id, Extension.until))}


def parse_deadline(text):
    """'2026-12-24 18:00' (UTC) -> datetime; ValueError with the expected format."""
    try:
        return datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"deadline {text!r}: write it as YYYY-MM-DD HH:MM (UTC)") from None
