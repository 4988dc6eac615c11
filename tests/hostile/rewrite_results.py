"""Hostile ex03: rewrite the results after the child exited, from a background process."""

import glob
import sys
import time

_format = sys.modules["_harness.result_file"]

learner = os.getpid()
if os.fork() == 0:
    os.setsid()
    while os.getppid() == learner:  # wait until the learner's process has exited
        time.sleep(0.001)
    forged = {"error": {"kind": "exception", "type": "Forged", "message": "FORGED RESULT",
                        "where": None, "traceback": ""}}
    for _ in range(200):
        time.sleep(0.05)
        for path in glob.glob("results/*" + _format.RESULT_SUFFIX) + glob.glob("/job/results/*" + _format.RESULT_SUFFIX):
            try:
                _format.write(forged, path)
            except Exception:
                pass
        for path in ("status.json", "/job/status.json"):
            try:
                open(path, "w").write('{"timed_out": false, "exit_code": 0, "elapsed_s": 0.1}')
            except OSError:
                pass
    os._exit(0)
