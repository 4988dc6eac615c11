"""Feedback in the learner's language: stored with the submission, used by the worker and by regrades."""

import sqlite3

import pytest
from sqlalchemy import select

from classroom.web import feedback
from classroom.data.submissions import SubmitRefused, submit
from classroom.data.db import Store, migrate, schema_versions
from classroom.data.models import Result, Submission
from tests.classroom_support import run_cli, solution, user_id

NOSCALE = solution("ex03").replace(" / math.sqrt(d)", "")


def _newest_result(store, submission_id):
    with store.session() as session:
        return session.scalars(select(Result).where(Result.submission_id == submission_id)
                               .order_by(Result.id.desc())).first()


def _direct_report(lang, path):
    """The grader's own report for a file (what `python -m grader --lang LANG` prints from)."""
    from grader.core import Submission as GraderSubmission, grade_submissions
    from grader.report import Report

    result = grade_submissions([GraderSubmission("ex03", path.read_text(), path.name)], lang=lang)[0]
    return Report("x", [result], lang).to_dict()["exercises"][0]


def _messages(entry):
    return [(c["id"], c["message"], c["hint"]) for c in entry["checks"]]


@pytest.mark.slow
def test_submit_records_the_language_and_the_worker_grades_in_it(class_store, sqlite_url, tmp_path):
    path = tmp_path / "ex03_scoring.py"
    path.write_text(NOSCALE)
    ids = {}
    for email, lang in (("ann@class.test", "zh"), ("bob@class.test", "en")):
        submit(class_store, user_id(class_store, email), "ex01", solution("ex01"), "ex01_softmax.py")
        run = run_cli("submit", "--db", sqlite_url, "--as", email, "--lang", lang, "ex03", path)
        assert run.returncode == 0, run.stderr
        ids[lang] = int(run.stdout.strip())
    with class_store.session() as session:
        assert {s.id: s.lang for s in session.scalars(select(Submission).where(Submission.id.in_(ids.values())))} \
            == {ids["zh"]: "zh", ids["en"]: "en"}
    drained = run_cli("worker", "--db", sqlite_url, "--once", "--sandbox", "process")
    assert drained.returncode == 0, drained.stderr
    for lang, sid in ids.items():
        result = _newest_result(class_store, sid)
        entry = result.report["exercises"][0]
        assert result.report["lang"] == lang and result.status == "failed"
        assert _messages(entry) == _messages(_direct_report(lang, path))  # the command line's words
        assert result.mistake_ids == ["dot_no_scale"]  # the same id in either language
    zh_text = feedback.feedback_text(_newest_result(class_store, ids["zh"]).report)
    en_text = feedback.feedback_text(_newest_result(class_store, ids["en"]).report)
    assert zh_text != en_text and any("\u4e00" <= ch <= "\u9fff" for ch in zh_text)
    assert not any("\u4e00" <= ch <= "\u9fff" for ch in en_text)

    regrade = run_cli("regrade", "--db", sqlite_url, "--all", "--here", "--sandbox", "process")
    assert regrade.returncode == 0, regrade.stderr
    for lang, sid in ids.items():  # a regrade keeps each submission's language
        result = _newest_result(class_store, sid)
        assert result.report["lang"] == lang and result.mistake_ids == ["dot_no_scale"]


def test_a_blocked_verdict_is_in_the_submissions_language(class_store, sqlite_url):
    from classroom.line.worker import run_worker

    ann = user_id(class_store, "ann@class.test")
    sid = submit(class_store, ann, "ex03", solution("ex03"), "ex03_scoring.py", lang="zh")
    run_worker(sqlite_url, sandbox="process", once=True, log=lambda _: None)
    result = _newest_result(class_store, sid)
    assert result.status == "blocked" and result.summary.startswith("请先通过 ex01")


@pytest.mark.slow
def test_submit_language_defaults_to_the_locale_and_refuses_unknown_ones(class_store, sqlite_url, tmp_path):
    import os

    path = tmp_path / "ex00_paths.py"
    path.write_text(solution("ex00"))
    env = {k: v for k, v in os.environ.items() if k not in ("LC_ALL", "LC_MESSAGES", "LANG")}
    run = run_cli("submit", "--db", sqlite_url, "--as", "ann@class.test", "ex00", path,
                  env={**env, "LANG": "zh_CN.UTF-8"})
    assert run.returncode == 0, run.stderr
    run_c = run_cli("submit", "--db", sqlite_url, "--as", "bob@class.test", "ex00", path, env={**env, "LANG": "C"})
    assert run_c.returncode == 0, run_c.stderr
    with class_store.session() as session:
        assert session.get(Submission, int(run.stdout)).lang == "zh"
        assert session.get(Submission, int(run_c.stdout)).lang == "en"
    bad = run_cli("submit", "--db", sqlite_url, "--as", "ann@class.test", "--lang", "fr", "ex00", path)
    assert bad.returncode == 2 and "--lang" in bad.stderr
    with pytest.raises(SubmitRefused, match="language 'fr'"):
        submit(class_store, user_id(class_store, "ann@class.test"), "ex00", "x", "x.py", lang="fr")


def test_migration_0002_gives_old_submissions_english(tmp_path):
    from alembic import command

    url = f"sqlite:///{tmp_path / 'old.db'}"
    store = Store(url, check=False)
    config = __import__("classroom.data.db", fromlist=["alembic_config"]).alembic_config(store.engine)
    with store.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0001")
    with sqlite3.connect(tmp_path / "old.db") as db:  # a class graded before the language column
        db.execute("INSERT INTO users (email, name, role, created_at) VALUES ('a@b.c', 'A', 'learner', '2026-01-01')")
        db.execute("INSERT INTO submissions (user_id, exercise_id, source, kind, filename, created_at, status, "
                   "attempts, late, penalty) VALUES (1, 'ex00', 'x', '.py', 'x.py', '2026-01-01', 'done', 1, 0, 0)")
    current, head = schema_versions(store.engine)
    assert current == "0001" and head > "0001"
    with pytest.raises(Exception, match="schema version 0001"):
        Store(url)
    migrate(store.engine)
    assert schema_versions(store.engine) == (head, head)
    with Store(url).session() as session:
        assert session.scalar(select(Submission.lang)) == "en"
