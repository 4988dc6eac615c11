"""Platform registrations and the tool's key pair, kept in the class database; pylti1p3's view of them.

A platform (an LMS such as Canvas or Moodle) is registered once by whoever
holds the database URL (`python -m classroom lti-register`): its issuer, the
client id it gave the tool, its OIDC, token and key-set URLs, and the
deployment ids it may launch from. The tool's RSA key is made on first use;
its public half is served at /lti/jwks.
"""

import json
from dataclasses import dataclass

from jwcrypto import jwk
from pylti1p3.deployment import Deployment
from pylti1p3.registration import Registration
from pylti1p3.tool_config.abstract import ToolConfAbstract
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from ..data.models import LtiPlatform, LtiToolKey

URL_FIELDS = ("auth_login_url", "auth_token_url", "key_set_url")


@dataclass(frozen=True)
class ToolKey:
    kid: str
    private_pem: str
    public_jwk: dict


def tool_key(store):
    """The tool's newest key pair, made (RSA 2048) and stored the first time it is needed -> ToolKey."""
    with store.session() as session:
        row = session.scalar(select(LtiToolKey).order_by(LtiToolKey.id.desc()).limit(1))
        if row is not None:
            return ToolKey(row.kid, row.private_pem, row.public_jwk)
    key = jwk.JWK.generate(kty="RSA", size=2048)
    kid = key.thumbprint()  # the kid pylti1p3 derives from the public key (Registration.get_kid)
    public = dict(json.loads(key.export_public()), kid=kid, alg="RS256", use="sig")
    pem = key.export_to_pem(private_key=True, password=None).decode()
    try:
        with store.session() as session:
            session.add(LtiToolKey(kid=kid, private_pem=pem, public_jwk=public))
    except IntegrityError:  # pragma: no cover - two processes made one at once; either is fine
        pass
    return tool_key(store)


def tool_jwks(store):
    """The tool's public keys as a JWKS document (every stored key, so that a rotated one still verifies)."""
    tool_key(store)
    with store.session() as session:
        return {"keys": [row.public_jwk for row in session.scalars(select(LtiToolKey).order_by(LtiToolKey.id))]}


def _check_url(name, value):
    """ValueError unless value is an http(s) URL."""
    if not str(value or "").startswith(("https://", "http://")):
        raise ValueError(f"--{name.replace('_', '-')} {value!r}: give the platform's full https:// URL")


def register_platform(store, issuer, client_id, auth_login_url, auth_token_url, key_set_url, deployment_ids,
                      auth_audience=None, auto_add_learners=False):
    """Add or update one platform registration -> (LtiPlatform, added)."""
    issuer, client_id = str(issuer).strip(), str(client_id).strip()
    if not issuer or not client_id:
        raise ValueError("an LTI registration needs the platform's issuer (--issuer) and the client id it gave "
                         "the tool (--client-id)")
    urls = dict(auth_login_url=auth_login_url, auth_token_url=auth_token_url, key_set_url=key_set_url)
    for name, value in urls.items():
        _check_url(name, value)
    deployments = sorted({str(d).strip() for d in deployment_ids if str(d).strip()})
    if not deployments:
        raise ValueError("give at least one --deployment ID (the LMS shows it where the tool was installed)")
    with store.session() as session:
        row = session.scalar(select(LtiPlatform).where(LtiPlatform.issuer == issuer,
                                                        LtiPlatform.client_id == client_id))
        added = row is None
        if added:
            row = LtiPlatform(issuer=issuer, client_id=client_id)
            session.add(row)
        for name, value in urls.items():
            setattr(row, name, value)
        row.deployment_ids, row.auth_audience, row.auto_add_learners = deployments, auth_audience, auto_add_learners
        session.flush()
        return row, added


def platforms(store, issuer=None):
    """The registered platforms (of one issuer), oldest first."""
    with store.session() as session:
        query = select(LtiPlatform).order_by(LtiPlatform.id)
        if issuer is not None:
            query = query.where(LtiPlatform.issuer == issuer)
        return list(session.scalars(query))


def registration(platform, key):
    """pylti1p3's Registration of a stored platform, signing with the tool's key."""
    reg = Registration()
    reg.set_issuer(platform.issuer).set_client_id(platform.client_id)
    reg.set_auth_login_url(platform.auth_login_url).set_auth_token_url(platform.auth_token_url)
    reg.set_key_set_url(platform.key_set_url).set_tool_private_key(key.private_pem)
    reg.set_tool_public_key(jwk.JWK(**key.public_jwk).export_to_pem().decode())
    if platform.auth_audience:
        reg.set_auth_audience(platform.auth_audience)
    return reg


class StoreToolConf(ToolConfAbstract):
    """pylti1p3's tool configuration read from the class database (one issuer may have several client ids)."""

    def __init__(self, store):
        super().__init__()
        self.store = store
        self.issuers_relation_types = {}  # per instance: the class attribute is shared by every ToolConf

    def _platform(self, iss, client_id=None):
        rows = platforms(self.store, iss)
        if client_id is not None:
            rows = [row for row in rows if row.client_id == client_id]
        return rows[0] if len(rows) == 1 or (rows and client_id is not None) else None

    def check_iss_has_one_client(self, iss):
        return False  # always look registrations up by issuer and client id

    def check_iss_has_many_clients(self, iss):
        return True

    def find_registration_by_issuer(self, iss, *args, **kwargs):
        platform = self._platform(iss)
        return registration(platform, tool_key(self.store)) if platform else None

    def find_registration_by_params(self, iss, client_id, *args, **kwargs):
        if client_id is None:  # an OIDC login without client_id: only an issuer with one registration
            return self.find_registration_by_issuer(iss)
        platform = self._platform(iss, client_id)
        return registration(platform, tool_key(self.store)) if platform else None

    def find_deployment(self, iss, deployment_id):
        platform = self._platform(iss)
        return self._deployment(platform, deployment_id)

    def find_deployment_by_params(self, iss, deployment_id, client_id, *args, **kwargs):
        return self._deployment(self._platform(iss, client_id), deployment_id)

    @staticmethod
    def _deployment(platform, deployment_id):
        if platform is None or deployment_id not in platform.deployment_ids:
            return None
        return Deployment().set_deployment_id(deployment_id)
