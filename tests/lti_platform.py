"""A local LMS for the LTI tests: a real HTTP server (Starlette + uvicorn in a thread) built on lti1p3platform.

It signs RS256 id_tokens with its own key (published at /jwks), runs the
platform side of the OIDC launch, issues access tokens to the tool (checking
the tool's signed client assertion against the tool's /lti/jwks), and keeps
AGS line items and scores and NRPS memberships in memory. `down` makes every
service answer 503; `stop()` and `start()` take the whole server away and back.
"""

import asyncio
import html
import re
import socket
import threading
import time
import uuid
from urllib.parse import urlencode

import jwt
import uvicorn
from jwcrypto import jwk
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.registration import Registration
from lti1p3platform.request import Request as PlatformRequest
from starlette.applications import Starlette
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

LIS = "http://purl.imsglobal.org/vocab/lis/v2/membership"
CONTEXT = "course-1"


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def new_key():
    """(private PEM, public PEM) of a fresh RSA key."""
    key = jwk.JWK.generate(kty="RSA", size=2048)
    return key.export_to_pem(private_key=True, password=None).decode(), key.export_to_pem().decode()


class PlatformConf(LTI1P3PlatformConfAbstract):
    def init_platform_config(self, **kwargs):
        self.registration_ = kwargs["registration"]

    def get_registration_by_params(self, **kwargs):
        return self.registration_


class FormRequest(PlatformRequest):
    def build_metadata(self, request):
        method, params = request
        return {"method": method, "form_data": params, "get_data": params if method == "GET" else {},
                "headers": {}, "content_type": None, "path": "", "json": None}


class Launch(LTIAdvantageMessageLaunchAbstract):
    """The platform's launch: the user, course, AGS and NRPS claims; `tamper` edits the claims or the signer."""

    def __init__(self, request, conf, lms):
        super().__init__(request, conf)
        self.lms = lms

    def get_preflight_response(self):
        return self._request.get_data

    def prepare_launch(self, preflight):
        person = self.lms.people[preflight["login_hint"]]
        self.set_user_data(person["sub"], person["roles"], person["name"], person.get("email"))
        self.set_resource_link_claim("link-1", title="Attention Lab")
        self.set_launch_context_claim(CONTEXT, context_title="Attention 101", context_label="ATT101")
        self.set_ags(f"{self.lms.url}/ags/{CONTEXT}/lineitems")
        self.set_nrps(f"{self.lms.url}/nrps/{CONTEXT}/memberships")

    def generate_launch_request(self):
        message, state = self.get_launch_data()
        message.update(self.lms.tamper.get("claims", {}))
        expiration = self.lms.tamper.get("expiration", self.id_token_expiration)
        key = self.lms.tamper.get("key", self.lms.private_pem)
        now = int(time.time()) + self.lms.tamper.get("clock", 0)
        message.update(iat=now, exp=now + expiration)
        id_token = jwt.encode(message, key, algorithm="RS256", headers={"kid": self.lms.kid})
        return {"state": state, "id_token": id_token}

    def render_launch_form(self, launch_data, **kwargs):
        fields = "".join(f"<input type='hidden' name='{name}' value='{html.escape(launch_data[name])}'>"
                         for name in ("id_token", "state"))
        return HTMLResponse(f"<form id='launch' method='post' action='{launch_data['launch_url']}'>{fields}</form>"
                            "<script>document.getElementById('launch').submit()</script>")


class LocalLms:
    """The platform: `people` by login hint, line items and scores in memory."""

    def __init__(self, tool_url, client_id="tool-client", deployment_id="dep-1"):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.issuer = "https://lms.test"
        self.tool_url, self.client_id, self.deployment_id = tool_url, client_id, deployment_id
        self.private_pem, self.public_pem = new_key()
        self.kid = Registration.get_jwk(self.public_pem)["kid"]
        self.people, self.tamper, self.down, self.delay_s = {}, {}, False, 0.0
        self.line_items, self.scores, self.score_posts, self.token_requests = {}, {}, [], 0
        self.server = self.thread = self.tool_jwks = None
        self.granted = {}  # token -> its claims, checked once (a real LMS looks its opaque tokens up)

    def add_person(self, login, email, role="Learner", name=None):
        role_uri = f"{LIS}/Instructor#TeachingAssistant" if role == "TeachingAssistant" else f"{LIS}#{role}"
        self.people[login] = {"sub": f"lms-{login}", "roles": [role_uri], "name": name or login, "email": email}

    def registration(self):
        reg = Registration().set_iss(self.issuer).set_client_id(self.client_id)
        reg.set_deployment_id(self.deployment_id).set_launch_url(f"{self.tool_url}/lti/launch")
        reg.set_oidc_login_url(f"{self.tool_url}/lti/login").set_tool_key_set_url(f"{self.tool_url}/lti/jwks")
        if self.tool_jwks:  # given instead of fetched (bench/lti.py runs no tool endpoint)
            reg.set_tool_key_set(self.tool_jwks)
        reg.set_platform_public_key(self.public_pem).set_platform_private_key(self.private_pem)
        return reg

    def conf(self):
        return PlatformConf(registration=self.registration())

    def register_args(self):
        """What an instructor passes to `lti-register` for this platform."""
        return dict(issuer=self.issuer, client_id=self.client_id, auth_login_url=f"{self.url}/authorize",
                    auth_token_url=f"{self.url}/token", key_set_url=f"{self.url}/jwks",
                    deployment_ids=[self.deployment_id])

    # ---- the HTTP side ----

    def app(self):
        return Starlette(routes=[
            Route("/start/{login}", self.start_launch), Route("/authorize", self.authorize),
            Route("/jwks", self.jwks), Route("/token", self.token, methods=["POST"]),
            Route("/ags/{context}/lineitems", self.lineitems, methods=["GET", "POST"]),
            Route("/ags/{context}/lineitems/{item}", self.lineitem),
            Route("/ags/{context}/lineitems/{item}/scores", self.post_score, methods=["POST"]),
            Route("/nrps/{context}/memberships", self.memberships), Route("/held", self.held)])

    async def start_launch(self, request):
        """Third-party initiated login: the LMS sends the browser to the tool's login URL."""
        login = request.path_params["login"]
        query = dict(iss=self.issuer, login_hint=login, target_link_uri=f"{self.tool_url}/lti/launch",
                     lti_message_hint="link-1", client_id=self.client_id, lti_deployment_id=self.deployment_id)
        return RedirectResponse(f"{self.tool_url}/lti/login?{urlencode(query)}", status_code=302)

    async def authorize(self, request):
        params = dict(request.query_params)
        if params.get("login_hint") not in self.people:
            return Response("unknown user", status_code=403)
        return Launch(FormRequest(("GET", params)), self.conf(), self).lti_launch()

    async def jwks(self, request):
        return Response(status_code=503) if self.down else JSONResponse({"keys": [Registration.get_jwk(self.public_pem)]})

    async def token(self, request):
        if self.down:
            return Response(status_code=503)
        self.token_requests += 1
        conf = self.conf()
        conf.get_registration()
        try:
            return JSONResponse(conf.get_access_token(dict(await request.form())))
        except Exception as err:  # the tool's assertion does not verify
            return JSONResponse({"error": "invalid_client", "detail": str(err)}, status_code=401)

    def _authorized(self, request, scope):
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        claims = self.granted.get(token)
        if claims is None or claims.get("exp", 0) < time.time():
            try:
                claims = self.granted[token] = jwt.decode(token, self.public_pem, algorithms=["RS256"])
            except jwt.InvalidTokenError:
                return False
        return scope in claims.get("scopes", "").split()

    def _refuse(self, request, scope):
        if self.down:
            return Response(status_code=503)
        if not self._authorized(request, f"https://purl.imsglobal.org/spec/lti-{scope}"):
            return Response(status_code=401)
        return None

    async def lineitems(self, request):
        refused = self._refuse(request, "ags/scope/lineitem")
        if refused:
            return refused
        context = request.path_params["context"]
        if request.method == "POST":
            item = await request.json()
            item["id"] = f"{self.url}/ags/{context}/lineitems/{uuid.uuid4().hex[:8]}"
            self.line_items[item["id"]] = item
            return JSONResponse(item, media_type="application/vnd.ims.lis.v2.lineitem+json")
        items = list(self.line_items.values())
        wanted = request.query_params.get("resource_id")
        return JSONResponse([i for i in items if wanted is None or i.get("resourceId") == wanted])

    async def lineitem(self, request):
        refused = self._refuse(request, "ags/scope/lineitem")
        return refused or JSONResponse(self.line_items[str(request.url).split("?")[0]])

    async def post_score(self, request):
        refused = self._refuse(request, "ags/scope/score")
        if refused:
            return refused
        item = str(request.url).rsplit("/scores", 1)[0]
        if item not in self.line_items:
            return Response(status_code=404)
        score = await request.json()
        if self.delay_s:  # a slow LMS, so that a test can stop the tool mid-push
            await asyncio.sleep(self.delay_s)
        self.score_posts.append((item, score))
        held = self.scores.get((item, score["userId"]))
        if held is None or score["timestamp"] > held["timestamp"]:  # AGS: a score older than the held one is ignored
            self.scores[(item, score["userId"])] = score
        return Response(status_code=200)

    async def memberships(self, request):
        refused = self._refuse(request, "nrps/scope/contextmembership.readonly")
        if refused:
            return refused
        people = sorted(self.people.values(), key=lambda p: p["sub"])
        start, size = int(request.query_params.get("page", 0)), 2
        members = [{"user_id": p["sub"], "roles": p["roles"], "name": p["name"], "email": p.get("email"),
                    "status": p.get("status", "Active")} for p in people[start:start + size]]
        headers = {}
        if start + size < len(people):
            headers["link"] = f'<{self.url}/nrps/{CONTEXT}/memberships?page={start + size}>; rel="next"'
        return JSONResponse({"id": str(request.url), "context": {"id": CONTEXT}, "members": members},
                            headers=headers)

    async def held(self, request):
        """What the LMS holds, for a bench in another process: scores, line items, score posts."""
        return JSONResponse({"scores": [[ex, user, score] for (ex, user), score in self.held_scores().items()],
                             "line_items": len(self.line_items), "score_posts": len(self.score_posts)})


    def held_scores(self):
        """{(exercise id, LMS user id): score given} of the line items' newest scores (a newest score without
        scoreGiven cleared the one before: none held)."""
        resource = {url: item["resourceId"] for url, item in self.line_items.items()}
        return {(resource[item], user): score["scoreGiven"] for (item, user), score in self.scores.items()
                if "scoreGiven" in score}

    # ---- running ----

    def start(self):
        self.server = ServerThread(self.app(), self.port).start()
        return self

    def stop(self):
        self.server.stop()


class ServerThread:
    """An ASGI app served by uvicorn on 127.0.0.1:port in a thread of this process."""

    def __init__(self, app, port):
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self):
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the server did not start")
            time.sleep(0.02)
        return self

    def stop(self):
        self.server.should_exit = True
        self.thread.join(20)


def serve_for_bench(tool_jwks_json, port_file):
    """Run a LocalLms until killed, for bench/lti.py: its URL and issuer go to port_file (JSON)."""
    import json
    from pathlib import Path

    lms = LocalLms("http://127.0.0.1:9")
    lms.tool_jwks = json.loads(tool_jwks_json)
    lms.start()
    Path(port_file).write_text(json.dumps(dict(lms.register_args(), url=lms.url)))
    lms.server.thread.join()


def launch_form(html_text):
    """(action, {id_token, state}) of the platform's auto-submitting launch form."""
    action = re.search(r"action='([^']+)'", html_text).group(1)
    fields = dict(re.findall(r"name='(\w+)' value='([^']*)'", html_text))
    return action, {key: html.unescape(value) for key, value in fields.items()}
