"""The LMS's entry: an ASGI app (Starlette) beside the Streamlit app, which cannot take the launch POST.

`python -m classroom lti-serve --port 8600 --app-url https://lab.school.edu/`
serves /lti/login (the LMS's OIDC login initiation), /lti/launch (the id_token,
validated by pylti1p3 against the platform's JWKS; its state and nonce are
consumed once) and /lti/jwks (the tool's public key, for the LMS's token
endpoint). A valid launch maps the LMS user to the class roster and answers
with a redirect to a one-time sign-in link of the app (the same links
`python -m classroom links` hands out), so the app signs them in as usual.
Everything refused gets a page saying what went wrong and what to do.
"""

import html

import jwt
from pylti1p3.exception import LtiException, OIDCException
from sqlalchemy import select
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse
from starlette.routing import Route

from course.common.i18n import t

from ..data import roles
from ..data.roster import user_by_email
from ..data.sessions import create_sign_in_link
from ..data.db import Store
from ..data.models import LtiPlatform
from . import accounts, config
from .passback import Http
from .adapters import STATE_MINUTES, LtiCookies, LtiRequest, StoreMessageLaunch, StoreOIDCLogin, StoreSessions

VERIFY = {"verify_aud": False, "require": ["exp", "iat"]}  # aud is checked against the registration's client id
STEPS = ("state", "jwt_format", "nonce", "registration", "jwt_signature", "deployment", "message")


class Refused(Exception):
    """A login or launch refused; `problem` is a key of lti.problems, `fields` fill its text."""

    def __init__(self, problem, status=400, **fields):
        self.problem, self.status, self.fields = problem, status, fields
        super().__init__(f"{problem} {fields}")


def request_lang(request):
    """'zh' when the browser asks for Chinese first, else 'en'."""
    first = request.headers.get("accept-language", "").split(",")[0].strip().lower()
    return "zh" if first.startswith("zh") else "en"


def is_secure(request):
    """Did the browser use https (directly or through a proxy that says so)?"""
    return request.url.scheme == "https" or request.headers.get("x-forwarded-proto", "") == "https"


def refused_page(refused, lang):
    """The page a refused login or launch shows: what happened and what to do."""
    fields = {key: html.escape(str(value)) for key, value in refused.fields.items()}
    message = t(f"lti.problems.{refused.problem}", lang, **fields)
    body = (f"<!doctype html><html lang='{lang}'><meta charset='utf-8'><title>{t('lti.refused_title', lang)}</title>"
            f"<h1>{t('lti.refused_title', lang)}</h1><p id='problem' data-problem='{refused.problem}'>{message}</p>"
            f"<p>{t('lti.start_again', lang)}</p></html>")
    return HTMLResponse(body, status_code=refused.status)


def _platform(store, issuer, client_id):
    """The registered platform of an issuer (and client id, when the LMS gave one); Refused otherwise."""
    rows = config.platforms(store, issuer)
    matching = [row for row in rows if client_id is None or row.client_id == client_id]
    if len(matching) == 1 or (client_id is not None and matching):
        return matching[0]
    if rows:
        raise Refused("audience_wrong", audience=client_id or "?", issuer=issuer)
    raise Refused("issuer_unknown", issuer=issuer or "?")


def login(store, lti_request, launch_url):
    """OIDC login initiation -> a redirect to the platform's authorization endpoint (with the state cookie)."""
    for what in ("iss", "login_hint", "target_link_uri"):
        if not lti_request.get_param(what):
            raise Refused("login_bad", what=what)
    platform = _platform(store, lti_request.get_param("iss"), lti_request.get_param("client_id"))
    cookies = LtiCookies(lti_request)
    oidc = StoreOIDCLogin(lti_request, config.StoreToolConf(store), StoreSessions(lti_request, store), cookies)
    try:
        return oidc.pass_params_to_launch({"platform_id": platform.id}).redirect(launch_url)
    except OIDCException as err:
        raise Refused("login_bad", what=str(err)) from err


def _step_problem(step, err, launch, sessions, store):
    """The Refused of a failed validation step."""
    body = launch._jwt.get("body", {})
    issuer, audience = body.get("iss", "?"), body.get("aud", "?")
    if step == "state":
        return Refused("state_missing" if not launch._get_request_param("state") else "state_cookie")
    if step == "jwt_format":
        return Refused("token_malformed")
    if step == "nonce":
        return Refused(sessions.problem or "nonce_unknown", minutes=STATE_MINUTES)
    if step == "registration":
        known = config.platforms(store, issuer)
        return Refused("audience_wrong", audience=audience, issuer=issuer) if known else \
            Refused("issuer_unknown", issuer=issuer)
    if step == "jwt_signature":
        if isinstance(err.__cause__, jwt.ExpiredSignatureError):
            return Refused("token_expired")
        if "Error during fetch URL" in str(err) or "Must be JSON" in str(err):
            return Refused("key_unreachable", status=502, detail=str(err)[:300])
        return Refused("signature_bad", detail=str(err)[:300])
    if step == "deployment":
        return Refused("deployment_unknown", issuer=issuer,
                       deployment=body.get(accounts.DEPLOYMENT_CLAIM, "?"))
    return Refused("message_type", detail=body.get("https://purl.imsglobal.org/spec/lti/claim/message_type", "?"))


def validate(store, lti_request):
    """pylti1p3's checks one step at a time, each failure told apart -> (claims, platform)."""
    sessions = StoreSessions(lti_request, store)
    launch = StoreMessageLaunch(lti_request, config.StoreToolConf(store), session_service=sessions,
                                cookie_service=LtiCookies(lti_request), requests_session=Http())
    launch.set_auto_validation(False).set_jwt_verify_options(VERIFY)
    for step in STEPS:
        try:
            getattr(launch, f"validate_{step}")()
        except (LtiException, AssertionError) as err:
            raise _step_problem(step, err, launch, sessions, store) from err
    claims = launch.get_launch_data()
    if not launch.is_resource_launch():
        raise Refused("message_type", detail=claims.get("https://purl.imsglobal.org/spec/lti/claim/message_type"))
    with store.session() as session:
        platform = session.scalar(select(LtiPlatform).where(LtiPlatform.issuer == claims["iss"],
                                                            LtiPlatform.client_id == launch.get_client_id()))
    if platform is None or platform.id != sessions.platform_id:
        raise Refused("platform_mismatch")
    return claims, platform


def accept(store, lti_request, app_url):
    """A launch -> a redirect to a one-time sign-in link of the app; Refused says why not."""
    claims, platform = validate(store, lti_request)
    try:
        email, _context = accounts.admit_launch(store, platform, claims)
        user = user_by_email(store, email)
        if user is None:
            raise LookupError(email)
        link, _expires = create_sign_in_link(store, email, roles.landing_url(app_url, user.role))
    except accounts.NotAdmitted as err:
        raise Refused(err.problem, status=403, **err.fields) from err
    except LookupError as err:  # taken off the roster between the two steps
        raise Refused("removed", status=403, email=claims.get("email", "?")) from err
    return RedirectResponse(link, status_code=303)


def create_app(store, app_url, tool_url=None):
    """The Starlette app; `tool_url` is this endpoint's public base URL (default: as the request reached it)."""

    def base(request):
        return (tool_url or str(request.base_url)).rstrip("/")

    async def params(request):
        form = await request.form() if request.method == "POST" else {}
        merged = dict(request.query_params)
        merged.update({key: value for key, value in form.items() if isinstance(value, str)})
        return LtiRequest(merged, request.cookies, is_secure(request))

    async def answer(request, handler, *args):
        lti_request = await params(request)
        try:
            return await run_in_threadpool(handler, store, lti_request, *args)
        except Refused as refused:
            return refused_page(refused, request_lang(request))

    async def login_endpoint(request):
        return await answer(request, login, f"{base(request)}/lti/launch")

    async def launch_endpoint(request):
        return await answer(request, accept, app_url)

    async def jwks_endpoint(request):
        return JSONResponse(await run_in_threadpool(config.tool_jwks, store))

    return Starlette(routes=[Route("/lti/login", login_endpoint, methods=["GET", "POST"]),
                             Route("/lti/launch", launch_endpoint, methods=["POST"]),
                             Route("/lti/jwks", jwks_endpoint, methods=["GET"])])


def serve(url, app_url, host="127.0.0.1", port=8600, tool_url=None):
    """Run the endpoint with uvicorn until stopped."""
    import uvicorn

    store = Store(url)
    config.tool_key(store)  # made before the first request
    uvicorn.run(create_app(store, app_url, tool_url), host=host, port=port, proxy_headers=True,
                forwarded_allow_ips="127.0.0.1", log_level="info")
