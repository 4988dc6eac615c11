"""`python -m grader serve`: one long-lived grader that grades request after request (the Practice page's).

A fresh `python -m grader` per click pays a Python start, the grader's imports
and the sandbox's torch import every time. This server pays them once: it
grades each request in-process with SandboxLimits(warm=True), so every run is
served by the same warm sandbox server (grader/warm_server.py). Learner code
never runs here: as with `python -m grader`, it runs in the sandbox's forked
children, which end with their run.

Protocol, one JSON object per line. A request on stdin:

    {"id": "<request id>", "args": ["ex03", "--lang", "zh", ...]}

(`args` as `python -m grader` takes them; --json, --watch and --report-fd do not
apply). Answers on stdout, each carrying the request's id:

    {"id": ..., "progress": [done, total, ex_id, status]}   as each exercise is judged
    {"id": ..., "report": {...}}                              the JSON report (the end)
    {"id": ..., "exit": 2, "error": "usage: ..."}             what `python -m grader` would have
                                                              exited with, and its message (the end)

The server records nothing: the page that asked records the report (its Learner).
The end of stdin ends the server. Anything else the grading prints goes to
stderr: stdout carries answers only.

It warms up before it reads its first request (`warm_up`): its warm sandbox server starts while it imports
the grader, and the automatic mutants' caches (grader/diagnosis/) that are missing are built by a child of
lower priority, so that no learner's first failing grade waits for them. The app starts the server as it
starts (course/app/grading_client.py), so a first click finds it ready.
"""

import contextlib
import io
import json
import os
import subprocess
import sys
import traceback

from . import warm_server
from .options import parse_args
from .sandbox import HARNESS_DIR, RUN_PREFIX, SandboxLimits

BUILD_NICENESS = 10  # the mutant caches' builder yields the processor to a grade

NOT_HERE = ("--json", "--watch", "--report-fd", "--watch-max-runs")


def _grade_request(args_list, answer):
    """Grade one request's arguments; answer(dict) with progress lines and the report or an exit."""
    if any(a.split("=")[0] in NOT_HERE for a in args_list):
        answer({"exit": 2, "error": f"the grading server takes none of {', '.join(NOT_HERE)}"})
        return
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):
            args = parse_args(args_list)
    except SystemExit as exit_:
        answer({"exit": int(exit_.code or 0), "error": said.getvalue().strip()})
        return
    from .notebook_submit import default_exercises

    ex_ids = args.exercises or default_exercises(args.target)
    from .core import grade

    limits = SandboxLimits(timeout_s=args.timeout, mode=args.sandbox, warm=True)
    report = grade(args.target, ex_ids, limits, lang=args.lang,
                   on_progress=lambda done, total, ex_id, status: answer({"progress": [done, total, ex_id, status]}))
    answer({"report": report.to_dict()})


def missing_mutant_caches():
    """The exercises whose automatic mutants' caches are not built for this grader version ([] with the
    diagnosis switched off: ATTENTION_LAB_DIAGNOSIS=0)."""
    if os.environ.get("ATTENTION_LAB_DIAGNOSIS", "1") == "0":
        return []
    from course.common.exercise_index import BY_ID

    from .diagnosis import mutants

    return [ex_id for ex_id in BY_ID if not mutants.cache_path(ex_id).exists()]


def warm_up():
    """Start the default sandbox's warm server, import the grader, and start building the missing mutant caches
    in a child of lower priority (`python -m grader mutants`; a grade that needs a cache being built waits for
    that one only) -> the builder's Popen, or None when every cache is there."""
    warm_server.prestart(parse_args([]).sandbox, HARNESS_DIR, RUN_PREFIX)
    from . import core  # noqa: F401  (torch and the checks, imported while the sandbox server starts)

    missing = missing_mutant_caches()
    if not missing:
        return None
    builder = subprocess.Popen([sys.executable, "-m", "grader", "mutants", *missing], stdin=subprocess.DEVNULL,
                               stdout=sys.stderr, stderr=sys.stderr)
    with contextlib.suppress(OSError):  # its forks inherit the priority
        os.setpriority(os.PRIO_PROCESS, builder.pid, os.getpriority(os.PRIO_PROCESS, 0) + BUILD_NICENESS)
    return builder


def serve(stdin=None):
    """Answer requests from stdin until it closes (see the module doc) -> exit code."""
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # whatever else writes to stdout (this process or a child it starts) lands on stderr
    sys.stdout = sys.stderr
    os.environ.setdefault("PYTHONHASHSEED", "0")
    warm_up()  # requests wait in the pipe meanwhile
    for line in stdin or sys.stdin:
        try:
            request = json.loads(line)
            request_id, args_list = str(request["id"]), [str(a) for a in request["args"]]
        except (ValueError, KeyError, TypeError):
            print(f"grading server: a request that is not one: {line[:200]!r}", file=sys.stderr)
            return 2

        def answer(fields, request_id=request_id):
            answers.write(json.dumps(dict(fields, id=request_id), ensure_ascii=False, allow_nan=False) + "\n")
            answers.flush()

        try:
            _grade_request(args_list, answer)
        except Exception:  # the grader crashed on this request: say so, serve the next
            answer({"exit": 3, "error": traceback.format_exc(limit=8)})
    return 0
