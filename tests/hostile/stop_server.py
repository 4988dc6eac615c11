"""Hostile ex03: stop the grading server with SIGSTOP and leave it stopped."""

import signal

try:
    os.kill(os.getppid(), signal.SIGSTOP)
except OSError as err:
    print("could not stop the server:", err)
