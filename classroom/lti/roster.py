"""The class roster from an LMS course's members (NRPS): link everyone already on it, add learners if allowed.

The same rule as a launch (classroom/lti/accounts.py): the roster decides
roles; a member not on it joins as a learner only when the platform allows
it, and staff are never added; an LMS account linked to one roster member is
never moved to another by an email change. Members the LMS lists as inactive
are skipped.
"""

from dataclasses import dataclass, field

from pylti1p3.names_roles import NamesRolesProvisioningService
from pylti1p3.service_connector import ServiceConnector
from sqlalchemy import select

from ..data.models import LtiContext, LtiPlatform
from . import accounts, config
from .passback import Http


@dataclass
class RosterReport:
    linked: int = 0  # members now known by their LMS id
    not_admitted: list = field(default_factory=list)  # "email: why" of members left out


def sync_course(store, context_pk, http=None):
    """Read one course's members from the LMS and link them to the roster -> RosterReport."""
    with store.session() as session:
        context = session.get(LtiContext, context_pk)
        platform = session.get(LtiPlatform, context.platform_id)
    connector = ServiceConnector(config.registration(platform, config.tool_key(store)), requests_session=http or Http())
    members = NamesRolesProvisioningService(connector, {"context_memberships_url": context.memberships_url,
                                                        "service_versions": ["2.0"]}).get_members()
    report = RosterReport()
    with store.session() as session:
        context = session.get(LtiContext, context_pk)
        for member in members:
            if str(member.get("status", "Active")) != "Active" or not member.get("user_id"):
                continue
            try:
                user = accounts.admit_account(session, platform, member["user_id"], member.get("email"),
                                              member.get("name"), member.get("roles"))
            except accounts.NotAdmitted as err:
                report.not_admitted.append(f"{member.get('email') or member['user_id']}: {err.problem}")
                continue
            if accounts.link_member(session, context, user, member["user_id"]) is None:
                report.not_admitted.append(f"{member.get('email')}: other_account")
                continue
            report.linked += 1
    return report


def courses_with_roster(store):
    """The ids of the courses whose launches gave a memberships URL."""
    with store.session() as session:
        return list(session.scalars(select(LtiContext.id).where(LtiContext.memberships_url.is_not(None))))
