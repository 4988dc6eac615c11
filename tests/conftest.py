"""Shared test setup: progress and notes go to a temporary home, never the repo."""

import atexit
import os
import shutil
import tempfile

# Set before any project module reads it: grader runs in tests must not touch
# the learner's real progress file.
if "ATTENTION_LAB_HOME" not in os.environ:
    os.environ["ATTENTION_LAB_HOME"] = tempfile.mkdtemp(prefix="attention-lab-test-home-")
    atexit.register(shutil.rmtree, os.environ["ATTENTION_LAB_HOME"], ignore_errors=True)
