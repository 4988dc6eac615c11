"""Class mode behind the nginx recipe (deploy/nginx/attention-lab.conf), over https in headless Chromium.

The recipe itself is rendered (its host name, certificate, ports and webroot swapped for this test's; nothing else
changed) and run by Debian's nginx from a folder of its own, in front of `streamlit run class_app.py` and
`python -m classroom lti-serve` on loopback ports; a local LMS launches through it. The class's host name,
attention-lab.test, reaches the proxy through Chromium's resolver rules (and a Host header in the Python clients),
so the proxy's forwarded host is checked as a real name's would be; Chromium trusts the test's self-signed
certificate by its key alone. lti-serve runs without --tool-url: its launch URL is built from what the proxy
forwards. Skipped without nginx (apt-get install -y nginx), except in CI (ATTENTION_LAB_REQUIRE_NGINX=1).
"""

import base64
import contextlib
import datetime
import hashlib
import ipaddress
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import pytest

from classroom.data.sessions import create_sign_in_link
from classroom.lti import config
from course.common.i18n import t
from tests.browser_support import ROOT, free_port, main_text, new_driver, require_browser, running_app, wait_for, \
    wait_for_text, wait_until_rendered
from tests.classroom_support import make_class
from tests.lti_platform import LocalLms

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

RECIPE = ROOT / "deploy" / "nginx" / "attention-lab.conf"
HOST = "attention-lab.test"  # the class's host name here (the recipe's lab.school.edu)
UPGRADE_LINES = ("proxy_set_header Upgrade $http_upgrade;", "proxy_set_header Connection $attention_lab_connection;")
START_S = 30  # for nginx or lti-serve to answer


def require_nginx():
    """nginx's path; skip without it, but fail in CI, which must run these tests."""
    found = shutil.which("nginx", path=f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin")
    if found is None:
        problem = "nginx is not installed (apt-get install -y nginx)"
        if os.environ.get("CI") == "true" or os.environ.get("ATTENTION_LAB_REQUIRE_NGINX") == "1":
            pytest.fail(f"CI must run the proxy tests, but {problem}")
        pytest.skip(problem)
    return found


def self_signed(folder):
    """A day's self-signed certificate for HOST (and 127.0.0.1) -> (certificate path, key path, base64 SHA-256 of
    its public key, as Chromium's --ignore-certificate-errors-spki-list takes it)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, HOST)])
    now = datetime.datetime.now(datetime.timezone.utc)
    names = x509.SubjectAlternativeName([x509.DNSName(HOST), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1)).add_extension(names, critical=False)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    spki = key.public_key().public_bytes(serialization.Encoding.DER,
                                         serialization.PublicFormat.SubjectPublicKeyInfo)
    return cert_path, key_path, base64.b64encode(hashlib.sha256(spki).digest()).decode()


def render(text, edits):
    """The recipe with each (old, new) of `edits` replaced, in order; every `old` must be in it."""
    for old, new in edits:
        assert old in text, f"{RECIPE.relative_to(ROOT)} has no {old!r} any more: update this test's rendering"
        text = text.replace(old, new)
    return text


def recipe_for(site, edits=()):
    """The recipe rendered for this test's `site` (ports, certificate, webroot), then `edits` (a variant)."""
    return render(render(RECIPE.read_text(), [
        ("/etc/letsencrypt/live/lab.school.edu/fullchain.pem", str(site["cert"])),
        ("/etc/letsencrypt/live/lab.school.edu/privkey.pem", str(site["key"])),
        ("lab.school.edu", HOST),
        ("listen 443 ssl;", f"listen 127.0.0.1:{site['https']} ssl;"), ("listen [::]:443 ssl;", ""),
        ("listen 80;", f"listen 127.0.0.1:{site['http']};"), ("listen [::]:80;", ""),
        ("https://$host$request_uri", f"https://$host:{site['https']}$request_uri"),  # not on 443 here
        ("server 127.0.0.1:8501;", f"server 127.0.0.1:{site['app']};"),
        ("server 127.0.0.1:8600;", f"server 127.0.0.1:{site['lti']};"),
        ("root /var/www/html;", f"root {site['webroot']};"),
    ]), edits)


# What Debian's /etc/nginx/nginx.conf is to the recipe (it includes sites-enabled/ inside http {}), with every path
# in the folder; as root, the workers run as root too, since they write the temporary files there.
MAIN_CONF = """{user}worker_processes 1;
events {{ worker_connections 256; }}
http {{
    access_log {folder}/access.log;
    client_body_temp_path {folder}/client_body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
    include {folder}/attention-lab.conf;
}}
"""


class Nginx:
    """nginx (`binary`) serving `site_text` from `folder`, in the foreground until stop()."""

    def __init__(self, binary, folder, site_text, https_port):
        folder.mkdir()
        self.folder, self.https_port = folder, https_port
        (folder / "attention-lab.conf").write_text(site_text)
        (folder / "nginx.conf").write_text(MAIN_CONF.format(user="user root;\n" if os.geteuid() == 0 else "",
                                                            folder=folder))
        self.command = [binary, "-p", str(folder), "-c", str(folder / "nginx.conf"), "-e", str(folder / "error.log")]
        checked = subprocess.run([*self.command, "-t"], capture_output=True, text=True, timeout=60)
        assert checked.returncode == 0, f"nginx -t refused the rendered recipe:\n{checked.stderr}"
        self.child = subprocess.Popen([*self.command, "-g", f"daemon off; pid {folder / 'nginx.pid'};"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + START_S
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", https_port), timeout=1):
                return
            if self.child.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"nginx did not start (exit {self.child.returncode}):\n{self.log('error.log')}")
            time.sleep(0.05)

    def log(self, name):
        path = self.folder / name
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self):
        if self.child.poll() is None:
            self.child.terminate()  # SIGTERM: nginx's fast shutdown, its workers too
            try:
                self.child.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.child.kill()
                self.child.wait()


def site_ports(tmp):
    """Fresh https and http ports, the certificate and the webroot of one rendering (the upstreams added later)."""
    return {"https": free_port(), "http": free_port(), "cert": tmp["cert"], "key": tmp["key"],
            "webroot": tmp["webroot"]}


@contextlib.contextmanager
def lti_serve(url, app_url, port):
    """`python -m classroom lti-serve` on 127.0.0.1:port (as deploy/attention-lab-lti-serve.service, but without
    --tool-url), until the block ends."""
    env = dict(os.environ, ATTENTION_LAB_CLASS_DB=url)
    with tempfile.TemporaryFile("w+") as log:
        child = subprocess.Popen([sys.executable, "-m", "classroom", "lti-serve", "--app-url", app_url,
                                  "--port", str(port)], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + START_S
            while True:
                with contextlib.suppress(OSError):
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/lti/jwks", timeout=2) as answer:
                        if answer.status == 200:
                            break
                if child.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    pytest.fail(f"lti-serve did not answer (exit {child.poll()}):\n{log.read()}")
                time.sleep(0.1)
            yield
        finally:
            child.terminate()
            try:
                child.wait(timeout=20)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


@pytest.fixture(scope="module")
def proxied(tmp_path_factory):
    """The class behind the recipe: {origin, site, store, lms, nginx binary, nginx, tmp, ...}."""
    require_browser()
    binary = require_nginx()
    folder = tmp_path_factory.mktemp("proxy")
    cert, key, spki = self_signed(folder)
    webroot = folder / "webroot"
    (webroot / ".well-known" / "acme-challenge").mkdir(parents=True)
    tmp = {"cert": cert, "key": key, "webroot": webroot}
    site = dict(site_ports(tmp), lti=free_port())
    origin = f"https://{HOST}:{site['https']}"
    url = f"sqlite:///{folder / 'class.db'}"
    store = make_class(url, folder)
    lms = LocalLms(origin).start()  # the LMS knows the tool by the proxy's origin only
    lms.add_person("ann", "ann@class.test")
    config.register_platform(store, **lms.register_args())
    env = dict(os.environ, ATTENTION_LAB_HOME=str(folder / "home"), ATTENTION_LAB_CLASS_DB=url)
    with contextlib.ExitStack() as stack:
        stack.callback(store.close)
        stack.callback(lms.stop)
        app = stack.enter_context(running_app(env, script="class_app.py"))
        site["app"] = int(app.rsplit(":", 1)[1])
        stack.enter_context(lti_serve(url, origin, site["lti"]))  # the root: a learner lands on Practice
        nginx = Nginx(binary, folder / "nginx", recipe_for(site), site["https"])
        stack.callback(nginx.stop)
        yield {"origin": origin, "site": site, "store": store, "lms": lms, "binary": binary, "nginx": nginx,
               "tmp": tmp, "folder": folder, "spki": spki}


@pytest.fixture(scope="module")
def chromium(proxied):
    """A headless Chromium that finds HOST on 127.0.0.1 and trusts the test's certificate (its key only)."""
    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    driver = new_driver("en", profile, f"--host-resolver-rules=MAP {HOST} 127.0.0.1",
                        f"--ignore-certificate-errors-spki-list={proxied['spki']}")
    yield driver
    with contextlib.suppress(Exception):
        driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def tls_context(proxied):
    """A client TLS context that trusts the test's certificate, and nothing else."""
    return ssl.create_default_context(cafile=str(proxied["tmp"]["cert"]))


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def fetch(url, host, context=None):
    """(status, headers, body) of a GET of `url` (an address on 127.0.0.1) sent with Host `host`, redirects not
    followed."""
    opener = urllib.request.build_opener(NoRedirect, urllib.request.HTTPSHandler(context=context))
    request = urllib.request.Request(url, headers={"Host": host})
    try:
        with opener.open(request, timeout=30) as answer:
            return answer.status, answer.headers, answer.read()
    except urllib.error.HTTPError as err:
        return err.code, err.headers, err.read()


def test_plain_http_is_sent_to_https_and_serves_only_certbots_challenges(proxied):
    site = proxied["site"]
    http_host = f"{HOST}:{site['http']}"
    status, headers, _ = fetch(f"http://127.0.0.1:{site['http']}/practice?lang=zh", http_host)
    assert (status, headers["Location"]) == (301, f"{proxied['origin']}/practice?lang=zh")
    status, headers, _ = fetch(f"http://127.0.0.1:{site['http']}/lti/login", http_host)
    assert (status, headers["Location"]) == (301, f"{proxied['origin']}/lti/login")  # the LMS's URLs too
    (proxied["tmp"]["webroot"] / ".well-known" / "acme-challenge" / "probe-1").write_text("the challenge's answer")
    status, _, body = fetch(f"http://127.0.0.1:{site['http']}/.well-known/acme-challenge/probe-1", http_host)
    assert (status, body) == (200, b"the challenge's answer")  # a Let's Encrypt renewal reads it over http
    status, headers, body = fetch(f"https://127.0.0.1:{site['https']}/_stcore/health", f"{HOST}:{site['https']}",
                                  tls_context(proxied))
    assert (status, body) == (200, b"ok")  # the app, over https
    assert headers["Strict-Transport-Security"] == "max-age=31536000"
    status, _, body = fetch(f"https://127.0.0.1:{site['https']}/lti/jwks", f"{HOST}:{site['https']}",
                            tls_context(proxied))
    assert status == 200 and b'"keys"' in body  # lti-serve, under /lti/


def open_stream(proxied, port):
    """A websocket to /_stcore/stream through the proxy on `port`, as the app's page opens it (its origin)."""
    from websockets.sync.client import connect

    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    return connect(f"wss://{HOST}:{port}/_stcore/stream", sock=sock, ssl=tls_context(proxied), server_hostname=HOST,
                   origin=f"https://{HOST}:{port}", open_timeout=20)


def open_and_still_open(proxied, port):
    """Did the websocket open through the proxy on `port` and stay open (the app did not close it at once)?
    -> (status code of the handshake, close code or None)"""
    from websockets.exceptions import ConnectionClosed, InvalidStatus

    try:
        stream = open_stream(proxied, port)
    except InvalidStatus as err:
        return err.response.status_code, None
    with stream:
        try:
            stream.recv(timeout=1.0)  # the app says nothing until the page asks; a refusal closes it at once
        except TimeoutError:
            return stream.response.status_code, None
        except ConnectionClosed as closed:
            return stream.response.status_code, closed.rcvd.code if closed.rcvd else -1
    return stream.response.status_code, None


def test_the_websocket_passes_the_recipe_and_fails_without_its_upgrade_or_host_headers(proxied, tmp_path):
    assert open_and_still_open(proxied, proxied["site"]["https"]) == (101, None)
    variants = {  # the recipe with one of its lines taken out or changed
        "no upgrade": [(line, "") for line in UPGRADE_LINES],
        "host without its port": [("proxy_set_header Host $http_host;", "proxy_set_header Host $host;")],
    }
    seen = {}
    for name, edits in variants.items():
        site = dict(proxied["site"], **site_ports(proxied["tmp"]))
        nginx = Nginx(proxied["binary"], tmp_path / name.replace(" ", "-"), recipe_for(site, edits), site["https"])
        try:
            seen[name] = open_and_still_open(proxied, site["https"])
        finally:
            nginx.stop()
    assert seen["no upgrade"][0] != 101, seen  # never upgraded: the page would wait for its connection forever
    # Streamlit refuses a websocket whose Origin is not the Host it was sent (uvicorn answers its refusal 403)
    assert seen["host without its port"] == (403, None), seen


def session_cookie(driver):
    """The class session cookie, once the page has had it set (as Chromium keeps it: secure, httpOnly, ...)."""
    return wait_for(driver, lambda d: (d.get_cookie("attention_lab_session") or {}).get("value") and
                    d.get_cookie("attention_lab_session"), "no session cookie was set", 60)


def assert_secure_session(driver):
    cookie = session_cookie(driver)
    assert (cookie["secure"], cookie["httpOnly"], cookie["sameSite"]) == (True, True, "Strict"), cookie
    assert "attention_lab_session" not in driver.execute_script("return document.cookie")


def test_a_learner_signs_in_through_the_proxy_and_uploads_a_file_of_the_apps_largest_size(proxied, chromium,
                                                                                          tmp_path):
    from selenium.webdriver.common.by import By

    driver, origin, site = chromium, proxied["origin"], proxied["site"]
    driver.get(f"http://{HOST}:{site['http']}/")  # plain http in the browser ends on https
    wait_for(driver, lambda d: d.current_url == f"{origin}/", "http was not sent to https")
    driver.delete_all_cookies()
    link, _ = create_sign_in_link(proxied["store"], "cy@class.test", f"{origin}/practice")
    driver.get(link)
    wait_until_rendered(driver)  # drawn by the app's script, over the websocket through the proxy
    wait_for_text(driver, t("classroom.practice_title", "en"))
    assert driver.current_url.startswith(f"{origin}/practice") and "token=" not in driver.current_url
    assert_secure_session(driver)
    big = tmp_path / "ex00_big.py"
    big.write_bytes(b"#" * (64_000_000 - 1) + b"\n")  # the uploader's largest file (nginx's default takes 1 MB)
    uploader = '.st-key-practice_class_upload_ex00 [data-testid="stFileUploaderDropzoneInput"]'
    wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, uploader), "no uploader of ex00", 60)
    driver.find_element(By.CSS_SELECTOR, uploader).send_keys(str(big))
    too_big = t("classroom.upload_too_big", "en", mb="64.0", limit=1)  # the app saw the whole file, and said so
    wait_for(driver, lambda d: too_big in main_text(d), lambda: f"no word of the file's size:\n{main_text(driver)}",
             120)
    big.unlink()  # (64 MB: not left for pytest to keep)


def test_an_lms_launch_through_the_proxy_lands_signed_in(proxied, chromium):
    driver, origin, lms = chromium, proxied["origin"], proxied["lms"]
    driver.delete_all_cookies()
    driver.get(f"{lms.url}/start/ann")  # the LMS sends the browser to {origin}/lti/login, then posts the launch
    wait_for(driver, lambda d: d.current_url.startswith(f"{origin}/practice"),
             lambda: f"the launch did not reach the app; the page shows:\n{driver.page_source[:2000]}")
    wait_until_rendered(driver)
    wait_for_text(driver, t("classroom.practice_title", "en"))
    assert "token=" not in driver.current_url
    assert_secure_session(driver)
    served = proxied["nginx"].log("access.log")
    assert '"GET /lti/login?' in served and '"POST /lti/launch HTTP/1.1" 303' in served  # through the proxy
