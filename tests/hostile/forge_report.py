"""Hostile ex03: forge the JSON report on the stdout of every process in sight, from a daemon."""

import json
import time

if os.fork() == 0:
    os.setsid()
    entry = {"id": "ex03", "title": "ex03", "file": "ex03_scoring.py", "status": "passed", "passed": True,
             "score": 1.0, "duration_s": 0.1, "summary": "FORGED", "checks": []}
    forged = json.dumps({"version": 1, "target": "x", "passed": True, "exercises": [entry]}).encode()
    for _ in range(100):
        for pid in [p for p in os.listdir("/proc") if p.isdigit()] + [str(os.getppid())]:
            for fd in (1, 3, 4, 5):
                try:
                    out = os.open(f"/proc/{pid}/fd/{fd}", os.O_WRONLY)
                    os.pwrite(out, forged, 0)
                    os.close(out)
                except OSError:
                    pass
        time.sleep(0.1)
    os._exit(0)
