"""Class data operations: roster, sign-in links and sessions, settings, submitting, storing a verdict.

Every function here is one transaction. Access rules are checked by the
callers in classroom/web/access.py; these functions trust their arguments.
"""

import csv
import hashlib
import io
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError

from course.common.i18n import LANGS

from course.common import exercise_variants as variants

from . import exercise_table, lms_outbox, text_rules, turns
from .db import Store, migrate
from .models import KINDS, LATE_POLICIES, ROLES, SUBMIT, ExerciseRule, Extension, Job, LoginSession, Result, \
    Setting, SignInToken, Submission, User, VariantAssignment, utcnow

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
MAX_SOURCE_BYTES = 1_000_000  # a submission's text (a notebook with outputs can be large)
EMAIL_RE = re.compile(r"^[^@\s,;]+@[^@\s,;]+\.[^@\s,;]+$")


class RosterError(ValueError):
    """A roster file with bad rows; `problems` lists 'line N: ...' messages."""

    def __init__(self, path, problems):
        self.problems = problems
        super().__init__(f"{path}: nothing imported, fix these rows first:\n  " + "\n  ".join(problems))


class SubmitRefused(ValueError):
    """A submission the class rules do not accept now; the message says why and when to retry."""


def hash_token(token):
    """The stored form of a secret token (sha256 hex; the token itself holds 32 random bytes)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token():
    """A fresh url-safe secret token (32 random bytes)."""
    return secrets.token_urlsafe(32)


# ---- class and roster ------------------------------------------------------------------


INSTRUCTOR_NAME = "instructor_name"  # the settings row holding the instructor's name (`init --name`), as shown


def init_class(url, instructor_email, name=""):
    """Create or upgrade the schema and make sure the first instructor exists -> Store.

    `name` (optional) is the instructor's name as the class shows it: kept in the class settings and as their
    roster name; an init without one keeps the name given before (none: the app shows their email).
    """
    name = " ".join((name or "").split())  # one line: no newlines or tabs in a name shown on every page
    if len(name) > 200:
        raise ValueError(f"--name is {len(name)} characters long: use at most 200")
    store = Store(url, check=False)
    migrate(store.engine)
    email = _clean_email(instructor_email)
    if not EMAIL_RE.match(email):
        raise ValueError(f"--instructor {instructor_email!r} is not an email address")
    with store.session() as session:
        user = session.scalar(select(User).where(User.email == email))
        if user is None:
            session.add(User(email=email, name=name, role="instructor"))
        else:
            user.role = "instructor"
            user.name = name or user.name
        if name:
            session.merge(Setting(key=INSTRUCTOR_NAME, value=name))
    return store


def instructor_name(store):
    """The class's instructor as `init --name` named them, or '' when no name was given."""
    with store.session() as session:
        row = session.get(Setting, INSTRUCTOR_NAME)
        return row.value if row is not None else ""


def _clean_email(email):
    return (email or "").strip().lower()


@dataclass
class RosterRow:
    line: int
    email: str
    name: str
    role: str


def parse_roster(text, path="roster"):
    """Rows of a roster CSV (columns email, name, role) -> [RosterRow]; RosterError on any bad row."""
    reader = csv.reader(io.StringIO(text))
    problems, rows, seen = [], [], {}
    header = next(reader, None)
    columns = [c.strip().lower() for c in header or []]
    if sorted(columns) != ["email", "name", "role"]:
        raise RosterError(path, [f"line 1: the header must name the columns email, name, role (found: "
                                 f"{', '.join(columns) or 'nothing'})"])
    where = {c: columns.index(c) for c in ("email", "name", "role")}
    for values in reader:
        line = reader.line_num
        if not any(v.strip() for v in values):
            continue
        if len(values) != 3:
            problems.append(f"line {line}: {len(values)} values, expected 3 (email, name, role)")
            continue
        email, name, role = (values[where[c]].strip() for c in ("email", "name", "role"))
        email, role = email.lower(), role.lower()
        bad = text_rules.name_problem(email) or text_rules.name_problem(name)
        if bad:
            problems.append(f"line {line}: the {'email' if text_rules.name_problem(email) else 'name'} holds the "
                            f"control character {bad}, which is not text: delete it and import again")
        elif not EMAIL_RE.match(email):
            problems.append(f"line {line}: {email!r} is not an email address")
        elif role not in ROLES:
            problems.append(f"line {line}: role {role!r} for {email}; use one of {', '.join(ROLES)}")
        elif email in seen:
            problems.append(f"line {line}: {email} is already on line {seen[email]}")
        else:
            seen[email] = line
            rows.append(RosterRow(line, email, name, role))
    if problems:
        raise RosterError(path, problems)
    return rows


def import_roster(store, path, readmit=False):
    """Add or update the roster's users in one transaction -> (added, updated, unchanged, kept_removed).

    Removal sticks: someone taken off the roster (`remove_user`) whom the file lists again is left as they
    are, removed, and named in `kept_removed` (sorted emails); `readmit=True` lets them back in instead
    (counted as updated).
    """
    try:
        text = open(path, encoding="utf-8-sig", newline="").read()
    except UnicodeDecodeError as err:
        raise RosterError(path, [f"byte {err.start}: not UTF-8 text; save the file as CSV UTF-8"]) from None
    rows = parse_roster(text, path)
    added = updated = unchanged = 0
    kept_removed = []
    with store.session() as session:
        existing = {u.email: u for u in session.scalars(select(User).where(User.email.in_([r.email for r in rows])))}
        for row in rows:
            user = existing.get(row.email)
            if user is None:
                session.add(User(email=row.email, name=row.name, role=row.role))
                added += 1
            elif user.removed_at is not None and not readmit:
                kept_removed.append(user.email)
            elif (user.name, user.role) != (row.name, row.role) or user.removed_at is not None:
                user.name, user.role, user.removed_at = row.name, row.role, None  # readmitted, or changed
                updated += 1
            else:
                unchanged += 1
    return added, updated, unchanged, sorted(kept_removed)


def remove_user(store, email):
    """Take someone off the roster: no more sign-ins; their submissions stay -> (sessions, links) revoked."""
    now = utcnow()
    with store.session() as session:
        user = session.scalar(select(User).where(User.email == _clean_email(email)))
        if user is None:
            raise LookupError(f"{email} is not on this class's roster")
        if user.role == "instructor" and user.removed_at is None and session.scalar(
                select(func.count(User.id)).where(User.role == "instructor", User.removed_at.is_(None))) == 1:
            raise ValueError(f"{user.email} is the class's only instructor: add another one first")
        user.removed_at = user.removed_at or now
        return _revoke_sessions(session, now, user.id), _revoke_links(session, now, user.id)


def removed_emails(store):
    """The emails of the people taken off the roster (their submissions stay, marked)."""
    with store.session() as session:
        return set(session.scalars(select(User.email).where(User.removed_at.is_not(None))))


def user_by_email(store, email):
    """The user with this email, or None."""
    with store.session() as session:
        return session.scalar(select(User).where(User.email == _clean_email(email)))


def user_by_id(store, user_id):
    """The user with this id, or None."""
    with store.session() as session:
        return session.get(User, user_id)


def list_users(store, role=None):
    """All users on the roster (of one role), by email; removed people are left out."""
    with store.session() as session:
        query = select(User).where(User.removed_at.is_(None)).order_by(User.email)
        if role:
            query = query.where(User.role == role)
        return list(session.scalars(query))


# ---- settings and rules ------------------------------------------------------------------


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


def extended_until(session, user_id, ex_id):
    """The learner's extended deadline of an exercise (naive UTC), or None (classroom/data/adjustments.py)."""
    return session.scalar(select(Extension.until).where(Extension.user_id == user_id,
                                                        Extension.exercise_id == ex_id))


def extensions_by_key(session):
    """{(user id, exercise id): extended deadline} of the whole class (few rows: one per grant)."""
    return {(user_id, ex_id): until for user_id, ex_id, until in
            session.execute(select(Extension.user_id, Extension.exercise_id, Extension.until))}


# ---- sign-in links and sessions --------------------------------------------------------------


def create_sign_in_link(store, email, base_url="http://localhost:8501/"):
    """A one-time sign-in link for a user on the roster -> (url, expires_at); their older unused links stop working."""
    hours = get_settings(store)["link_hours"]
    token = new_token()
    now = utcnow()
    with store.session() as session:
        user = session.scalar(select(User).where(User.email == _clean_email(email)))
        if user is None or user.removed_at is not None:
            raise LookupError(f"{email} is not on this class's roster")
        _revoke_links(session, now, user.id)
        expires = now + timedelta(hours=hours)
        session.add(SignInToken(user_id=user.id, token_hash=hash_token(token), expires_at=expires))
    separator = "&" if "?" in base_url else "?"
    return f"{base_url}{separator}token={token}", expires


def redeem_sign_in_token(store, token):
    """Use a one-time token (once, before it expires) -> a new session token, or None."""
    now = utcnow()
    hours = get_settings(store)["session_hours"]
    with store.session() as session:
        link = session.scalar(select(SignInToken).where(SignInToken.token_hash == hash_token(token or "")))
        if link is None:
            return None
        used = session.execute(
            update(SignInToken)
            .where(SignInToken.id == link.id, SignInToken.used_at.is_(None), SignInToken.revoked_at.is_(None),
                   SignInToken.expires_at > now)
            .values(used_at=now)
        ).rowcount
        if used != 1 or session.get(User, link.user_id).removed_at is not None:
            return None
        return _new_session(session, link.user_id, now, hours)


def _new_session(session, user_id, now, hours):
    token = new_token()
    session.add(LoginSession(user_id=user_id, token_hash=hash_token(token),
                             expires_at=now + timedelta(hours=hours)))
    return token


def user_for_session(store, session_token):
    """The signed-in user of a live session token, or None (unknown, expired or revoked)."""
    if not session_token:
        return None
    with store.session() as session:
        row = session.scalar(select(LoginSession).where(LoginSession.token_hash == hash_token(session_token)))
        if row is None or row.revoked_at is not None or row.expires_at <= utcnow():
            return None
        user = session.get(User, row.user_id)
        return user if user.removed_at is None else None


def sign_out(store, session_token):
    """Revoke a session."""
    with store.session() as session:
        session.execute(update(LoginSession).where(LoginSession.token_hash == hash_token(session_token or ""))
                        .values(revoked_at=utcnow()))


def _user_ids(session, email):
    """[the id of the user with this email] (LookupError when unknown), or None for everyone."""
    if email is None:
        return None
    user_id = session.scalar(select(User.id).where(User.email == _clean_email(email)))
    if user_id is None:
        raise LookupError(f"{email} is not on this class's roster")
    return [user_id]


def _revoke_links(session, now, user_id=None):
    """Revoke the unused, unexpired links (of one user) -> how many."""
    query = update(SignInToken).where(SignInToken.used_at.is_(None), SignInToken.revoked_at.is_(None),
                                      SignInToken.expires_at > now)
    if user_id is not None:
        query = query.where(SignInToken.user_id == user_id)
    return session.execute(query.values(revoked_at=now)).rowcount


def _revoke_sessions(session, now, user_id=None):
    """Revoke the live sessions (of one user) -> how many."""
    query = update(LoginSession).where(LoginSession.revoked_at.is_(None), LoginSession.expires_at > now)
    if user_id is not None:
        query = query.where(LoginSession.user_id == user_id)
    return session.execute(query.values(revoked_at=now)).rowcount


def revoke_links(store, email=None):
    """Revoke the unused sign-in links of one person (email) or of everyone (None) -> how many."""
    with store.session() as session:
        ids = _user_ids(session, email)
        return _revoke_links(session, utcnow(), ids[0] if ids else None)


def revoke_sessions(store, email=None):
    """Sign out one person (email) or everyone (None) on every browser -> sessions revoked."""
    with store.session() as session:
        ids = _user_ids(session, email)
        return _revoke_sessions(session, utcnow(), ids[0] if ids else None)


# ---- submitting --------------------------------------------------------------------------------


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


VARIANT_SECRET = "variant_secret"  # the settings row holding the class's variant secret (not a class setting)


def _variant_secret(session):
    """The class's secret for assigning variants, made at first need (32 random bytes, hex)."""
    row = session.get(Setting, VARIANT_SECRET)
    if row is not None:
        return row.value
    try:
        with session.begin_nested():
            session.add(Setting(key=VARIANT_SECRET, value=secrets.token_hex(32)))
    except IntegrityError:  # another transaction made it first: use theirs
        pass
    return session.get(Setting, VARIANT_SECRET, populate_existing=True).value


def assigned_variant(session, user_id, ex_id):
    """The learner's variant of an exercise (grader/variants.py): stored at its first need, from the class
    secret and the learner's id, and the same ever after (never taken from what the learner sends)."""
    query = select(VariantAssignment.variant).where(VariantAssignment.user_id == user_id,
                                                    VariantAssignment.exercise_id == ex_id)
    found = session.scalar(query)
    if found is not None:
        return found
    switch = session.get(Setting, "variants")
    if switch is not None and int(switch.value) == 0:
        return 0  # a class without variants: nothing is stored, so turning them on later assigns one
    number = variants.assign(_variant_secret(session), user_id, ex_id)
    try:
        with session.begin_nested():
            session.add(VariantAssignment(user_id=user_id, exercise_id=ex_id, variant=number, created_at=utcnow()))
    except IntegrityError:  # assigned meanwhile by another transaction: that one stands
        return session.scalar(query)
    return number


def learner_variant(store, user_id, ex_id):
    """The learner's variant of an exercise, assigned now if it is their first look (for the exercise text)."""
    exercise_table.get(ex_id)
    with store.session() as session:
        return assigned_variant(session, user_id, ex_id)


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


def parse_deadline(text):
    """'2026-12-24 18:00' (UTC) -> datetime; ValueError with the expected format."""
    try:
        return datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"deadline {text!r}: write it as YYYY-MM-DD HH:MM (UTC)") from None
