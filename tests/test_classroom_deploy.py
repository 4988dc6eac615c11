"""What hosting a class leaves on disk and in its docs (docs/teach/): ignored secrets, telemetry off, services, no
password on a command line, the app never as root."""

import re
import subprocess
import tomllib

from tests.classroom_support import ROOT, deploy_unit


def _host_a_class():
    """The docs for hosting a class, every page of docs/teach/ in one text."""
    pages = sorted((ROOT / "docs" / "teach").glob("*.md"))
    assert len(pages) >= 4, pages
    return "\n".join(page.read_text(encoding="utf-8") for page in pages)


def test_secrets_and_class_databases_are_git_ignored():
    paths = [".streamlit/secrets.toml", "class.db", "class.db-wal", "class.db-shm",
             "class.env", "roster.csv", "links.csv", "ta-links.csv", "grades.csv"]  # what README has written
    result = subprocess.run(["git", "check-ignore", "--no-index", *paths], cwd=ROOT, capture_output=True, text=True)
    assert result.stdout.split() == paths, result.stderr


def test_browsers_send_no_usage_metrics_and_fetch_no_google_favicon():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["browser"]["gatherUsageStats"] is False
    app = (ROOT / "app.py").read_text(encoding="utf-8")
    icon = re.search(r'page_icon="([^"]*)"', app).group(1)
    assert not icon.startswith(":material/")  # Streamlit fetches such a favicon from fonts.gstatic.com


def test_the_worker_runs_as_a_service_as_root_and_the_app_as_its_own_user():
    worker = deploy_unit("attention-lab-worker.service")["Service"]
    assert "-m classroom worker" in worker["ExecStart"] and "--db" not in worker["ExecStart"]
    assert worker["User"] == "root" and worker["Restart"] == "always" and worker["EnvironmentFile"]
    app = deploy_unit("attention-lab-app.service")["Service"]
    assert "streamlit run class_app.py" in app["ExecStart"] and app["User"] not in ("root", "")
    assert app["EnvironmentFile"] == worker["EnvironmentFile"]


def test_readme_keeps_passwords_off_command_lines_and_root_away_from_the_app():
    section = _host_a_class()
    commands = [line.strip() for line in section.splitlines() if line.startswith("    ")]
    for command in commands:
        assert not re.search(r"postgres(ql)?://[^@\s]*:[^@\s]*@", command.split("#")[0]), command
        assert "sudo" not in command, command
    apps = [c for c in commands if "streamlit run" in c]
    assert apps and all(c.startswith("runuser -u attention-lab") for c in apps), apps
    for word in ("roster remove", "links revoke", "sessions revoke", "--session-hours", "--role ta",
                 "gatherUsageStats", "attention-lab-worker.service", "DEAD", "lease runs out"):
        assert word in section, word


def test_a_nightly_timer_backs_up_the_class_database_as_the_apps_user():
    timer = deploy_unit("attention-lab-backup.timer")
    assert re.fullmatch(r"\*-\*-\* \d\d:\d\d:\d\d", timer["Timer"]["OnCalendar"])  # every day
    assert timer["Timer"]["Persistent"] == "true" and timer["Timer"]["Unit"] == "attention-lab-backup.service"
    assert timer["Install"]["WantedBy"] == "timers.target"
    service = deploy_unit("attention-lab-backup.service")["Service"]
    app = deploy_unit("attention-lab-app.service")["Service"]
    command = service["ExecStart"].split()
    assert command[1:4] == ["-m", "classroom", "backup"] and "--db" not in command and "--keep" in command
    assert command[4] == f"/var/lib/{service['StateDirectory']}"  # a folder systemd makes, the user's own
    assert service["Type"] == "oneshot" and service["User"] == app["User"] != "root"
    assert service["EnvironmentFile"] == app["EnvironmentFile"] and service["UMask"] == "0077"
    section = _host_a_class()
    for word in ("classroom backup", "classroom restore", "--force", "attention-lab-backup.timer", "signs in again"):
        assert word in section, word


def test_the_docs_use_the_units_user_paths_and_environment_file():
    """A new instructor who follows docs/teach/ then installs the units gets the same user, checkout, virtual
    environment and database URL file, not two sets of names."""
    app = deploy_unit("attention-lab-app.service")["Service"]
    section = _host_a_class()
    venv = app["ExecStart"].split()[0].rsplit("/bin/", 1)[0]  # /opt/attention-lab/.venv
    assert f"runuser -u {app['User']} " in section and f"useradd --system --create-home {app['User']}" in section
    assert f"python3 -m venv {venv}" in section and f"{venv}/bin/pip install torch==2.13.0" in section
    assert app["WorkingDirectory"] in section and f"> {app['EnvironmentFile']}" in section
    assert "runuser -u lab " not in section and "chown lab " not in section


def test_the_roster_template_imports_into_a_new_class(tmp_path):
    from tests.classroom_support import run_cli

    url = f"sqlite:///{tmp_path / 'class.db'}"
    assert run_cli("init", "--db", url, "--instructor", "you@school.edu").returncode == 0
    imported = run_cli("roster", "import", ROOT / "deploy" / "roster.example.csv", "--db", url)
    assert imported.returncode == 0, imported.stderr
    import sqlite3

    with sqlite3.connect(tmp_path / "class.db") as db:
        roles = dict(db.execute("SELECT email, role FROM users").fetchall())
    assert roles == {"you@school.edu": "instructor", "ta@school.edu": "ta", "ann@school.edu": "learner",
                     "bob@school.edu": "learner"}, roles
