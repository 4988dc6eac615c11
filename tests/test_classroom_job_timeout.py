"""`classroom worker --job-timeout S`: a job is stopped after S seconds, also in a pool's children."""

import pytest

from classroom.data.models import Result
from tests.classroom_support import run_cli

pytestmark = pytest.mark.slow  # a worker pool grades in child processes


def test_a_pool_with_a_job_timeout_stops_an_endless_submission_after_it(class_store, sqlite_url, tmp_path):
    endless = tmp_path / "ex00_paths.py"
    endless.write_text("while True:\n    pass\n")
    done = run_cli("submit", "--db", sqlite_url, "--as", "ann@class.test", "--lang", "en", "ex00", endless)
    assert done.returncode == 0, done.stderr
    drained = run_cli("worker", "--db", sqlite_url, "--once", "--sandbox", "process", "--concurrency", "2",
                      "--job-timeout", "3", timeout=120)
    assert drained.returncode == 0, drained.stderr[-3000:]
    with class_store.session() as session:
        [result] = session.query(Result).all()
    assert not result.passed and "3 s" in result.summary, result.summary
    assert "20 s" not in result.summary


def test_a_job_timeout_must_be_a_positive_number(sqlite_url):
    refused = run_cli("worker", "--db", sqlite_url, "--once", "--job-timeout", "0")
    assert refused.returncode != 0 and "--job-timeout" in refused.stderr, refused.stderr
