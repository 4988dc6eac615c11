"""Where grading results live, so that the app can show a learner's progress.

The grader saves each exercise's latest result for a target directory in one
JSON file, written atomically (a temporary file renamed over the old one), so
a crash mid-write never loses earlier results. The location is
`$ATTENTION_LAB_HOME/progress.json`, by default `.attention_lab/` in the
project root.
"""

import json
import os
import time
from pathlib import Path

from course.common.paths import PROJECT_ROOT, atomic_write_text, data_home

FORMAT_VERSION = 1


def progress_path():
    """The JSON file with the saved grading results."""
    return data_home() / "progress.json"


def _read_all(keep_damaged=False):
    """The whole progress file, or an empty one if absent or unreadable.

    With keep_damaged, an unreadable file is renamed aside (never overwritten)
    so that a person can recover it.
    """
    path = progress_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and isinstance(data.get("targets"), dict):
            return data
    except FileNotFoundError:
        return {"version": FORMAT_VERSION, "targets": {}}
    except (json.JSONDecodeError, UnicodeDecodeError):
        pass
    if keep_damaged:
        os.replace(path, path.with_name(f"{path.name}.damaged-{int(time.time())}"))
    return {"version": FORMAT_VERSION, "targets": {}}


def target_key(target):
    """Results are filed under the target directory's absolute path."""
    return str(Path(target).resolve())


def save_results(target, results):
    """Record exercise results {ex_id: {"passed", "score", ...}} for a target."""
    data = _read_all(keep_damaged=True)
    entry = data["targets"].setdefault(target_key(target), {})
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    for ex_id, result in results.items():
        entry[ex_id] = dict(result, graded_at=stamp)
    atomic_write_text(progress_path(), json.dumps(data, indent=2, ensure_ascii=False))


def load_results(target=None):
    """Saved results {ex_id: record} for a target (default: exercises/)."""
    target = PROJECT_ROOT / "exercises" if target is None else target
    return dict(_read_all()["targets"].get(target_key(target), {}))
