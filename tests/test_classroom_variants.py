"""Class mode gives each learner their own exercise variant (grader/variants.py): assigned once from the class
secret, stored with each submission, graded and regraded on it, exported; a file's claims change nothing."""

import csv

import pytest
from sqlalchemy import select

from classroom import cli
from classroom.data.settings import set_setting
from classroom.data.submissions import submit
from classroom.data.variants import VARIANT_SECRET, learner_variant
from classroom.data.models import Result, Setting, Submission, VariantAssignment
from classroom.line.worker import run_worker
from grader import variants
from tests.classroom_support import own_solution, run_cli, solution, user_id


@pytest.fixture(autouse=True)
def variants_on(class_store):
    """A class whose learners get their own variants (classroom_support.make_class turns them off)."""
    set_setting(class_store, "variants", 1)


def test_a_learner_keeps_one_variant_per_exercise_stored_with_every_submission(class_store):
    ann, bob = user_id(class_store, "ann@class.test"), user_id(class_store, "bob@class.test")
    first = learner_variant(class_store, ann, "ex06")  # the Practice page's first look assigns it
    assert first != 0 and first == learner_variant(class_store, ann, "ex06")
    assert learner_variant(class_store, bob, "ex06") != first
    forged = "VARIANT = 7\n" + solution("ex06")
    ids = [submit(class_store, ann, "ex06", source, "ex06_positional_encoding.py")
           for source in (solution("ex06"), forged)]
    with class_store.session() as session:
        stored = [session.get(Submission, i).variant for i in ids]
        rows = session.scalars(select(VariantAssignment).where(VariantAssignment.user_id == ann)).all()
    assert stored == [first, first]
    assert [(r.exercise_id, r.variant) for r in rows] == [("ex06", first)]


def test_the_class_secret_decides_and_a_class_can_turn_variants_off(class_store):
    ann, cy = user_id(class_store, "ann@class.test"), user_id(class_store, "cy@class.test")
    first = learner_variant(class_store, ann, "ex09")  # the class's first variant makes its secret
    with class_store.session() as session:
        secret = session.get(Setting, VARIANT_SECRET).value
    assert len(secret) == 64
    assert first == variants.assign(secret, ann, "ex09")
    set_setting(class_store, "variants", 0)
    assert learner_variant(class_store, cy, "ex09") == 0  # not stored: turning them on assigns one
    set_setting(class_store, "variants", 1)
    assert learner_variant(class_store, cy, "ex09") == variants.assign(secret, cy, "ex09")
    with pytest.raises(ValueError, match="variants 2"):
        set_setting(class_store, "variants", 2)


@pytest.mark.slow  # a worker grades three submissions, then regrades them
def test_graded_and_regraded_on_the_stored_variant_and_exported(class_store, sqlite_url, tmp_path, capsys):
    ann, bob = user_id(class_store, "ann@class.test"), user_id(class_store, "bob@class.test")
    name = "ex06_positional_encoding.py"
    own = submit(class_store, ann, "ex06", own_solution(class_store, ann, "ex06"), name)
    copied = submit(class_store, bob, "ex06", own_solution(class_store, ann, "ex06"), name)  # ann's file
    published = submit(class_store, bob, "ex06", solution("ex06"), name)
    assert run_worker(sqlite_url, sandbox="process", once=True, log=lambda _: None) == 3
    assert cli.main(["regrade", "--all", "--here", "--sandbox", "process", "--db", sqlite_url]) == 0
    assert "0 of 3 graded submission(s) changed" in capsys.readouterr().out  # the same variants again
    with class_store.session() as session:
        rows = session.execute(select(Result.submission_id, Result.status).order_by(Result.id)).all()
    assert [status for sid, status in rows if sid == own] == ["passed", "passed"]
    assert [status for sid, status in rows if sid == copied] == ["failed", "failed"]
    assert [status for sid, status in rows if sid == published] == ["failed", "failed"]
    out = tmp_path / "grades.csv"
    assert run_cli("export", "--db", sqlite_url, "--out", out).returncode == 0
    exported = {r["email"]: r for r in csv.DictReader(out.open(encoding="utf-8-sig"))}
    assert exported["ann@class.test"]["ex06_variant"] == str(learner_variant(class_store, ann, "ex06"))
    assert exported["bob@class.test"]["ex06_variant"] == str(learner_variant(class_store, bob, "ex06"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_class_practice_page_says_the_learners_own_value(class_store, sqlite_url, monkeypatch, tmp_path, lang):
    from tests.app_helpers import AppTest, errors_of
    from tests.classroom_support import ROOT, session_token
    from tests.test_classroom_app import PRACTICE

    monkeypatch.setenv("ATTENTION_LAB_CLASS_DB", sqlite_url)
    monkeypatch.setenv("ATTENTION_LAB_HOME", str(tmp_path))
    ann = user_id(class_store, "ann@class.test")
    at = AppTest.from_file(str(ROOT / PRACTICE), default_timeout=60)
    at.session_state["app_lang"] = lang
    at.session_state["class_session"] = session_token(class_store, ann)
    at.run()
    assert errors_of(at) == []
    at.selectbox(key="practice_class_ex").set_value("ex06")
    at.run()
    number = learner_variant(class_store, ann, "ex06")
    value = variants.describe(variants.variant("ex06", number))[0][1]
    shown = [i.value for i in at.info]
    assert variants.variant_line("ex06", number, lang) in shown and f"base={value}" in " ".join(shown)
    at.selectbox(key="practice_class_ex").set_value("ex03")  # no parameter: no variant text
    at.run()
    assert not [i for i in at.info if "base=" in i.value]


def test_migration_0006_goes_down_and_up_keeping_the_submissions(class_store):
    from alembic import command
    from sqlalchemy import inspect

    from classroom.data.db import alembic_config, schema_versions

    ann = user_id(class_store, "ann@class.test")
    sid = submit(class_store, ann, "ex06", solution("ex06"), "ex06_positional_encoding.py")
    config_ = alembic_config(class_store.engine)
    command.downgrade(config_, "0005")
    assert schema_versions(class_store.engine)[0] == "0005"
    tables = inspect(class_store.engine)
    assert "variant_assignments" not in tables.get_table_names()
    assert "variant" not in {c["name"] for c in tables.get_columns("submissions")}
    assert "ix_jobs_reason_started" not in {ix["name"] for ix in tables.get_indexes("jobs")}  # 0007's, gone too
    command.upgrade(config_, "head")
    current, head = schema_versions(class_store.engine)
    assert current == head >= "0007"
    assert {"ix_jobs_reason_state_created", "ix_jobs_reason_started"} <= {
        ix["name"] for ix in inspect(class_store.engine).get_indexes("jobs")}
    with class_store.session() as session:
        assert session.get(Submission, sid).variant == 0  # a submission from before variants: the published one
