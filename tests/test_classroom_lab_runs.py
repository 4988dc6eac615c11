"""The training lab in a class: a class-wide cap on the live runs the app server trains at once (off for learners
until the instructor sets one), one run per person, places freed when a run ends or its time is up."""

import threading
import time
from dataclasses import replace
from datetime import timedelta

import pytest

from classroom import cli
from classroom.data import lab_runs
from classroom.data.roster import remove_user
from classroom.data.settings import get_settings, set_setting
from classroom.data.models import utcnow
from course.common.i18n import t
from course.lessons import training_lab
from tests.app_helpers import APP, AppTest, errors_of
from tests.classroom_support import INSTRUCTOR, session_token, user_id

LAB = "app_pages/lab.py"


def _refusal(store, email, now=None):
    """The key of the refusal of a run of `email` (None: a place was taken)."""
    try:
        lab_runs.start(store, user_id(store, email), 600, now=now)
    except lab_runs.Refused as refused:
        return refused.key
    return None


@pytest.mark.slow
def test_learners_train_only_within_the_cap_the_instructor_sets(any_store):
    url = any_store.engine.url.render_as_string(hide_password=False)
    assert get_settings(any_store)["lab_runs"] == 0  # off by default
    assert _refusal(any_store, "ann@class.test") == "lab_off"
    assert _refusal(any_store, INSTRUCTOR) is None and _refusal(any_store, "ta@class.test") is None  # staff may
    assert _refusal(any_store, INSTRUCTOR) == "lab_own_running"  # one at a time, even for staff
    assert cli.main(["limits", "--lab-runs", "3", "--db", url]) == 0
    assert _refusal(any_store, "ann@class.test") is None  # staff's 2 runs count: the third place
    assert _refusal(any_store, "ann@class.test") == "lab_own_running"  # a second tab takes no second place
    assert _refusal(any_store, "bob@class.test") == "lab_full"
    assert lab_runs.running(any_store) == 3
    with pytest.raises(lab_runs.Refused) as refused:
        lab_runs.start(any_store, user_id(any_store, "bob@class.test"), 600)
    assert t(f"classroom.{refused.value.key}", "en", **refused.value.params).startswith("All 3 live training places")
    remove_user(any_store, "cy@class.test")
    assert _refusal(any_store, "cy@class.test") == "lab_sign_in"  # off the roster


@pytest.mark.slow
def test_a_place_is_free_once_the_run_ends_or_its_time_is_up(any_store):
    set_setting(any_store, "lab_runs", 1)
    start = utcnow()
    ann = lab_runs.start(any_store, user_id(any_store, "ann@class.test"), 600, now=start)
    assert _refusal(any_store, "bob@class.test", now=start + timedelta(seconds=599)) == "lab_full"
    bob = lab_runs.start(any_store, user_id(any_store, "bob@class.test"), 600, now=start + timedelta(seconds=601))
    assert _refusal(any_store, "cy@class.test") == "lab_full"  # bob's run holds the place (ann's tab closed)
    lab_runs.finish(any_store, bob)
    lab_runs.finish(any_store, ann)  # late: frees nothing more
    assert lab_runs.running(any_store) == 0 and _refusal(any_store, "cy@class.test") is None


@pytest.mark.slow
def test_learners_racing_for_the_last_place_get_it_once(any_store):
    set_setting(any_store, "lab_runs", 1)
    emails = ["ann@class.test", "bob@class.test", "cy@class.test"]
    gate, outcomes = threading.Barrier(len(emails)), []

    def race(email):
        gate.wait()
        outcomes.append(_refusal(any_store, email))

    threads = [threading.Thread(target=race, args=(email,)) for email in emails]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(outcomes, key=str) == [None, "lab_full", "lab_full"] and lab_runs.running(any_store) == 1


def _live(at):
    """The page's live run handle (None: no child training)."""
    return at.session_state["lab_live"] if "lab_live" in at.session_state else None


def _lab_page(store, email, lang="en"):
    """The lab page of the app in class mode, signed in as `email`."""
    at = AppTest.from_file(str(APP), default_timeout=300)
    at.session_state["app_lang"] = lang
    at.session_state["class_session"] = session_token(store, user_id(store, email))
    at.run()
    at.switch_page(LAB).run()
    assert errors_of(at) == []
    return at


@pytest.fixture
def hosted_lab(class_store, sqlite_url, monkeypatch, tmp_path):
    monkeypatch.setenv("ATTENTION_LAB_CLASS_DB", sqlite_url)
    monkeypatch.setenv("ATTENTION_LAB_HOME", str(tmp_path))
    return class_store


@pytest.mark.slow
@pytest.mark.skipif(not training_lab.RESULTS.is_file(), reason="no shipped results file")
def test_the_lab_page_says_why_a_learner_cannot_train_and_frees_the_place_after_a_run(hosted_lab, monkeypatch):
    at = _lab_page(hosted_lab, "ann@class.test", "zh")
    at.button(key="lab_train").click().run()
    assert [e.value for e in at.error] == [t("classroom.lab_off", "zh")] and _live(at) is None
    set_setting(hosted_lab, "lab_runs", 1)
    held = lab_runs.start(hosted_lab, user_id(hosted_lab, INSTRUCTOR), 600)  # the instructor trains meanwhile
    at.button(key="lab_train").click().run()
    assert [e.value for e in at.error] == [t("classroom.lab_full", "zh", cap=1)]
    assert _live(at) is None
    lab_runs.finish(hosted_lab, held)
    real = training_lab.variant_config
    monkeypatch.setattr(training_lab, "variant_config", lambda v, base=None: replace(real(v, base), steps=5))
    at.button(key="lab_train").click().run()
    assert errors_of(at) == [] and _live(at) is not None and lab_runs.running(hosted_lab) == 1
    deadline = time.monotonic() + 300
    while _live(at) is not None:
        assert time.monotonic() < deadline, "the training child did not finish"
        at.run()
    assert errors_of(at) == [] and at.session_state["lab_runs"]  # collected
    assert lab_runs.running(hosted_lab) == 0  # its place is free again


def _passed(store, email, ex_id, source):
    """A submission of `source` with a passing verdict (as a worker stores it), without running the grader."""
    from classroom.data.exercise_table import get
    from classroom.data.models import Job, Result, Submission
    from tests.classroom_support import passed_verdict

    with store.session() as session:
        sub = Submission(user_id=user_id(store, email), exercise_id=ex_id, source=source, kind=".py",
                         filename=get(ex_id).filename, status="done")
        session.add(sub)
        session.flush()
        job = Job(submission_id=sub.id, state="done", attempts=1)
        session.add(job)
        session.flush()
        session.add(Result(submission_id=sub.id, job_id=job.id, **passed_verdict()))


HOSTILE_IMPORT = '''
import os as _os
_seen = [name for name in ("ATTENTION_LAB_CLASS_DB", "ATTENTION_LAB_HOME") if name in _os.environ]
_seen += [path for path in ({db!r}, {secrets!r}) if _os.path.exists(path)]
raise RuntimeError("what the learner's code saw: " + (", ".join(_seen) or "nothing of the class"))
'''


@pytest.mark.slow
@pytest.mark.skipif(not training_lab.RESULTS.is_file(), reason="no shipped results file")
def test_own_modules_unlock_from_the_class_verdicts_and_run_away_from_the_class_data(hosted_lab, monkeypatch,
                                                                                      sqlite_url):
    """"With your own modules" reads the learner's passed submissions (it read the local progress file, so it
    never unlocked in a class), trains with the code they submitted, and that code runs in bubblewrap: it
    sees neither the database nor the server's environment and secrets."""
    import shutil

    from tests.classroom_support import ROOT, solution

    if shutil.which("bwrap", path="/usr/bin:/bin") is None:
        pytest.skip("bubblewrap is not installed (apt-get install bubblewrap); CI installs it")
    set_setting(hosted_lab, "lab_runs", 2)
    real = training_lab.variant_config
    monkeypatch.setattr(training_lab, "variant_config", lambda v, base=None: replace(real(v, base), steps=5))
    at = _lab_page(hosted_lab, "ann@class.test")
    assert t("classroom.lab_mine_not_passed", "en") in [i.value for i in at.info]
    assert not any(b.key == "lab_train_mine" for b in at.button)
    for ex_id in ("ex05", "ex06", "ex07"):
        _passed(hosted_lab, "ann@class.test", ex_id, solution(ex_id))
    db = sqlite_url.removeprefix("sqlite:///")
    hostile = solution("ex05") + HOSTILE_IMPORT.format(db=db, secrets=str(ROOT / ".streamlit" / "secrets.toml"))
    _passed(hosted_lab, "bob@class.test", "ex05", hostile)
    for ex_id in ("ex06", "ex07"):
        _passed(hosted_lab, "bob@class.test", ex_id, solution(ex_id))
    at.run()
    assert t("classroom.lab_mine_not_passed", "en") not in [i.value for i in at.info]
    at.button(key="lab_train_mine").click().run()
    assert errors_of(at) == [] and _live(at) is not None
    deadline = time.monotonic() + 300
    while _live(at) is not None:
        assert time.monotonic() < deadline, "the training child did not finish"
        at.run()
    assert errors_of(at) == []
    task, seed = at.radio(key="lab_task").value, at.radio(key="lab_seed").value
    run = at.session_state["lab_runs"][(task, "mine", seed)]
    assert run["learner"] and run["steps_done"] == 5 and lab_runs.running(hosted_lab) == 0
    at = _lab_page(hosted_lab, "bob@class.test")  # his passed ex05 looks around when imported
    at.button(key="lab_train_mine").click().run()
    deadline = time.monotonic() + 300
    while not at.error:
        assert time.monotonic() < deadline, "no message from the failed child"
        at.run()
    assert "what the learner's code saw: nothing of the class" in at.error[0].value, at.error[0].value
    assert lab_runs.running(hosted_lab) == 0


def test_the_sandbox_binds_a_venv_inside_the_project_but_never_the_project_or_a_folder_above_it(tmp_path,
                                                                                                  monkeypatch):
    """CI's virtual environment is the project's `.venv/`: left out, the sandbox had no Python to start
    ("bwrap: execvp .../.venv/bin/python: No such file"). The project folder and its parents still stay out."""
    import site
    import sys

    from course.app import lab_runner

    project = tmp_path / "home" / "project"
    venv, base, elsewhere = project / ".venv", tmp_path / "python", tmp_path / "packages"
    for folder in (venv, base, elsewhere):
        folder.mkdir(parents=True)
    monkeypatch.setattr(lab_runner, "PROJECT_ROOT", project)
    monkeypatch.setattr(sys, "prefix", str(venv))
    monkeypatch.setattr(sys, "base_prefix", str(base))
    monkeypatch.setattr(site, "getsitepackages", lambda: [str(project), str(tmp_path / "home"), str(elsewhere)])
    monkeypatch.setattr(site, "getusersitepackages", lambda: str(tmp_path / "no-such-folder"))
    assert lab_runner.python_folders() == sorted([str(venv), str(base), str(elsewhere)])
