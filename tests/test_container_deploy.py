"""The container recipe (deploy/container/) holds together without building it: compose.yaml parses, every
service runs a real `python -m classroom` command (parsed by the CLI's own parser) or the app, the proxy routes to
the ports the services listen on, the worker gets only the privileges its comment names, and every path the
Containerfile copies or mounts exists and is not left out of the build context. bench/deploy.py builds and runs it."""

import fnmatch
import re
import subprocess

import pytest
import yaml

from tests.classroom_support import ROOT

STACK = ROOT / "deploy" / "container"


@pytest.fixture(scope="module")
def services():
    return yaml.safe_load((STACK / "compose.yaml").read_text())["services"]


def _option(command, flag):
    return command[command.index(flag) + 1]


def _class_services(services):
    return {name: s for name, s in services.items() if name not in ("postgres", "caddy")}


def test_every_class_service_runs_a_real_classroom_command_or_the_app(services):
    from classroom.cli import build_parser
    from streamlit import config

    commands = {name: s["command"] for name, s in _class_services(services).items()}
    assert set(commands) >= {"app", "worker", "lti-serve", "lti-sync", "metrics", "cli"}, commands
    for name, command in commands.items():
        assert isinstance(command, list), f"{name}: a list, so that no shell splits it"
        if name == "app":
            assert command[:3] == ["streamlit", "run", "class_app.py"] and (ROOT / "class_app.py").is_file()
            flags = command[3::2]
            assert flags and all(f.startswith("--") for f in flags), flags
            for flag in flags:
                config.get_option(flag[2:])  # raises for an option Streamlit does not have
            continue
        assert command[:3] == ["python", "-m", "classroom"], (name, command)
        try:
            parsed = build_parser().parse_args(command[3:])
        except SystemExit as err:
            raise AssertionError(f"{name}: `{' '.join(command)}` is refused by the CLI") from err
        assert parsed.command == command[3].split()[0]
    assert "--require-strict" in commands["worker"]  # a class never falls back to process mode silently
    for name in ("lti-serve", "metrics"):  # listening where the proxy or Prometheus in another container reach it
        assert _option(commands[name], "--host") == "0.0.0.0"
    assert _option(commands["app"], "--server.address") == "0.0.0.0"


def test_the_database_url_stays_off_command_lines_and_out_of_git(services):
    for name, service in _class_services(services).items():
        assert "--db" not in service["command"], name
        assert service["env_file"] == "class.env", name
        assert "ATTENTION_LAB_CLASS_DB" not in str(service.get("environment", {})), name
    assert services["postgres"]["env_file"] == "class.env"
    example = (STACK / "class.env.example").read_text()
    assert re.search(r"^POSTGRES_PASSWORD=", example, re.M)
    assert re.search(r"^ATTENTION_LAB_CLASS_DB=postgresql://lab:[^@]+@postgres/lab$", example, re.M)
    ignored = subprocess.run(["git", "check-ignore", "--no-index", "deploy/container/class.env"], cwd=ROOT,
                             capture_output=True, text=True)
    assert ignored.returncode == 0, "deploy/container/class.env (the database password) is not git-ignored"


def test_only_the_worker_is_root_and_it_gets_no_blanket_privileges(services):
    for name, service in _class_services(services).items():
        assert not service.get("privileged"), name
        if name in ("worker", "cli"):
            continue
        assert service.get("user") == "10001", f"{name} must run as attention-lab, never root"
    worker = services["worker"]
    assert worker.get("user") in (None, "0", "root")  # the strict sandbox gives every job its own uid
    assert worker["security_opt"] == ["unmask=/proc/*"]  # the engine's seccomp profile stays
    assert worker["cap_add"] == ["SYS_ADMIN", "SYS_PTRACE"]
    assert worker["mem_limit"] and worker["pids_limit"]  # all of a worker's jobs together stay bounded
    comment = (STACK / "compose.yaml").read_text()
    for why in ("privileged: true", "unmask=/proc/*", "SYS_ADMIN:", "SYS_PTRACE:"):  # each one's reason beside it
        assert why in comment, why
    assert int(str(worker["deploy"]["replicas"]).strip("${}").split(":-")[-1]) >= 1


def test_the_proxy_routes_lti_and_the_rest_to_the_ports_the_services_listen_on(services):
    caddyfile = (STACK / "Caddyfile").read_text()
    lti_port = _option(services["lti-serve"]["command"], "--port")
    app_port = _option(services["app"]["command"], "--server.port")
    assert re.search(r"handle /lti/\* \{\s*reverse_proxy lti-serve:" + lti_port + r"\s*\}", caddyfile), caddyfile
    assert re.search(r"handle \{\s*reverse_proxy app:" + app_port + r"\s*\}", caddyfile), caddyfile
    mounts = [v.split(":")[0] for v in services["caddy"]["volumes"]]
    assert "./Caddyfile" in mounts
    assert _option(services["lti-serve"]["command"], "--app-url").startswith("https://")


def _context_ignored(path):
    """Is this path (relative to the repository root) left out of the build context by .containerignore?"""
    patterns = [line.strip() for line in (ROOT / ".containerignore").read_text().splitlines()
                if line.strip() and not line.startswith("#")]
    parts = path.split("/")
    prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    return any(fnmatch.fnmatch(prefix, pattern.rstrip("/")) or fnmatch.fnmatch(prefix, "*/" + pattern)
               for pattern in patterns for prefix in prefixes)


def test_the_containerfiles_paths_exist_and_reach_the_build_context():
    text = (STACK / "Containerfile").read_text()
    lines = re.sub(r"\\\n", " ", text).splitlines()
    sources = []
    for line in lines:
        words = line.split()
        if words[:1] == ["COPY"] and not any(w.startswith("--from=") for w in words):
            sources += [w for w in words[1:-1] if not w.startswith("--")]
        sources += re.findall(r"--mount=type=bind,source=([^,\s]+)", line)
    assert "requirements-class.txt" in sources and "." in sources and "deploy/container/wheels" in sources
    for source in sources:
        assert (ROOT / source).exists(), f"the Containerfile copies {source}, which does not exist"
    needed = ["class_app.py", "app.py", "app_pages", "classroom", "grader", "course", "exercises", "solutions",
              "checkpoints", ".streamlit/config.toml", "requirements.txt", "requirements-class.txt"]
    for path in needed:
        assert (ROOT / path).exists() and not _context_ignored(path), f"{path} must reach the image"
    for secret in (".streamlit/secrets.toml", "class.db", "roster.csv", "links.csv", "deploy/container/class.env",
                   "tests", ".git"):
        assert _context_ignored(secret), f"{secret} must stay out of the image"
    assert re.search(r"^ARG BASE=\S*debian:bookworm", text, re.M) and "FROM ${BASE}" in text
    assert re.search(r"apt-get install[^&]*\bbubblewrap\b[^&]*\butil-linux\b[^&]*\blibseccomp2\b", " ".join(lines))
    assert "torch" in text and "TORCH_INDEX" in text  # the CPU build, never PyPI's CUDA one


def test_the_bench_stand_ins_exist_for_the_images_the_stack_names(services):
    assert "postgres" in services["postgres"]["image"] and "caddy" in services["caddy"]["image"]
    for name in ("postgres.Containerfile", "postgres-start.sh", "caddy.Containerfile"):
        assert (ROOT / "bench" / "container" / name).is_file(), name
