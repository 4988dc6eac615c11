"""Who an LMS launch or membership is on the class roster, and the LMS course they came from.

The roster decides: a person on it signs in with their roster role, except
that staff (TA, instructor) must be staff in the LMS too, and one roster
member is one LMS account (the first that launched), so that an LMS user who
puts someone else's email on their account gets nowhere. An LMS account (its
issuer and user id, `sub`) stays bound to the roster member it was first
linked to: when its email changes it is refused (`account_moved`) rather than
signed in as whoever owns the new email, and staff decide with
`python -m classroom lti-relink` or `lti-unlink` (classroom/lti/cli.py). Someone not on it joins as a learner only when the LMS
says they are a learner and the platform was registered with
`--auto-add-learners`; staff are never added from the LMS.
"""

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from ..data.models import LtiContext, LtiMember, LtiPlatform, LtiScore, User, utcnow
from ..data.text_rules import EMAIL_RE
from ..data import text_rules
from . import outbox

ROLES_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/roles"
CONTEXT_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/context"
DEPLOYMENT_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/deployment_id"
AGS_CLAIM = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
NRPS_CLAIM = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
LIS = "http://purl.imsglobal.org/vocab/lis/v2/membership"
STAFF = ("ta", "instructor")


class NotAdmitted(ValueError):
    """The LMS user may not sign in; `problem` is a message key of course/text/<lang>/lti.toml."""

    def __init__(self, problem, **fields):
        self.problem, self.fields = problem, fields
        super().__init__(f"{problem}: {fields}")


def lms_role(roles):
    """'ta', 'instructor', 'learner' or None from LTI role URIs (or NRPS's short names)."""
    roles = [str(role) for role in roles or []]
    if any(role.endswith("Instructor#TeachingAssistant") or role == "TeachingAssistant" for role in roles):
        return "ta"
    if any(role in (f"{LIS}#Instructor", "Instructor", f"{LIS}#Administrator") for role in roles):
        return "instructor"
    if any(role in (f"{LIS}#Learner", "Learner") for role in roles):
        return "learner"
    return None


def admit(session, platform, email, name, roles):
    """The roster user for an LMS person -> User; NotAdmitted says why not."""
    email = (email or "").strip().lower()
    if not EMAIL_RE.match(email):
        raise NotAdmitted("no_email")
    user = session.scalar(select(User).where(User.email == email))
    if user is not None:
        if user.removed_at is not None:
            raise NotAdmitted("removed", email=email)
        if user.role in STAFF and lms_role(roles) not in STAFF:  # a learner who put staff's email on their account
            raise NotAdmitted("staff_as_learner", email=email)
        return user
    if not (platform.auto_add_learners and lms_role(roles) == "learner"):
        raise NotAdmitted("not_on_roster", email=email)
    try:
        with session.begin_nested():
            user = User(email=email, name=(name or email.split("@")[0])[:200], role="learner")
            session.add(user)
    except IntegrityError:  # the same person's other launch added them first
        user = session.scalar(select(User).where(User.email == email))
    return user


def course(session, platform, claims):
    """The LtiContext of a launch (made or updated with the launch's service URLs) -> LtiContext."""
    context = claims.get(CONTEXT_CLAIM) or {}
    context_id = str(context.get("id") or f"deployment:{claims.get(DEPLOYMENT_CLAIM, '')}")[:255]
    row = session.scalar(select(LtiContext).where(LtiContext.platform_id == platform.id,
                                                  LtiContext.context_id == context_id))
    if row is None:
        try:
            with session.begin_nested():
                row = LtiContext(platform_id=platform.id, context_id=context_id)
                session.add(row)
        except IntegrityError:
            row = session.scalar(select(LtiContext).where(LtiContext.platform_id == platform.id,
                                                          LtiContext.context_id == context_id))
    ags, nrps = claims.get(AGS_CLAIM) or {}, claims.get(NRPS_CLAIM) or {}
    row.title = str(context.get("title") or row.title or "")[:255]
    row.deployment_id = str(claims.get(DEPLOYMENT_CLAIM, ""))[:255]
    if ags.get("lineitems"):
        row.lineitems_url, row.ags_scopes = ags["lineitems"], list(ags.get("scope") or [])
    if nrps.get("context_memberships_url"):
        row.memberships_url = nrps["context_memberships_url"]
    row.updated_at = utcnow()
    session.flush()
    return row


def refuse_control_characters(claims):
    """NotAdmitted ("bad_text") when a claim to be stored ({what: value}) holds a control character (a NUL would
    be a data error on Postgres; none of them is text)."""
    for what, value in claims.items():
        problem = text_rules.name_problem(value) if isinstance(value, str) else None
        if problem:
            raise NotAdmitted("bad_text", what=what, char=problem)


def bound_user(session, issuer, sub):
    """The roster user an LMS account (issuer + `sub`) is linked to in any course of that LMS -> User or None."""
    return session.scalar(
        select(User).join(LtiMember, LtiMember.user_id == User.id)
        .join(LtiContext, LtiContext.id == LtiMember.context_pk)
        .join(LtiPlatform, LtiPlatform.id == LtiContext.platform_id)
        .where(LtiPlatform.issuer == issuer, LtiMember.sub == str(sub)[:255]).limit(1))


def admit_account(session, platform, sub, email, name, roles):
    """The roster user of an LMS account that says it has `email` -> User; NotAdmitted says why not.

    An account already linked to a roster member is that member for good: if
    its email is now another (someone else's, an unknown one), nobody is signed
    in or added, and staff are told how to resolve it.
    """
    if not sub:
        raise NotAdmitted("no_email")
    refuse_control_characters({"sub": sub, "email": email, "name": name})
    bound = bound_user(session, platform.issuer, sub)
    if bound is not None and bound.email != (email or "").strip().lower():
        raise NotAdmitted("account_moved", email=(email or "").strip().lower() or "?", issuer=platform.issuer,
                          sub=str(sub)[:255])
    return admit(session, platform, email, name, roles)


def link_member(session, context, user, sub):
    """Record the LMS's id (`sub`) of a roster user in one course -> the LtiMember, or None when the user is
    another LMS account's already, or the account another user's (never re-linked: see lti-relink); a new
    member's scores become due."""
    sub = str(sub)[:255]
    row = session.scalar(select(LtiMember).where(LtiMember.context_pk == context.id, LtiMember.user_id == user.id))
    if row is not None:
        return row if row.sub == sub else None
    if session.scalar(select(LtiMember.id).where(LtiMember.context_pk == context.id, LtiMember.sub == sub)):
        return None  # the account is another roster user's in this course
    row = LtiMember(context_pk=context.id, user_id=user.id, sub=sub)
    session.add(row)
    session.flush()
    if context.lineitems_url:
        outbox.mark_member(session, user.id, context.id)
    return row


def admit_launch(store, platform, claims):
    """Roster user and course of a validated launch, recorded in one transaction -> (user email, context id)."""
    context = claims.get(CONTEXT_CLAIM) or {}
    refuse_control_characters({"context id": context.get("id"), "context title": context.get("title"),
                               "deployment id": claims.get(DEPLOYMENT_CLAIM)})
    with store.session() as session:
        user = admit_account(session, platform, claims.get("sub"), claims.get("email"), claims.get("name"),
                             claims.get(ROLES_CLAIM))
        other = session.scalar(select(LtiMember.sub).join(LtiContext, LtiContext.id == LtiMember.context_pk).where(
            LtiContext.platform_id == platform.id, LtiMember.user_id == user.id, LtiMember.sub != str(claims["sub"])))
        if other is not None:  # this roster member signs in from another LMS account already
            raise NotAdmitted("other_account", email=user.email)
        context = course(session, platform, claims)
        if link_member(session, context, user, claims["sub"]) is None:
            raise NotAdmitted("account_moved", email=user.email, issuer=platform.issuer, sub=str(claims["sub"]))
        return user.email, context.id


def _account_rows(session, issuer, sub):
    return list(session.scalars(
        select(LtiMember).join(LtiContext, LtiContext.id == LtiMember.context_pk)
        .join(LtiPlatform, LtiPlatform.id == LtiContext.platform_id)
        .where(LtiPlatform.issuer == issuer, LtiMember.sub == str(sub)[:255])))


def relink(store, issuer, sub, email):
    """Staff's decision: the LMS account (issuer + sub) is the roster user `email` from now on, in every course
    it is linked in -> the number of courses; LookupError says why not (nothing changed then).

    The user's scores become due in those courses (to the account now theirs).
    """
    email = (email or "").strip().lower()
    with store.session() as session:
        user = session.scalar(select(User).where(User.email == email))
        if user is None or user.removed_at is not None:
            raise LookupError(f"{email} is not on the roster: add them first (python -m classroom roster)")
        rows = _account_rows(session, issuer, sub)
        if not rows:
            raise LookupError(f"no course of {issuer} knows an LMS account {sub}: nothing to relink (it is linked "
                              "at its first launch)")
        others = session.scalar(
            select(LtiMember.sub).join(LtiContext, LtiContext.id == LtiMember.context_pk)
            .join(LtiPlatform, LtiPlatform.id == LtiContext.platform_id)
            .where(LtiPlatform.issuer == issuer, LtiMember.user_id == user.id, LtiMember.sub != str(sub)[:255]))
        if others is not None:
            raise LookupError(f"{email} is linked to another account of {issuer} ({others}): run "
                              f"`python -m classroom lti-unlink --email {email}` first")
        for row in rows:
            row.user_id = user.id
            session.execute(update(LtiScore).where(LtiScore.context_pk == row.context_pk,
                                                   LtiScore.user_id == user.id)
                            .values(due=True, version=LtiScore.version + 1, pushed_score=None,
                                    next_try_at=utcnow()))
            context = session.get(LtiContext, row.context_pk)
            if context.lineitems_url:
                outbox.mark_member(session, user.id, context.id)
        return len(rows)


def unlink(store, email, issuer=None):
    """Staff's decision: forget the LMS accounts of roster user `email` (of one LMS, or of all) -> the number of
    course links removed; the next launch of their LMS account links it again."""
    email = (email or "").strip().lower()
    with store.session() as session:
        user = session.scalar(select(User).where(User.email == email))
        if user is None:
            raise LookupError(f"{email} is not on the roster")
        query = select(LtiMember).join(LtiContext, LtiContext.id == LtiMember.context_pk).where(
            LtiMember.user_id == user.id)
        if issuer:
            query = query.join(LtiPlatform, LtiPlatform.id == LtiContext.platform_id).where(
                LtiPlatform.issuer == issuer)
        rows = list(session.scalars(query))
        for row in rows:
            session.delete(row)
        return len(rows)
