"""Shared test setup: progress and notes go to a temporary home, never the repo."""

import os
import tempfile

# Set before any project module reads it: grader runs in tests must not touch
# the learner's real progress file.
os.environ.setdefault("ATTENTION_LAB_HOME", tempfile.mkdtemp(prefix="attention-lab-test-home-"))
