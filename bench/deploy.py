"""Class mode as containers, end to end on this machine: build, start, sign in through the proxy, grade one file.

    python bench/deploy.py [--workers 2] [--keep]

Builds the image of deploy/container/Containerfile with podman on a Debian bookworm base it bootstraps locally
(mmdebstrap; this machine reaches no container registry), and stand-ins for the postgres and caddy images
(bench/container/); starts the services of deploy/container/compose.yaml (read with PyYAML: the one description
of the stack) in one podman pod, where every service's name resolves to the pod's own address, as on a compose
network; initialises the class; signs a learner in with a one-time link in headless Chromium, over https
through Caddy (its own local certificate authority: the browser is told to accept it); submits
solutions/ex01 as that learner with `python -m classroom submit`, and waits for its verdict, in the status
command and on the learner's page (the websocket through the proxy). Prints each step's time and the image
size. Root, podman, runc, mmdebstrap and Chromium needed (apt-get install podman runc mmdebstrap). Not part of
the test suite; tests/test_container_deploy.py checks the files statically.

This machine's kernel mounts cgroup v1 beside a v2 hierarchy holding a controller (crun refuses that "hybrid"
layout) and takes CAP_SYS_RESOURCE from root (podman's default rlimits cannot be set): the script writes a
containers.conf choosing runc and rlimits below the machine's, for its own podman calls only (CONTAINERS_CONF).
"""

import argparse
import csv
import io
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
import ssl
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
STACK = ROOT / "deploy" / "container"
BENCH = ROOT / "bench" / "container"
POD = "attention-lab"
BASE = "localhost/debian-base"
LEARNER = "ann@class.test"
INSTRUCTOR = "teacher@class.test"
TIMES = []


def step(name):
    """Time a step: `with step("build"): ...`, printed as it ends."""
    class Timer:
        def __enter__(self):
            self.start = time.monotonic()
            print(f"-- {name} ...", flush=True)

        def __exit__(self, kind, *_):
            took = time.monotonic() - self.start
            TIMES.append((name, took, kind is None))
            print(f"-- {name}: {took:.1f} s{'' if kind is None else ' (FAILED)'}", flush=True)
    return Timer()


def sh(*args, check=True, capture=True, env=None, timeout=1800, input=None):
    result = subprocess.run([str(a) for a in args], capture_output=capture, text=True, env=env, timeout=timeout,
                            input=input)
    if check and result.returncode != 0:
        raise SystemExit(f"failed ({result.returncode}): {' '.join(map(str, args))}\n{result.stdout}\n{result.stderr}")
    return result


def podman(*args, **kwargs):
    return sh("podman", *args, **kwargs)


def interpolate(value, env):
    """compose's ${VAR}, ${VAR:-default} in every string of value."""
    if isinstance(value, str):
        return re.sub(r"\$\{(\w+)(?::-([^}]*))?\}", lambda m: env.get(m.group(1)) or (m.group(2) or ""), value)
    if isinstance(value, list):
        return [interpolate(v, env) for v in value]
    if isinstance(value, dict):
        return {k: interpolate(v, env) for k, v in value.items()}
    return value


def load_stack(env):
    """compose.yaml's services, anchors merged and variables filled in from env."""
    data = yaml.safe_load((STACK / "compose.yaml").read_text())
    return interpolate(data["services"], env), list(data.get("volumes", {}))


def bootstrap_base(work):
    if podman("image", "exists", BASE, check=False).returncode == 0:
        print(f"   {BASE} exists")
        return
    tar = work / "base.tar"
    sh("mmdebstrap", "--variant=minbase", "bookworm", tar, "http://deb.debian.org/debian")
    podman("import", tar, BASE)


def host_wheels():
    """The CPU torch wheel and every other requirement as wheels, built by this machine's pip (its index,
    its local torch), for an offline image build."""
    wheels = STACK / "wheels"
    if not list(wheels.glob("torch-2.13.0*cpu*.whl")):
        sh(sys.executable, "-m", "pip", "wheel", "-q", "-r", ROOT / "requirements-class.txt", "-w", wheels)


def run_args(name, service, env_file, project):
    """podman run options for one compose service in the pod."""
    args = ["--pod", POD, "--name", name, "--env-file", env_file, "--detach"]
    for key, value in (service.get("environment") or {}).items():
        args += ["--env", f"{key}={value}"]
    if service.get("user"):
        args += ["--user", service["user"]]
    for opt in service.get("security_opt") or []:
        args += ["--security-opt", opt]
    for cap in service.get("cap_add") or []:
        args += ["--cap-add", cap]
    if service.get("mem_limit"):
        args += ["--memory", service["mem_limit"]]
    if service.get("pids_limit"):
        args += ["--pids-limit", str(service["pids_limit"])]
    if service.get("stop_grace_period"):
        args += ["--stop-timeout", str(int(service["stop_grace_period"].rstrip("s")))]
    for key, limit in (service.get("ulimits") or {}).items():
        args += ["--ulimit", f"{key}={limit['soft']}:{limit['hard']}"]
    if service.get("stop_signal"):
        args += ["--stop-signal", service["stop_signal"]]
    for volume in service.get("volumes") or []:
        source, rest = volume.split(":", 1)
        if source.startswith("."):
            source = str((STACK / source).resolve())
        else:
            source = f"{project}_{source}"
        args += ["--volume", f"{source}:{rest}"]
    return args


def command_of(service):
    command = service.get("command") or []
    return command if isinstance(command, list) else command.split()


def start_service(name, service, env_file, project, index=None):
    container = f"{project}-{name}" + (f"-{index}" if index is not None else "")
    podman("run", *run_args(container, service, env_file, project), service["image"], *command_of(service))
    return container


def wait_for(what, check, timeout=180, every=1.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(every)
    raise SystemExit(f"timed out waiting for {what}")


def https_ok(url):
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with urllib.request.urlopen(url, context=context, timeout=5) as answer:
            return answer.status, answer.read().decode(errors="replace")
    except Exception as err:  # a stack that is still starting answers anything, or nothing
        return None, str(err)


def cli(services, env_file, project, *args):
    """`python -m classroom ARGS` in a one-off container of the cli service (as `compose run --rm cli ...`)."""
    service = dict(services["cli"])
    name = f"{project}-cli-{secrets.token_hex(3)}"
    options = [a for a in run_args(name, service, env_file, project) if a != "--detach"]
    return podman("run", "--rm", *options, service["image"], "python", "-m", "classroom", *args)


def psql(project, query):
    return podman("exec", f"{project}-postgres", "psql", "-U", "lab", "-d", "lab", "-At", "-c", query).stdout.strip()


def exec_classroom(container, *args):
    return podman("exec", container, "python", "-m", "classroom", *args)


def browser(https_port):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    from tests.browser_support import CHROMIUM_FLAGS, LOCALES, require_browser

    chromium, driver_path = require_browser()
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument("--ignore-certificate-errors")  # Caddy's local authority for localhost
    options.add_argument(f"--user-data-dir={tempfile.mkdtemp(prefix='deploy-chromium-')}")
    options.add_argument(f"--lang={LOCALES['en']}")
    options.add_experimental_option("prefs", {"intl.accept_languages": LOCALES["en"]})
    return webdriver.Chrome(service=Service(driver_path), options=options)


def teardown(project, volumes):
    podman("pod", "rm", "--force", "--ignore", POD, check=False)
    for volume in volumes:
        podman("volume", "rm", "--force", f"{project}_{volume}", check=False)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=2, help="worker containers (compose's replicas)")
    parser.add_argument("--https-port", type=int, default=8443)
    parser.add_argument("--http-port", type=int, default=8080)
    parser.add_argument("--keep", action="store_true", help="leave the stack running at the end")
    parser.add_argument("--cold", action="store_true", help="build every image layer again (--no-cache): the "
                        "build time of a first build")
    args = parser.parse_args()
    if os.geteuid() != 0 or not shutil.which("podman"):
        raise SystemExit("needs root and podman (apt-get install podman runc mmdebstrap)")

    work = Path(tempfile.mkdtemp(prefix="attention-lab-deploy-"))
    conf = work / "containers.conf"
    conf.write_text('[containers]\ndefault_ulimits = ["nofile=16384:16384", "nproc=8192:8192"]\n'
                    '[engine]\nruntime = "runc"\n')
    os.environ["CONTAINERS_CONF"] = str(conf)
    password = secrets.token_urlsafe(24)
    env_file = work / "class.env"
    env_file.write_text(f"POSTGRES_PASSWORD={password}\n"
                        f"ATTENTION_LAB_CLASS_DB=postgresql://lab:{password}@postgres/lab\n")
    env_file.chmod(0o600)
    env = {"LAB_IMAGE": "localhost/attention-lab", "POSTGRES_IMAGE": "localhost/attention-lab-postgres",
           "CADDY_IMAGE": "localhost/attention-lab-caddy", "LAB_HOST": "localhost",
           "HTTPS_PORT": str(args.https_port), "HTTP_PORT": str(args.http_port), "WORKERS": str(args.workers)}
    services, volumes = load_stack(env)
    project = "attention-lab"
    base = f"https://localhost:{args.https_port}"

    with step("base image (mmdebstrap bookworm minbase, podman import)"):
        bootstrap_base(work)
    with step("wheels on the host (pip wheel, the local CPU torch)"):
        host_wheels()
    with step("build the class image"):
        podman("build", *(["--no-cache"] if args.cold else []), "-f", STACK / "Containerfile",
               "--build-arg", f"BASE={BASE}", "--build-arg", "TORCH_INDEX=",
               "--build-arg", "PIP_OPTIONS=--no-index", "-t", env["LAB_IMAGE"], ROOT, timeout=3600)
    size = int(podman("image", "inspect", "--format", "{{.Size}}", env["LAB_IMAGE"]).stdout.strip())
    print(f"   image {env['LAB_IMAGE']}: {size / 1e6:.0f} MB")
    with step("build the postgres and caddy stand-ins"):
        for what in ("postgres", "caddy"):
            podman("build", "-f", BENCH / f"{what}.Containerfile", "--build-arg", f"BASE={BASE}",
                   "-t", env[f"{what.upper()}_IMAGE"], BENCH)

    teardown(project, volumes)
    try:
        with step("start the stack (pod, postgres, init, app, workers, lti, metrics, caddy) until https answers"):
            ports = []
            for mapping in services["caddy"].get("ports", []):
                ports += ["--publish", mapping]
            hosts = [a for name in services for a in ("--add-host", f"{name}:127.0.0.1")]
            podman("pod", "create", "--name", POD, *ports, *hosts)
            for volume in volumes:
                podman("volume", "create", f"{project}_{volume}")
            start_service("postgres", services["postgres"], env_file, project)
            wait_for("postgres", lambda: podman("exec", f"{project}-postgres", "pg_isready", "-h", "127.0.0.1",
                                                "-U", "lab", check=False).returncode == 0)
            cli(services, env_file, project, "init", "--instructor", INSTRUCTOR, "--name", "Ada Lovelace")
            cli(services, env_file, project, "upgrade", "--skip-mutants")
            roster = "email,name,role\n" + f"{LEARNER},Ann Learner,learner\n"
            (work / "roster.csv").write_text(roster)
            podman("run", "--rm", "--pod", POD, "--env-file", env_file, "-v", f"{work / 'roster.csv'}:/tmp/roster.csv:ro",
                   env["LAB_IMAGE"], "python", "-m", "classroom", "roster", "import", "/tmp/roster.csv")
            running = []
            for name, service in services.items():
                if name in ("postgres", "cli") or "cli" in (service.get("profiles") or []):
                    continue
                replicas = int((service.get("deploy") or {}).get("replicas", 1))
                for index in range(replicas):
                    running.append(start_service(name, service, env_file, project, index if replicas > 1 else None))
            wait_for("the app through Caddy", lambda: https_ok(f"{base}/_stcore/health")[1] == "ok")
            wait_for("lti-serve's key set through Caddy", lambda: https_ok(f"{base}/lti/jwks")[0] == 200)
        states = podman("ps", "--pod", "--filter", f"pod={POD}", "--format", "{{.Names}} {{.Status}}").stdout
        print(states)
        metrics = podman("exec", f"{project}-metrics", "python", "-c",
                         "import urllib.request;print(urllib.request.urlopen('http://127.0.0.1:9464/metrics')"
                         ".read().decode())").stdout
        print(f"   metrics: {len(metrics.splitlines())} lines")

        from selenium.webdriver.common.by import By

        from course.common.i18n import t
        from tests.browser_support import main_text, wait_for_text, wait_until_rendered
        from tests.classroom_support import solution
        from tests.exercise_variant_support import personalise
        from tests.test_classroom_browser import _choose_exercise  # the test's own way of picking an exercise

        driver = browser(args.https_port)
        try:
            with step("sign the learner in by link, in Chromium, over https through Caddy"):
                links = exec_classroom(f"{project}-metrics", "links", "--email", LEARNER, "--base-url",
                                       f"{base}/practice").stdout
                link = next(csv.DictReader(io.StringIO(links)))["link"]
                driver.get(link)
                wait_until_rendered(driver)
                wait_for("the session cookie", lambda: driver.get_cookie("attention_lab_session") is not None, 60)
                title = driver.find_elements(By.CSS_SELECTOR, "h1")[0].text
                assert title == t("classroom.practice_title", "en"), title
                assert driver.get_cookie("attention_lab_session")["secure"], "the session cookie is not Secure"
            with step("upload solutions/ex01 (in the learner's variant) on the page, submit, see the verdict"):
                _choose_exercise(driver, "en", "ex01")  # its first view assigns the learner's variant
                number = int(psql(project, "select v.variant from variant_assignments v join users u on "
                                  f"u.id = v.user_id where u.email = '{LEARNER}' and v.exercise_id = 'ex01'"))
                upload = work / "ex01_softmax.py"
                upload.write_text(personalise(solution("ex01"), "ex01", number))
                uploader = '.st-key-practice_class_upload_ex01 [data-testid="stFileUploaderDropzoneInput"]'
                wait_for("ex01's uploader", lambda: driver.find_elements(By.CSS_SELECTOR, uploader), 60)
                driver.find_element(By.CSS_SELECTOR, uploader).send_keys(str(upload))
                wait_for_text(driver, t("classroom.upload_wins", "en", ex_id="ex01"))
                driver.find_element(By.CSS_SELECTOR, '[data-testid="stBaseButton-primary"]').click()
                wait_for("the submit's acknowledgement", lambda: driver.find_elements(
                    By.CSS_SELECTOR, '[data-testid="stAlertContentSuccess"]'), 60)
                submission = int(psql(project, "select s.id from submissions s join users u on u.id = s.user_id "
                                               f"where u.email = '{LEARNER}' and s.filename = '{upload.name}'"))
                wait_for_text(driver, t("classroom.feedback_title", "en", id=submission), timeout=600)
                wait_for_text(driver, t("classroom.score", "en", score="100").replace("**", ""), timeout=600)
                shown = main_text(driver)
                verdict = shown[shown.index(t("classroom.feedback_title", "en", id=submission)):]
                print("   page:", " ".join(verdict.split())[:300])
            result = psql(project, "select status, sandbox, score, run_s, grading_s from results "
                                   f"where submission_id = {submission} order by id desc limit 1")
            print(f"   variant {number}; result (status|sandbox|score|run_s|grading_s): {result}")
            if not result.startswith("passed|strict|1|"):
                raise SystemExit(f"the reference in the learner's variant was not passed in the strict sandbox: "
                                 f"{result}\n{psql(project, 'select summary from results')}")
            worker = podman("logs", f"{project}-worker-0" if args.workers > 1 else f"{project}-worker")
            said = (worker.stdout + worker.stderr).splitlines()
            print("   worker log:", " | ".join(line for line in said if "sandbox" in line or "cgroup" in line)[:400])
            with step("submit it again with `python -m classroom submit --as` and wait for its verdict"):
                podman("cp", upload, f"{project}-metrics:/tmp/{upload.name}")
                said = exec_classroom(f"{project}-metrics", "submit", "--as", LEARNER, "--lang", "en", "ex01",
                                      f"/tmp/{upload.name}").stdout
                again = int(re.search(r"\d+", said).group())
                state = {}

                def graded():
                    state.update(json.loads(exec_classroom(f"{project}-metrics", "status", "--json",
                                                           "--submission", str(again)).stdout))
                    return state.get("submission", {}).get("state") == "finished"
                wait_for("the verdict", graded, timeout=600, every=0.5)
            result = psql(project, f"select status, sandbox, score from results where submission_id = {again}")
            print(f"   result (status|sandbox|score): {result}")
            if result != "passed|strict|1":
                raise SystemExit(f"the command line's submission was not passed in the strict sandbox: {result}")
        finally:
            driver.quit()
    finally:
        if args.keep:
            print(f"   left running: pod {POD}; its env file (the database password) is {env_file}")
        else:
            teardown(project, volumes)
            shutil.rmtree(work, ignore_errors=True)
    print("\nstep times:")
    for name, took, ok in TIMES:
        print(f"  {took:7.1f} s  {name}{'' if ok else '  FAILED'}")
    print(f"  image size: {size / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
