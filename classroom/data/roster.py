"""The class and its roster: creating the class, importing and removing people, looking them up.

Every function here that takes the store is one transaction. Access rules are checked by the callers in
classroom/web/access.py; these functions trust their arguments.
"""

import csv
import io
from dataclasses import dataclass

from sqlalchemy import func, select



from . import text_rules
from .db import Store, migrate
from .models import ROLES, Setting, User, utcnow
from .sessions import revoke_links_in, revoke_sessions_in
from .text_rules import EMAIL_RE, clean_email


class RosterError(ValueError):
    """A roster file with bad rows; `problems` lists 'line N: ...' messages."""

    def __init__(self, path, problems):
        self.problems = problems
        super().__init__(f"{path}: nothing imported, fix these rows first:\n  " + "\n  ".join(problems))


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
    email = clean_email(instructor_email)
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
        user = session.scalar(select(User).where(User.email == clean_email(email)))
        if user is None:
            raise LookupError(f"{email} is not on this class's roster")
        if user.role == "instructor" and user.removed_at is None and session.scalar(
                select(func.count(User.id)).where(User.role == "instructor", User.removed_at.is_(None))) == 1:
            raise ValueError(f"{user.email} is the class's only instructor: add another one first")
        user.removed_at = user.removed_at or now
        return revoke_sessions_in(session, now, user.id), revoke_links_in(session, now, user.id)


def removed_emails(store):
    """The emails of the people taken off the roster (their submissions stay, marked)."""
    with store.session() as session:
        return set(session.scalars(select(User.email).where(User.removed_at.is_not(None))))


def user_by_email(store, email):
    """The user with this email, or None."""
    with store.session() as session:
        return session.scalar(select(User).where(User.email == clean_email(email)))


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
