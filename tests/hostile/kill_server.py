"""Hostile ex03: stop, then kill, the grading server (os.getppid()), pid 1 and every process of its own uid.

Only for the strict sandbox: in process mode that uid is the grader's."""

import signal

targets = {os.getppid(), 1} | {int(p) for p in os.listdir("/proc")
                               if p.isdigit() and os.stat(f"/proc/{p}").st_uid == os.getuid()}
targets.discard(os.getpid())
for sig in (signal.SIGSTOP, signal.SIGKILL):
    for pid in targets:
        try:
            os.kill(pid, sig)
        except OSError:
            pass
