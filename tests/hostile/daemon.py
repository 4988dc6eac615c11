"""Hostile ex03: double fork + setsid: a daemon that outlives the grader."""

import time

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for _ in range(600):
            time.sleep(0.5)
            try:
                open("/tmp/daemon-alive", "w").write(str(time.time()))
            except OSError:
                pass
        os._exit(0)
    os._exit(0)
time.sleep(0.2)
