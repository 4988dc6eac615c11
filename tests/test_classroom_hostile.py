"""Hostile submissions (tests/hostile/) through the class path, graded by `classroom worker` in strict mode.

Each drain: every hostile file is submitted by one learner (after her own
correct ex01, which ex03 builds on; that one with `classroom submit`, the
hostile files through access.submit, which that command calls: a command's start
cost a second each), and a correct submission by another learner (`classroom
submit`) is in the same queue. After `classroom worker
--once --sandbox strict` the test checks each hostile verdict (not passed, a
clear message, nothing of the reference), the honest learner's verdicts
(passed), solutions/, grader/, exercises/ and the progress file (unchanged),
the database (every row but the new verdicts as before), no process of a
submission alive, and nothing received by a listener on 127.0.0.1. Several
files share a drain to keep the test short. Needs root + bubblewrap.
"""

import json
import sqlite3
import time

import pytest
from sandbox_helpers import (Listener, hostile_names, hostile_source, leaked_reference, require_strict,
                             sandbox_uid_processes, seed_progress, snapshot)
from sqlalchemy import select

from classroom.web import access
from classroom.data.roster import import_roster
from classroom.data.sessions import create_sign_in_link
from classroom.data.models import Result, Submission
from tests.classroom_support import add_graded, run_cli, solution, user_id

# slow: workers grade in the strict sandbox; alone: the tests check that no process of a sandbox uid is left,
# which another worker's grading would upset
pytestmark = [pytest.mark.slow, pytest.mark.alone]

NAMES = hostile_names()
GROUPS = [NAMES[i::3] for i in range(3)]  # three drains of seven or eight files
JOB_TIMEOUT_S = 10  # the worker's time limit per job (default 20 s): the test checks containment, not the limit;
# a correct job takes about 3 s at load 5
HONEST = "cy@class.test"
MALLORY = "mallory@class.test"  # submits every hostile file of a drain
# A database row's state columns that grading changes; everything else must stay as it was.
GRADING_COLUMNS = {"submissions": {"status", "attempts"}, "workers": None, "jobs": None, "results": None}


def test_every_hostile_file_is_in_a_group():
    assert NAMES and sorted(sum(GROUPS, [])) == NAMES


def _dump(db_path):
    """{table: sorted rows} of the database, leaving out what grading is allowed to change."""
    out = {}
    with sqlite3.connect(db_path) as db:
        db.row_factory = sqlite3.Row
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            skip = GRADING_COLUMNS.get(table, set())
            if skip is None:
                continue
            rows = [{k: row[k] for k in row.keys() if k not in skip} for row in db.execute(f"SELECT * FROM {table}")]
            out[table] = sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    return out


def _results_rows(db_path):
    with sqlite3.connect(db_path) as db:
        return sorted(db.execute("SELECT * FROM results").fetchall())


@pytest.mark.parametrize("group", GROUPS, ids=["+".join(g) for g in GROUPS])
def test_hostile_submissions_change_nothing_but_their_own_verdicts(group, class_store, sqlite_url, tmp_path):
    require_strict()
    roster = tmp_path / "hostile-roster.csv"
    roster.write_text(f"email,name,role\n{MALLORY},Mallory,learner\n")
    import_roster(class_store, roster)
    earlier = add_graded(class_store, "bob@class.test", "ex03", 0.4, "failed", ["dot_no_scale"])  # other rows
    create_sign_in_link(class_store, "bob@class.test")
    seed_progress()
    listener = Listener()
    try:
        own = tmp_path / "ex01_softmax.py"
        own.write_text(solution("ex01"))
        done = run_cli("submit", "--db", sqlite_url, "--as", MALLORY, "--lang", "en", "ex01", own)
        assert done.returncode == 0, done.stderr
        own_id, ids = int(done.stdout), {}
        mallory = user_id(class_store, MALLORY)
        for name in group:  # her ex03 is graded with her own (correct) ex01
            attack = hostile_source(name, listener.port).encode()
            ids[name] = access.submit(class_store, mallory, "ex03", attack, "ex03_scoring.py", lang="en")
        honest = []
        for ex_id in ("ex00",):
            path = tmp_path / f"honest_{ex_id}.py"
            path.write_text(solution(ex_id))
            done = run_cli("submit", "--db", sqlite_url, "--as", HONEST, "--lang", "zh", ex_id, path)
            assert done.returncode == 0, done.stderr
            honest.append(int(done.stdout))
        db_path = sqlite_url.removeprefix("sqlite:///")
        before, results_before, files_before = _dump(db_path), _results_rows(db_path), snapshot()
        started = time.monotonic()
        drained = run_cli("worker", "--db", sqlite_url, "--once", "--sandbox", "strict", "--require-strict",
                          "--concurrency", "2", "--job-timeout", JOB_TIMEOUT_S, timeout=240)
        took = time.monotonic() - started
        assert drained.returncode == 0, drained.stderr[-3000:]
    finally:
        listener.close()
    print(f"drain of {len(group)} hostile + 2 correct submissions: {took:.1f} s")
    print("\n".join(line for line in drained.stderr.splitlines() if ": job " in line))  # each job's time
    assert listener.received == [], f"the loopback listener received {listener.received}"
    assert sandbox_uid_processes() == [], "a process of a submission is still alive"
    changed = sorted(k for k, v in files_before.items() if snapshot().get(k) != v)
    assert changed == [], f"changed by a submission: {changed}"
    assert _dump(db_path) == before  # users, sessions, links, settings, notes, submissions' code: as they were
    assert set(_results_rows(db_path)) >= set(results_before)  # earlier verdicts untouched

    with class_store.session() as session:
        verdicts = {sid: session.scalars(select(Result).where(Result.submission_id == sid)).all()
                    for sid in list(ids.values()) + honest + [earlier, own_id]}
        owners = dict(session.execute(select(Submission.id, Submission.user_id)).all())
    for sid in list(ids.values()) + honest + [own_id]:
        assert len(verdicts[sid]) == 1, f"submission {sid}: {len(verdicts[sid])} verdicts"
    assert len(verdicts[earlier]) == 1 and verdicts[earlier][0].score == 0.4
    for sid in honest:
        assert verdicts[sid][0].passed, verdicts[sid][0].summary
        assert owners[sid] == user_id(class_store, HONEST)
    assert verdicts[own_id][0].passed, verdicts[own_id][0].summary
    for name in group:
        result = verdicts[ids[name]][0]
        text = json.dumps([result.summary, result.checks, result.report], ensure_ascii=False)
        verdict = json.dumps([result.summary, result.checks, result.score], ensure_ascii=False)
        assert not result.passed and result.status in ("failed", "not_written", "error"), (name, result.status)
        assert result.sandbox == "strict"
        first = next(c for c in result.checks if not c["passed"])
        assert first["message"].strip() and "Traceback" not in first["message"], (name, first["message"])
        assert not leaked_reference(text), (name, leaked_reference(text)[:2])
        assert "FOUND REFERENCE" not in text, name  # nothing read from solutions/, even in its printed output
        assert "FORGED" not in verdict and result.score < 1.0, name  # a printed fake report is only output
