"""The round robin by learner holds while workers finish jobs, in each batch of the claim order (new submissions,
regrades, submissions set aside), on SQLite and Postgres; and the page's position and wait forecast, read before
each claim, name the job claimed next (classroom/data/turns.py, queue.py, line.py, eta.py)."""

import sqlite3

from classroom.line import live, queue
from classroom.data.submissions import submit
from tests.classroom_support import passed_verdict, user_id

CY, ANN, BOB = "cy@class.test", "ann@class.test", "bob@class.test"


def _submit(store, email, n, prefix="x"):
    """n submissions of ex00 by one learner -> their ids."""
    return [submit(store, user_id(store, email), "ex00", f"{prefix} = {i}\n", "ex00.py") for i in range(n)]


def _line(snap, submissions):
    """The queued ones of `submissions` in the order of their positions in a live snapshot, with their forecast
    starts -> [(submission id, start s)]; the positions count 1, 2, 3... with no gap."""
    queued = {sid: snap.get(sid) for sid in submissions if snap.get(sid).state == "queued"}
    ranked = sorted(queued.items(), key=lambda item: item[1].position)
    assert [state.position for _, state in ranked] == list(range(1, len(ranked) + 1))
    return [(sid, state.start_s) for sid, state in ranked]


def _drain(store, submissions, finish=True, claims=None):
    """One live worker claims every queued job (or the first `claims`), finishing each (finish: store its verdict;
    else set it aside) before the next claim. Before each claim the live snapshot must give position 1 to the job
    then claimed, and the forecast must start the queued jobs in the order of their positions -> (the submission
    ids in claim order, the order the first snapshot forecast)."""
    queue.register_worker(store, "w", "host", 1, "process")
    order, forecast = [], None
    while True:
        ahead = _line(live.Snapshot(store), submissions)
        starts = [start for _, start in ahead]
        assert starts == sorted(starts)  # one worker: each starts after the one ahead of it
        forecast = [sid for sid, _ in ahead] if forecast is None else forecast
        claim = queue.claim(store, "w") if len(order) != claims else None
        if claim is None:
            assert ahead == [] or len(order) == claims
            return order, forecast
        assert ahead[0][0] == claim.submission_id  # the page's position 1 is the job claimed
        order.append(claim.submission_id)
        assert (queue.finish(store, claim, passed_verdict()) if finish else queue.set_aside(store, claim))


def _place(order, sid, store, what):
    place = order.index(sid) + 1
    print(f"{what} ({store.engine.dialect.name}): claimed {place} of {len(order)}")
    return place


def test_a_job_queued_behind_six_of_another_learner_is_claimed_second_while_workers_finish(any_store):
    cy = _submit(any_store, CY, 6)
    ann = _submit(any_store, ANN, 1)[0]
    order, forecast = _drain(any_store, cy + [ann])
    assert _place(order, ann, any_store, "ann's single job behind cy's six, each finished") == 2
    assert order == [cy[0], ann] + cy[1:]
    assert forecast == order  # the first page's positions held as the jobs were graded


def test_a_regrade_keeps_the_round_robin_while_workers_finish(any_store):
    ann, bob = _submit(any_store, ANN, 3), _submit(any_store, BOB, 1)
    _drain(any_store, ann + bob)  # graded once
    assert queue.enqueue_regrade(any_store) == 4  # ann's three regrades get lower ids than bob's one
    order, forecast = _drain(any_store, ann + bob)
    assert _place(order, bob[0], any_store, "bob's single regrade behind ann's three, each finished") == 2
    assert order == forecast == [ann[0], bob[0], ann[1], ann[2]]


def test_submissions_set_aside_keep_the_round_robin_while_workers_finish(any_store):
    cy = _submit(any_store, CY, 3)
    ann = _submit(any_store, ANN, 1)[0]
    first_runs, _ = _drain(any_store, cy + [ann], finish=False, claims=4)  # each first run passes its normal time
    assert first_runs == [cy[0], ann, cy[1], cy[2]]
    order, forecast = _drain(any_store, cy + [ann])  # the whole limit each, after the submissions not set aside
    assert _place(order, ann, any_store, "ann's job set aside behind cy's three, each finished") == 2
    assert order == forecast == [cy[0], ann, cy[1], cy[2]]


def test_migration_0011_gives_the_queued_jobs_the_turns_they_had(tmp_path):
    from alembic import command

    from classroom.data.db import Store, alembic_config, migrate

    url = f"sqlite:///{tmp_path / 'old.db'}"
    store = Store(url, check=False)
    config = alembic_config(store.engine)
    with store.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0010")
    with sqlite3.connect(tmp_path / "old.db") as db:  # ann: a job done, three queued, one set aside; bob: one queued
        for email in ("ann@x.test", "bob@x.test"):
            db.execute("INSERT INTO users (email, name, role, created_at) VALUES (?, 'L', 'learner', '2026-01-01')",
                       (email,))
        jobs = [(1, "submit", "done", 0), (1, "submit", "queued", 0), (2, "submit", "queued", 0),
                (1, "regrade", "queued", 0), (1, "submit", "queued", 0), (1, "submit", "queued", 1),
                (1, "regrade", "running", 0)]
        for n, (user, reason, state, full_time) in enumerate(jobs, start=1):
            db.execute("INSERT INTO submissions (id, user_id, exercise_id, source, kind, filename, created_at, "
                       "status, attempts, late, penalty) VALUES (?, ?, 'ex00', 'x', '.py', 'x.py', '2026-01-01', "
                       "'queued', 0, 0, 0)", (n, user))
            db.execute("INSERT INTO jobs (id, submission_id, reason, state, attempts, full_time, created_at, error) "
                       "VALUES (?, ?, ?, ?, 0, ?, '2026-01-01', '')", (n, n, reason, state, full_time))
    migrate(store.engine)
    with sqlite3.connect(tmp_path / "old.db") as db:
        assert db.execute("SELECT turn FROM jobs ORDER BY id").fetchall() == [(1,), (1,), (1,), (1,), (2,), (1,), (2,)]
