"""Who an LMS launch or membership is on the class roster, and the LMS course they came from.

The roster decides: a person on it signs in with their roster role, except
that staff (TA, instructor) must be staff in the LMS too, and one roster
member is one LMS account (the first that launched), so that an LMS user who
puts someone else's email on their account gets nowhere. Someone not on it joins as a learner only when the LMS
says they are a learner and the platform was registered with
`--auto-add-learners`; staff are never added from the LMS.
"""

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from ..models import LtiContext, LtiMember, User, utcnow
from ..store import EMAIL_RE
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


def link_member(session, context, user, sub):
    """Record the LMS's id (`sub`) of a roster user in one course -> the LtiMember, or None when the user is
    another LMS account's already (never re-linked); a new member's scores become due."""
    sub = str(sub)[:255]
    row = session.scalar(select(LtiMember).where(LtiMember.context_pk == context.id, LtiMember.user_id == user.id))
    if row is not None:
        return row if row.sub == sub else None
    stale = session.scalar(select(LtiMember).where(LtiMember.context_pk == context.id, LtiMember.sub == sub))
    if stale is not None:  # the LMS account now carries another email: it is that roster user now
        session.delete(stale)
        session.flush()
    row = LtiMember(context_pk=context.id, user_id=user.id, sub=sub)
    session.add(row)
    session.flush()
    if context.lineitems_url:
        outbox.mark_member(session, user.id, context.id)
    return row


def admit_launch(store, platform, claims):
    """Roster user and course of a validated launch, recorded in one transaction -> (user email, context id)."""
    with store.session() as session:
        user = admit(session, platform, claims.get("email"), claims.get("name"), claims.get(ROLES_CLAIM))
        if not claims.get("sub"):
            raise NotAdmitted("no_email")
        other = session.scalar(select(LtiMember.sub).join(LtiContext, LtiContext.id == LtiMember.context_pk).where(
            LtiContext.platform_id == platform.id, LtiMember.user_id == user.id, LtiMember.sub != str(claims["sub"])))
        if other is not None:  # this roster member signs in from another LMS account already
            raise NotAdmitted("other_account", email=user.email)
        context = course(session, platform, claims)
        link_member(session, context, user, claims["sub"])
        return user.email, context.id
