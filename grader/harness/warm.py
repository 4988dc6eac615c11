"""The warm server: one interpreter with torch imported serves many grading runs.

Started once by the grader (`python -I`, see grader/warm_server.py) with a
server folder holding this package; it imports torch and the procedures, in
strict mode enters its private mount namespace with the runtime and the tools
bound (strict.prepare_strict), says `ready`, then reads commands on stdin:

    run <run_dir>   fork a run manager that serves that run directory exactly as
                    a one-run server would (child.serve); when it has ended, kill
                    whatever it left, and print `end <exit code>`
    ping            print `pong` (the grader asks before each run)

The server itself never reads a plan, a learner's file or a result: it only
forks. Everything a run touches (its plan, the copies in and out of the boxes,
the supervisors, the learner's processes) lives in that run's manager and its
children, which all end with the run; so nothing of one job can be in the
server, and nothing of it reaches the next job's fork. End of stdin ends it.
"""

import os
import signal
import sys

from .child import LIBC_PRCTL, PR_SET_CHILD_SUBREAPER, PR_SET_PDEATHSIG, _exit, _kill_orphans, _print_exc, serve


def _manager(run_dir, prepared):
    """In the forked run manager: serve one run directory; never returns."""
    code = 0
    try:
        LIBC_PRCTL(PR_SET_PDEATHSIG, signal.SIGKILL)  # a recycled server takes its run along
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)  # the server's command pipe is not the run's
        os.close(null)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        serve(run_dir, prepared)
    except BaseException:
        code = 5
        _print_exc()
    _exit(code)


def serve_warm(server_dir, mode):
    """Serve `run` commands from stdin until it closes (see the module doc)."""
    import torch  # noqa: F401  (imported once here, shared by every fork)
    from _harness import load_procedures

    load_procedures()
    LIBC_PRCTL(PR_SET_CHILD_SUBREAPER, 1)  # whatever a run leaves behind comes back here and is killed
    prepared = None
    if mode == "strict":
        from _harness.strict import prepare_strict

        prepared = prepare_strict(server_dir)
    print("ready", flush=True)
    while True:
        line = sys.stdin.readline()
        command, _, run_dir = line.strip().partition(" ")
        if command == "ping":
            print("pong", flush=True)
            continue
        if command != "run" or not os.path.isabs(run_dir):
            return
        pid = os.fork()
        if pid == 0:
            _manager(run_dir, prepared)
        _, status = os.waitpid(pid, 0)
        _kill_orphans({})
        print(f"end {os.waitstatus_to_exitcode(status)}", flush=True)
