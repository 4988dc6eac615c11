"""The self-study learner's grading results: recorded from grader reports, ranked, read by the app.

The grader only reports. This module records: the Practice page hands it the
report it got (SelfStudyLearner.record), and a report that `python -m grader`
left in a terminal run (course.common.paths.waiting_reports_dir) is recorded
the next time the app reads progress, then removed. Per target directory and
exercise the file keeps two records:

- "newest": the latest grading, i.e. the file as it stands now (the demos and
  the lab run the learner's file only where this one passed);
- "best": the best grading so far by course.common.ranking, the rule the class
  gradebook uses too (the sidebar, the chapter footers, Practice and ch09 show it).

The file is `$ATTENTION_LAB_HOME/progress.json` (default `.attention_lab/` in the
project root), written atomically under a lock, so a crash mid-write or two
app sessions recording at once never lose a result. A damaged file is renamed
aside (never overwritten) for a person to recover.
"""

import fcntl
import json
import os
import time
from contextlib import contextmanager
from pathlib import Path

from course.common import ranking
from course.common.paths import PROJECT_ROOT, atomic_write_text, data_home, waiting_reports_dir

FORMAT_VERSION = 2  # 1: {ex_id: record} per target (the newest only); 2: {ex_id: {"newest", "best"}}
RECORD_FIELDS = ("passed", "score", "status", "summary")  # what a record keeps of a report's exercise entry


def progress_path():
    """The JSON file with the recorded grading results."""
    return data_home() / "progress.json"


@contextmanager
def _locked():
    """Hold the progress lock (one recorder at a time, across processes)."""
    lock = data_home() / ".progress.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _upgraded(entry):
    """A target's {ex_id: {"newest", "best"}} from either format (a version-1 record is both)."""
    out = {}
    for ex_id, value in entry.items():
        if isinstance(value, dict) and isinstance(value.get("newest"), dict):
            out[ex_id] = {"newest": value["newest"], "best": value.get("best") or value["newest"]}
        elif isinstance(value, dict):
            out[ex_id] = {"newest": dict(value, seq=0), "best": dict(value, seq=0)}
    return out


def _read_all(keep_damaged=False):
    """The whole progress file (version 2 in memory), or an empty one if absent or unreadable."""
    path = progress_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and isinstance(data.get("targets"), dict):
            targets = {k: _upgraded(v) for k, v in data["targets"].items() if isinstance(v, dict)}
            return {"version": FORMAT_VERSION, "targets": targets}
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


def _rank_fields(record):
    return record.get("passed"), record.get("score"), record.get("seq", 0)


def _record_into(data, target, results):
    """Record {ex_id: record} for a target in the in-memory file: each becomes the newest, and the best where
    it ranks above the best so far."""
    entry = data["targets"].setdefault(target_key(target), {})
    seq = 1 + max((r["newest"].get("seq", 0) for r in entry.values()), default=0)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    for ex_id, result in results.items():
        record = dict(result, graded_at=stamp, seq=seq)
        held = entry.get(ex_id)
        best = record if held is None else ranking.best([held["best"], record], _rank_fields)
        entry[ex_id] = {"newest": record, "best": best}


def _write(data):
    atomic_write_text(progress_path(), json.dumps(data, indent=2, ensure_ascii=False))


def save_results(target, results):
    """Record exercise results {ex_id: {"passed", "score", "status", "summary"}} for a target."""
    with _locked():
        data = _read_all(keep_damaged=True)
        _record_into(data, target, results)
        _write(data)


def records_of(report):
    """{ex_id: record} of a grader report (its JSON form: {"exercises": [{"id", "passed", ...}]})."""
    return {entry["id"]: {field: entry.get(field) for field in RECORD_FIELDS} for entry in report["exercises"]}


def record_report(target, report):
    """Record a grader report (its JSON form) of a target directory."""
    save_results(target, records_of(report))


def record_waiting_reports():
    """Record, oldest first, the reports terminal runs of the grader left, and remove them; a file that is
    not a report is set aside as `<name>.unreadable`. Returns how many were recorded."""
    folder = waiting_reports_dir()
    if not folder.is_dir():
        return 0
    recorded = 0
    with _locked():
        files = sorted(folder.glob("*.json"))
        if not files:
            return 0
        data = _read_all(keep_damaged=True)
        for path in files:
            try:
                waiting = json.loads(path.read_text(encoding="utf-8"))
                _record_into(data, waiting["target"], records_of(waiting["report"]))
            except (OSError, ValueError, KeyError, TypeError):
                os.replace(path, path.with_name(path.name + ".unreadable"))
                continue
            recorded += 1
        _write(data)
        for path in files:
            path.unlink(missing_ok=True)
    return recorded


def _load(target, which):
    record_waiting_reports()
    target = PROJECT_ROOT / "exercises" if target is None else target
    entry = _read_all()["targets"].get(target_key(target), {})
    return {ex_id: dict(records[which]) for ex_id, records in entry.items()}


def load_results(target=None):
    """{ex_id: record} of each exercise's best result so far for a target (default: exercises/)."""
    return _load(target, "best")


def load_newest(target=None):
    """{ex_id: record} of each exercise's latest result for a target (default: exercises/): the files as they
    stand now."""
    return _load(target, "newest")
