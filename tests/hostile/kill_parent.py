"""Hostile ex03: kill the grading server: os.kill(os.getppid(), SIGKILL)."""

import signal

os.kill(os.getppid(), signal.SIGKILL)
