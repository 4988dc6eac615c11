"""Where things live: the project root, the learner's data folder, and atomic file writes.

Imports nothing from the project, so every part of course/, the grader and the
class server can use it.
"""

import os
import tempfile
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def data_home():
    """The folder that holds the learner's progress and notes."""
    return Path(os.environ.get("ATTENTION_LAB_HOME", PROJECT_ROOT / ".attention_lab"))


def atomic_write_text(path, text):
    """Write text to path so that readers see the old or the new file, never half."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def waiting_reports_dir():
    """Where `python -m grader`, run by a person in a terminal, leaves each report for the app to record
    (the self-study Learner records and removes them: course/app/progress.py)."""
    return data_home() / "reports"
