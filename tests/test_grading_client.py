"""The grader client and the Practice page, run against a fake grader script."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from app_helpers import errors_of, open_page

from course.app.feedback_text import code_names
from course.app import grading_client, progress
from course.common import paths
from course.common.exercise_index import EXERCISES
from course.common.i18n import t
from tests.waiting import wait_until

FAKE_GRADER = textwrap.dedent(
    """
    import json, os, sys
    sys.path.insert(0, {root!r})


    def entries_for(ids, on_progress):
        entries = []
        for done, ex_id in enumerate(ids, start=1):
            ok = ex_id == "ex00"
            entries.append({{
                "id": ex_id, "title": ex_id, "file": f"exercises/{{ex_id}}.py",
                "status": "passed" if ok else "failed", "passed": ok, "score": 1.0 if ok else 0.5,
                "duration_s": 0.1, "summary": "summary of " + ex_id,
                "class_variant_warning": "ex03: this file will fail every class variant" if ex_id == "ex03" else "",
                "checks": [
                    {{"name": "shapes", "passed": True, "message": "output shape is right", "hint": None}},
                    {{"name": "values", "passed": ok, "message": "values differ at [0, 1]" if not ok else "values match",
                      "hint": None if ok else "check the scaling by sqrt(d)"}},
                ],
            }})
            on_progress(done, len(ids), ex_id, entries[-1]["status"])
        return entries


    def report_of(args, on_progress):
        ids = [a for a in args if a.startswith("ex")] or {all_ids!r}
        entries = entries_for(ids, on_progress)
        lang = args[args.index("--lang") + 1] if "--lang" in args else "(none)"
        return {{"version": 1, "target": "exercises", "lang": lang, "passed": all(e["passed"] for e in entries),
                "exercises": entries, "server_pid": os.getpid()}}


    argv = sys.argv[1:]
    if argv[:1] == ["serve"]:  # the grading server's protocol (grader/serve.py)
        for line in sys.stdin:
            request = json.loads(line)
            say = lambda **fields: print(json.dumps(dict(fields, id=request["id"])), flush=True)
            if "--usage-error" in request["args"]:
                say(exit=2, error="usage: python -m grader [ex00 ...]")
                continue
            if "--crash" in request["args"]:
                print("Traceback: boom", file=sys.stderr, flush=True)
                os._exit(3)
            if "--hang" in request["args"]:
                import time
                time.sleep(120)
            say(report=report_of(request["args"], lambda *p: say(progress=list(p))))
        sys.exit(0)
    report_fd = int(argv.pop(argv.index("--report-fd") + 1)) if "--report-fd" in argv else None
    args = [a for a in argv if a not in ("--json", "--report-fd")]
    if "--usage-error" in args or "--json" not in sys.argv:
        print("usage: python -m grader [ex00 ...] [--target DIR] --json", file=sys.stderr)
        sys.exit(2)
    if "--crash" in args:
        print("Traceback: boom", file=sys.stderr)
        sys.exit(3)
    print("loading torch", file=sys.stderr)
    report = report_of(args, lambda done, total, ex_id, status: print(
        f"progress: {{done}}/{{total}} {{ex_id}} {{status}}", file=sys.stderr, flush=True))
    print(f"fake grader language: {{report['lang']}}", file=sys.stderr)
    text = json.dumps(report)
    print(text)
    if report_fd is not None:
        os.write(report_fd, text.encode())
    sys.exit(0 if report["passed"] else 1)
    """
)


@pytest.fixture(autouse=True)
def fake_grader(tmp_path, monkeypatch):
    """Point the client at a fake grader and keep progress in a temporary folder."""
    script = tmp_path / "fake_grader.py"
    script.write_text(FAKE_GRADER.format(root=str(paths.PROJECT_ROOT), all_ids=[e.id for e in EXERCISES]))
    monkeypatch.setattr(grading_client, "GRADER_ARGS", [str(script)])
    monkeypatch.setenv("ATTENTION_LAB_HOME", str(tmp_path / "home"))
    return script


def test_command_uses_the_same_python_and_json():
    command = grading_client.grader_command(["ex03"], target="/tmp/x")
    assert command[0] == sys.executable
    assert command[-4:] == ["ex03", "--json", "--target", "/tmp/x"]


def test_parse_progress():
    assert grading_client.parse_progress("progress: 2/8 ex03 failed\n") == (2, 8, "ex03", "failed")
    assert grading_client.parse_progress("loading torch") is None


def test_run_grader_reports_progress_and_parses_the_report():
    seen = []
    report = grading_client.run_grader(["ex00", "ex03"], on_progress=lambda *p: seen.append(p))
    assert seen == [(1, 2, "ex00", "passed"), (2, 2, "ex03", "failed")]
    assert [e["id"] for e in report["exercises"]] == ["ex00", "ex03"]
    assert report["exercises"][1]["checks"][1]["hint"] == "check the scaling by sqrt(d)"
    assert progress.load_results() == {}  # the client records nothing: the page's Learner does


def test_usage_errors_and_crashes_raise_a_clear_grader_error():
    with pytest.raises(grading_client.GraderError, match="exit code 2(.|\n)*usage"):
        grading_client.run_grader(["--usage-error"])
    with pytest.raises(grading_client.GraderError, match="exit code 3(.|\n)*boom"):
        grading_client.run_grader(["--crash"])


def test_a_last_stderr_line_without_its_newline_is_in_the_error(tmp_path, monkeypatch):
    script = tmp_path / "abrupt_grader.py"
    script.write_text("import sys\nsys.stderr.write('fatal: no newline')\nsys.exit(3)\n")
    monkeypatch.setattr(grading_client, "GRADER_ARGS", [str(script)])
    with pytest.raises(grading_client.GraderError, match="exit code 3(.|\n)*fatal: no newline"):
        grading_client.run_grader(["ex03"], timeout=30)


def test_a_missing_grader_module_is_reported(monkeypatch):
    monkeypatch.setattr(grading_client, "GRADER_ARGS", ["-m", "no_such_grader_module"])
    with pytest.raises(grading_client.GraderError, match="no_such_grader_module"):
        grading_client.run_grader()


def test_malformed_reports_are_rejected():
    with pytest.raises(grading_client.GraderError, match="version-1"):
        grading_client.validate_report({"version": 2, "exercises": []})
    with pytest.raises(grading_client.GraderError, match="malformed"):
        grading_client.validate_report({"version": 1, "exercises": [{"id": "ex00", "status": "great"}]})


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_practice_page_grades_and_shows_checks_and_hints(lang):
    at = open_page("app_pages/practice.py", lang=lang)
    assert errors_of(at) == []
    at.selectbox(key="practice_exercise").set_value("ex03").run()
    at.button(key="practice_grade_one").click().run()
    assert errors_of(at) == []
    expanders = [e.label for e in at.expander]
    assert any("ex03" in label and t("app.status.failed", lang) in label for label in expanders)
    text = "\n".join(m.value for m in at.markdown)
    assert "values differ at [0, 1]" in text
    assert "output shape is right" not in text  # passed checks are summarised by name
    one_passed = t("practice.passed_checks_one", lang, names="shapes")  # "1 check passed", not "1 checks"
    assert any(one_passed == c.value for c in at.caption), [c.value for c in at.caption]
    assert any("check the scaling by sqrt(d)" in box.value for box in at.info)
    assert [w.value for w in at.warning if "class variant" in w.value] == [
        "ex03: this file will fail every class variant"]  # variant 0's word on a file a class fails, shown once
    assert at.session_state["practice_report"]["lang"] == lang  # the page asked for the learner's language
    assert progress.load_results()["ex03"]["status"] == "failed"  # the page's Learner recorded the report
    assert at.code == [] or all("class AdditiveAttention" not in c.value for c in at.code)


def test_solution_is_revealed_only_after_passing_or_on_request():
    at = open_page("app_pages/practice.py", lang="en")
    at.selectbox(key="practice_exercise").set_value("ex03").run()
    assert len(at.code) == 0
    at.checkbox(key="practice_reveal_ex03").check().run()
    source = (paths.PROJECT_ROOT / "solutions" / "ex03_scoring.py").read_text(encoding="utf-8")
    assert [c.value.strip() for c in at.code] == [source.strip()]
    at.selectbox(key="practice_exercise").set_value("ex00").run()
    assert len(at.code) == 0
    at.button(key="practice_grade_all").click().run()  # the fake passes ex00 only
    source = (paths.PROJECT_ROOT / "solutions" / "ex00_paths.py").read_text(encoding="utf-8")
    assert [c.value.strip() for c in at.code] == [source.strip()]
    table = at.dataframe[0].value
    status_col = t("practice.col_status", "en")
    passed, failed = (t("app.status." + s, "en") for s in ("passed", "failed"))  # table cells: words only
    assert table[status_col].tolist() == [passed] + [failed] * (len(EXERCISES) - 1)


def test_practice_page_shows_grader_failures(monkeypatch):
    monkeypatch.setattr(grading_client, "GRADER_ARGS", ["-m", "no_such_grader_module"])
    at = open_page("app_pages/practice.py", lang="en")
    at.button(key="practice_grade_all").click().run()
    assert any("no_such_grader_module" in e.value for e in at.error)
    assert not at.exception


LINGERING_GRADER = textwrap.dedent(
    """
    import json, os, sys, time
    argv = sys.argv[1:]
    fd = int(argv[argv.index("--report-fd") + 1])
    entry = {{"id": "ex03", "title": "ex03", "file": "ex03.py", "status": "failed", "passed": False,
              "score": 0.0, "duration_s": 0.1, "summary": "0/9 checks passed", "checks": []}}
    honest = {{"version": 1, "target": "x", "passed": False, "exercises": [entry]}}
    os.write(fd, json.dumps(honest).encode())
    print(json.dumps(honest))
    if os.fork() == 0:  # a learner's background process: holds stdout/stderr and rewrites the report
        forged = dict(honest, passed=True, exercises=[dict(entry, status="passed", passed=True, score=1.0)])
        time.sleep(1.5)
        for out in (fd, 1, 2):
            try:
                if out == fd:
                    os.lseek(out, 0, 0)
                os.write(out, json.dumps(forged).encode())
            except OSError:  # a pipe closed by the client: it stays alive all the same
                pass
        time.sleep(60)
        os._exit(0)
    sys.exit(1)
    """
)


@pytest.mark.slow
def test_a_background_process_cannot_rewrite_the_report(tmp_path, monkeypatch):
    script = tmp_path / "lingering_grader.py"
    script.write_text(LINGERING_GRADER.format())
    monkeypatch.setattr(grading_client, "GRADER_ARGS", [str(script)])
    report = grading_client.run_grader(["ex03"], timeout=30)
    assert report["passed"] is False and report["exercises"][0]["status"] == "failed"
    # Left alone the forger lives 61.5 s (it rewrites the report at 1.5 s): it must be gone well before that.
    wait_until(lambda: not subprocess.run(["pgrep", "-f", str(script)], capture_output=True).stdout, 10,
               "the grader's background process to be killed with it")


def test_practice_page_says_not_started_once_and_shows_a_file_hint(monkeypatch):
    not_started = "not started: write softmax, masked_softmax in exercises/ex01_softmax.py"
    broken = "ex03_scoring.py has a syntax error: invalid syntax (ex03_scoring.py, line 7: `def f(`)"
    report = {"version": 1, "lang": "en", "target": "exercises", "passed": False, "exercises": [
        {"id": "ex01", "title": "ex01", "file": "ex01_softmax.py", "status": "not_written", "passed": False,
         "score": 0.0, "duration_s": 0.1, "summary": not_started,
         "checks": [{"name": "not started", "passed": False, "message": not_started, "hint": None,
                     "id": "ex01.not_started", "mistake": None}]},
        {"id": "ex03", "title": "ex03", "file": "ex03_scoring.py", "status": "error", "passed": False,
         "score": 0.0, "duration_s": 0.1, "summary": broken,
         "checks": [{"name": "the file", "passed": False, "message": broken, "hint": "use the relative import",
                     "id": "ex03.file", "mistake": "absolute_import"}]}]}
    monkeypatch.setattr(grading_client, "run_grader", lambda *a, **k: report)
    at = open_page("app_pages/practice.py", lang="en")
    at.button(key="practice_grade_all").click().run()
    assert errors_of(at) == []
    text = [m.value for m in at.markdown]
    shown_not_started, shown_broken = code_names(not_started), code_names(broken)  # names as code
    assert "`exercises/ex01_softmax.py`" in shown_not_started and "`masked_softmax`" in shown_not_started
    assert sum(shown_not_started in m for m in text) == 1 and sum(shown_broken in m for m in text) == 1
    assert any("use the relative import" in box.value for box in at.info)


def test_the_grading_server_serves_request_after_request_from_one_process():
    server = grading_client.GradingServer()
    try:
        seen = []
        first = grading_client.run_grader(["ex00"], on_progress=lambda *p: seen.append(p), server=server)
        second = grading_client.run_grader(["ex03"], lang="zh", server=server)
        assert first["server_pid"] == second["server_pid"] == server.pid
        assert seen == [(1, 1, "ex00", "passed")] and second["lang"] == "zh"
        assert progress.load_results() == {}  # nor does the server
        with pytest.raises(grading_client.GraderError, match="exit code 2(.|\n)*usage"):
            grading_client.run_grader(["--usage-error"], server=server)
        assert server.pid == first["server_pid"]  # a refused request leaves the server running
    finally:
        server.close()


@pytest.mark.slow
@pytest.mark.timing
def test_a_grading_server_that_crashed_or_was_killed_is_replaced_by_a_fresh_one():
    server = grading_client.GradingServer()
    try:
        before = grading_client.run_grader(["ex00"], server=server)["server_pid"]
        with pytest.raises(grading_client.GraderError, match="exit code 3(.|\n)*boom"):
            grading_client.run_grader(["--crash"], server=server)
        assert server.pid is None
        after = grading_client.run_grader(["ex00"], server=server)["server_pid"]
        assert after != before
        os.kill(after, signal.SIGKILL)  # dies while idle
        start = time.monotonic()
        again = grading_client.run_grader(["ex00"], server=server, timeout=60)["server_pid"]
        assert again not in (before, after) and time.monotonic() - start < 30
    finally:
        server.close()


@pytest.mark.slow
@pytest.mark.timing
def test_a_grading_server_past_the_timeout_is_stopped_not_waited_for():
    server = grading_client.GradingServer()
    try:
        grading_client.run_grader(["ex00"], server=server)
        hung = server.pid
        start = time.monotonic()
        with pytest.raises(grading_client.GraderError, match="longer than 2 s"):
            grading_client.run_grader(["--hang"], server=server, timeout=2)
        assert time.monotonic() - start < 10
        with pytest.raises(ProcessLookupError):
            os.kill(hung, 0)
    finally:
        server.close()
