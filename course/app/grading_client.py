"""Run the grader in a child process and read its JSON report (used by the Practice page).

Learner code never runs inside the Streamlit process: the page calls
`run_grader`, which starts `python -m grader ... --json` with the same Python,
passes each `progress: <done>/<total> <ex_id> <status>` line from the grader's
stderr to a callback as it arrives, and returns the parsed report.

The report is read from an anonymous file this process owns, handed to the
grader as a descriptor (`--report-fd`), and only after the grader has exited
and everything left in its session has been killed: a background process of
the learner's that holds the grader's stdout open cannot rewrite it.

`GradingServer` (the Practice page's, one per Streamlit server: `shared_server`)
instead keeps one `python -m grader serve` child (grader/serve.py) and sends it
request after request, so the grader's imports and its warm sandbox server's
torch import are paid once, not per click. Learner code still never runs in
this process nor in that child: it runs in the sandbox's per-run children. A
server that died is replaced by a fresh one at the next request; one that
overruns a request's timeout is killed with its whole session. It serves one
request at a time (see GradingServer).

Both start their child, read it and kill its session with course.common.child_process.
"""

import atexit
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import streamlit as st

from course.common.child_process import LineReader, kill_group, spawn
from course.common.exercise_index import BY_ID, GRADER_STATUSES
from course.common.i18n import t
from course.common.paths import PROJECT_ROOT

GRADER_ARGS = ["-m", "grader"]  # tests point this at a fake grader script
TIMEOUT_S = 900
PROGRESS_RE = re.compile(r"^progress:\s*(\d+)/(\d+)\s+(\S+)\s+(\S+)\s*$")
UPLOAD_SUFFIXES = (".py", ".ipynb")
MAX_UPLOAD_MB = 1  # an exercise file or notebook is a few tens of KB; the uploader says and enforces this too
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 2**20


class GraderError(RuntimeError):
    """The grader could not be run or gave no usable report."""


def parse_progress(line):
    """(done, total, ex_id, status) from a progress line, or None for other lines."""
    match = PROGRESS_RE.match(line.strip())
    if not match:
        return None
    return int(match[1]), int(match[2]), match[3], match[4]


def validate_report(report):
    """Check the report's shape; return it, or raise GraderError saying what is wrong."""
    if not isinstance(report, dict) or report.get("version") != 1:
        raise GraderError("the grader's report is not a version-1 JSON object")
    exercises = report.get("exercises")
    if not isinstance(exercises, list):
        raise GraderError("the grader's report has no 'exercises' list")
    for entry in exercises:
        if not isinstance(entry, dict) or "id" not in entry or entry.get("status") not in GRADER_STATUSES:
            raise GraderError(f"the grader's report has a malformed exercise entry: {entry!r:.200}")
        entry.setdefault("checks", [])
        entry.setdefault("score", 0.0)
        entry.setdefault("summary", "")
    return report


def grader_options(target=None, sandbox=None, lang=None):
    """The grader's options for a target folder, a sandbox mode and messages in `lang` (the CLI's and the server's)."""
    options = []
    if lang is not None:
        options += ["--lang", lang]
    if sandbox is not None:
        options += ["--sandbox", sandbox]
    if target is not None:
        options += ["--target", str(target)]
    return options


def grader_command(ex_ids=(), target=None, report_fd=None, sandbox=None, lang=None):
    """The argument list that runs the grader once for these exercises, its JSON report to report_fd."""
    command = [sys.executable, *GRADER_ARGS, *ex_ids, "--json", *grader_options(target, sandbox, lang)]
    if report_fd is not None:
        command += ["--report-fd", str(report_fd)]
    return command


def run_grader(ex_ids=(), target=None, on_progress=None, timeout=TIMEOUT_S, sandbox=None, lang=None, server=None):
    """Grade in a child process; returns the report dict (see the grader's --json). Nothing is recorded: the
    caller's Learner records the report.

    sandbox: None (the grader's default, "process") or "strict". server: a GradingServer to grade on (its warm
    child), else a `python -m grader` of its own."""
    if server is not None:
        return server.grade([*ex_ids, *grader_options(target, sandbox, lang)], on_progress, timeout)
    with tempfile.TemporaryFile(mode="w+b") as out:
        command = grader_command(ex_ids, target, report_fd=out.fileno(), sandbox=sandbox, lang=lang)
        try:
            child = spawn(command, cwd=PROJECT_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          env=dict(os.environ, PYTHONIOENCODING="utf-8"), pass_fds=(out.fileno(),))
        except OSError as err:
            raise GraderError(f"could not start the grader ({' '.join(command)}): {err}") from err
        try:
            other_lines = _follow_stderr(child, timeout, on_progress)
        finally:
            kill_group(child)  # the report is read only once nothing is left in its session to rewrite it
        returncode = child.returncode
        out.seek(0)
        data = out.read(64 * 2**20).decode("utf-8", errors="replace")
    stderr_tail = "\n".join(other_lines[-20:])
    if returncode not in (0, 1):
        raise GraderError(
            f"the grader stopped with exit code {returncode}.\n{stderr_tail}".rstrip()
        )
    try:
        report = json.loads(data)
    except json.JSONDecodeError:
        raise GraderError(
            f"the grader wrote no JSON report (exit code {returncode}).\n{stderr_tail}".rstrip()
        ) from None
    return validate_report(report)


def _follow_stderr(child, timeout, on_progress):
    """Pass the grader's progress lines to on_progress until it exits -> its other stderr lines (GraderError
    after timeout s). The end is its exit, never the end of a pipe that something it left behind may hold."""
    reader, other_lines = LineReader(child.stderr, child), []
    deadline = time.monotonic() + timeout

    def take(line):
        text = line.decode("utf-8", errors="replace")
        parsed = parse_progress(text)
        if parsed is None:
            other_lines.append(text)
        elif on_progress is not None:
            on_progress(*parsed)

    while (line := reader.readline(deadline)) is not None:
        take(line)
    if not reader.ended:
        raise GraderError(f"the grader ran longer than {timeout} s and was stopped")
    last = reader.rest()  # a line it wrote without its newline
    if last:
        take(last)
    return other_lines


def _replace_strings(value, replacements):
    """A copy of a JSON value with each (old, new) replaced in every string."""
    if isinstance(value, str):
        for old, new in replacements:
            value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [_replace_strings(v, replacements) for v in value]
    if isinstance(value, dict):
        return {k: _replace_strings(v, replacements) for k, v in value.items()}
    return value


def upload_problem(ex_id, filename, data, lang="en"):
    """Why an upload cannot be graded (a sentence in `lang`), or None when it can."""
    if ex_id not in BY_ID:
        return t("practice.upload_problem.unknown", lang, ex_id=repr(ex_id), ids=", ".join(BY_ID))
    if Path(filename).suffix.lower() not in UPLOAD_SUFFIXES:
        return t("practice.upload_problem.suffix", lang, name=repr(filename))
    if not data:
        return t("practice.upload_problem.empty", lang, name=repr(filename))
    if len(data) > MAX_UPLOAD_BYTES:
        return t("practice.upload_problem.too_big", lang, name=repr(filename), mb=f"{len(data) / 2**20:.1f}",
                 limit=MAX_UPLOAD_MB)
    return None


def grade_upload(ex_id, filename, data, on_progress=None, timeout=TIMEOUT_S, lang=None, server=None):
    """Grade an uploaded .py file or notebook for one exercise, like `python -m grader`.

    The upload is written to a fresh temporary folder (a .py file under the
    exercise's file name, a notebook under its own) and graded there by the
    grader in a child process (an upload is not recorded as progress); it is never imported
    here. Paths in the report name the upload. Returns the report dict.
    """
    problem = upload_problem(ex_id, filename, data, lang or "en")
    if problem:
        raise GraderError(problem)
    folder = Path(tempfile.mkdtemp(prefix="attention-lab-upload-"))
    try:
        if Path(filename).suffix.lower() == ".py":
            staged = folder / BY_ID[ex_id].filename
        else:
            staged = folder / (re.sub(r"[^A-Za-z0-9_.-]", "_", Path(filename).stem)[:80] + ".ipynb")
        staged.write_bytes(data)
        target = folder if staged.suffix == ".py" else staged
        report = run_grader([ex_id], target, on_progress, timeout, lang=lang, server=server)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    shown = Path(filename).name
    return _replace_strings(report, [(str(staged), shown), (str(folder), shown)])


class _EndedUnanswered(Exception):
    """The grading server ended before it answered the request at all."""


class GradingServer:
    """A long-lived `python -m grader serve` child, started at the first request, replaced when it has died.

    One request at a time. The serve child reads its requests in order and grades each to its end before it
    reads the next (and its warm sandbox server serves one run at a time), so `grade` holds `self.lock` for a
    whole request: a second Grade click on the same app server (another tab, another learner) waits until the
    first has been answered or has overrun its timeout (TIMEOUT_S by default), and its own timeout starts only
    when its turn comes. Serving requests side by side would take a serve child per request in flight, each
    with its own warm sandbox server and torch import: not cheap, so it is not done."""

    def __init__(self, command=None):
        self.command = list(command or [sys.executable, *GRADER_ARGS, "serve"])
        self.proc, self.log, self.lock = None, None, threading.Lock()

    @property
    def pid(self):
        """The pid of the running server child, or None."""
        return self.proc.pid if self.proc is not None and self.proc.poll() is None else None

    def _start(self):
        self.close()
        self.log = tempfile.TemporaryFile(mode="w+b")  # its stderr: read back when it fails
        try:
            self.proc = spawn(self.command, cwd=PROJECT_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=self.log, env=dict(os.environ, PYTHONIOENCODING="utf-8"))
        except OSError as err:
            raise GraderError(f"could not start the grader ({' '.join(self.command)}): {err}") from err
        self.reader = LineReader(self.proc.stdout, self.proc)

    def _stderr_tail(self):
        if self.log is None:
            return ""
        self.log.seek(0)
        lines = self.log.read()[-64 * 1024:].decode("utf-8", errors="replace").splitlines()
        return "\n".join(lines[-20:])

    def _next_answer(self, deadline):
        """The next answer line (a dict), or None when the server has exited (or closed its stdout and then
        exited); TimeoutError at the deadline."""
        line = self.reader.readline(deadline)
        if line is None:
            if not self.reader.ended:
                raise TimeoutError
            return None
        try:
            answer = json.loads(line)
        except ValueError:
            answer = None
        return answer if isinstance(answer, dict) else {"id": None}

    def start_early(self):
        """Start the server child now, unless it runs or a request holds it, and return at once: it warms up
        (grader/serve.py `warm_up`) while the learner reads, so a first Grade click finds it ready."""
        if self.lock.acquire(blocking=False):
            try:
                if self.pid is None:
                    self._start()
            finally:
                self.lock.release()

    def grade(self, args, on_progress=None, timeout=TIMEOUT_S):
        """Grade `python -m grader` arguments on the server -> the report dict (GraderError as run_grader).

        A server that ends before its first answer (it had died while idle) is replaced and asked once more."""
        with self.lock:
            deadline = time.monotonic() + timeout
            for attempt in (1, 2):
                try:
                    return self._request(args, on_progress, deadline, timeout)
                except _EndedUnanswered as ended:
                    if attempt == 2:
                        raise GraderError(str(ended)) from None

    def _request(self, args, on_progress, deadline, timeout):
        if self.pid is None:
            self._start()
        request_id, answered = secrets.token_hex(8), False
        try:
            self.proc.stdin.write((json.dumps({"id": request_id, "args": list(args)}) + "\n").encode())
            self.proc.stdin.flush()
        except OSError:
            pass  # it died: said below, when no answer comes
        while True:
            try:
                answer = self._next_answer(deadline)
            except TimeoutError:
                self.close()
                raise GraderError(f"the grader ran longer than {timeout} s and was stopped") from None
            if answer is None:  # its stdout closed: it has exited (or is on its way out)
                try:
                    code = self.proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    code = "none (it stopped answering)"
                tail = self._stderr_tail()
                self.close()
                message = f"the grader stopped with exit code {code}.\n{tail}".rstrip()
                raise GraderError(message) if answered else _EndedUnanswered(message)
            if answer.get("id") != request_id:
                self.close()
                raise GraderError("the grading server gave an answer to no request; it was restarted")
            answered = True
            if "progress" in answer:
                if on_progress is not None:
                    on_progress(*answer["progress"])
            elif "report" in answer:
                return validate_report(answer["report"])
            else:
                raise GraderError(f"the grader stopped with exit code {answer.get('exit')}.\n"
                                  f"{answer.get('error', '')}".rstrip())

    def close(self):
        """Kill the server and everything in its session."""
        if self.proc is not None:
            kill_group(self.proc)
            self.proc = None
        if self.log is not None:
            self.log.close()
            self.log = None


_made = []  # every GradingServer of this process, closed at its exit
atexit.register(lambda: [server.close() for server in _made])


@st.cache_resource(show_spinner=False)
def _server_for(command):
    server = GradingServer(command)
    _made.append(server)
    return server


def shared_server():
    """This Streamlit server's GradingServer (for the current grader command: tests point GRADER_ARGS elsewhere)."""
    return _server_for((sys.executable, *GRADER_ARGS, "serve"))


EARLY_START_VAR = "ATTENTION_LAB_GRADER_EARLY"  # "0": no grading server until the first click (the tests' default)


def start_grading_server_early():
    """Start this Streamlit server's grading server as the app starts (a self-study page opened), so the first
    Grade click does not wait for its start; nothing when EARLY_START_VAR is "0"."""
    if os.environ.get(EARLY_START_VAR, "1") != "0":
        shared_server().start_early()
