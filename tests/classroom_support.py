"""Fixtures for the class-mode tests: real SQLite files, a real Postgres server, the CLI."""

import configparser
import glob
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import insert, select

from classroom.data.roster import import_roster, init_class, user_by_email, user_by_id
from classroom.data.sessions import create_sign_in_link, redeem_sign_in_token
from classroom.data.settings import set_setting
from classroom.data.submissions import submit
from classroom.data.variants import assigned_variant
from classroom.data.models import Job, Result, Submission, User, utcnow

ROOT = Path(__file__).resolve().parent.parent
LEARNERS = ["ann@class.test", "bob@class.test", "cy@class.test"]
ROSTER = "email,name,role\nann@class.test,Ann,learner\nbob@class.test,Bob,learner\n" \
         "cy@class.test,Cy,learner\nta@class.test,Tia,ta\n"
INSTRUCTOR = "prof@class.test"


def run_cli(*args, timeout=300, **kwargs):
    """`python -m classroom ARGS` in the project root -> CompletedProcess (text)."""
    return subprocess.run([sys.executable, "-m", "classroom", *map(str, args)], cwd=ROOT, text=True,
                          capture_output=True, timeout=timeout, **kwargs)


def make_class(url, tmp_path):
    """An initialised class with the ROSTER; limits off (tests submit quickly) -> Store."""
    store = init_class(url, INSTRUCTOR)
    roster = Path(tmp_path) / "roster.csv"
    roster.write_text(ROSTER)
    import_roster(store, roster)
    set_setting(store, "max_in_flight", 0)
    set_setting(store, "per_hour", 0)
    # the class's mechanics are tested with the published references as the correct files (every exercise has
    # a variant parameter); the per-learner variants in class mode: tests/test_classroom_variants.py,
    # tests/test_exercise_variants.py, and the tests that submit own_solution after turning them on
    set_setting(store, "variants", 0)
    return store


@pytest.fixture
def sqlite_url(tmp_path):
    return f"sqlite:///{tmp_path / 'class.db'}"


@pytest.fixture
def class_store(sqlite_url, tmp_path):
    store = make_class(sqlite_url, tmp_path)
    yield store
    store.close()


# the parameters of a fixture that gives a database on each backend: the Postgres one is `slow` (tests/conftest.py)
BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.slow)]


@pytest.fixture(params=BACKENDS)
def any_store(request, tmp_path):
    """A class store on SQLite, then on Postgres (the test runs once on each; the Postgres run is `slow`)."""
    url = f"sqlite:///{tmp_path / 'class.db'}" if request.param == "sqlite" else request.getfixturevalue("pg_url")
    store = make_class(url, tmp_path)
    yield store
    store.close()


def passed_verdict(score=1.0, run_s=0.0):
    """The Result fields of a passing verdict (queue.finish's `verdict`), for tests that grade nothing."""
    return dict(status="passed", passed=True, raw_score=score, score=score, summary="", checks=[], mistake_ids=[],
                report={}, sandbox="process", grader_version="t", run_s=run_s)


def submit_set_aside(store, user, ex_id, source, filename, **kwargs):
    """Submit `source` as a job already set aside (it runs with the whole time limit, after the other submissions)
    -> submission id: for a test whose submission is slow on purpose, which the worker would otherwise set aside at
    its first run (past its exercise's set-aside time: classroom/line/reference_times.py)."""
    from sqlalchemy import update

    sid = submit(store, user, ex_id, source, filename, **kwargs)
    with store.session() as session:
        assert session.execute(update(Job).where(Job.submission_id == sid).values(full_time=True)).rowcount == 1
    return sid


def claim_at(store, worker_id, now=None, lease_s=None):
    """queue.claim_in in a transaction of its own, at `now` (naive UTC; None: now) -> Claim or None."""
    from classroom.line import queue

    with store.session() as session:
        return queue.claim_in(session, worker_id, lease_s=queue.LEASE_S if lease_s is None else lease_s, now=now)


def user_id(store, email):
    return user_by_email(store, email).id


def session_token(store, uid):
    """A session token for a roster member, got the way a learner gets one: a sign-in link, redeemed."""
    link, _ = create_sign_in_link(store, user_by_id(store, uid).email)
    return redeem_sign_in_token(store, link.split("token=", 1)[1])


def add_graded(store, email, ex_id, score, status, mistakes=(), minutes=0, late=False):
    """A submission with a stored verdict, without running the grader (for gradebook tests)."""
    now = utcnow() + timedelta(minutes=minutes)
    with store.session() as session:
        sub = Submission(user_id=user_by_email(store, email).id, exercise_id=ex_id, source="# x",
                         kind=".py", filename="x.py", created_at=now, status="done", late=late)
        session.add(sub)
        session.flush()
        job = Job(submission_id=sub.id, state="done", attempts=1, created_at=now)
        session.add(job)
        session.flush()
        session.add(Result(submission_id=sub.id, job_id=job.id, status=status, passed=status == "passed",
                           raw_score=score, score=score, summary="", checks=[], mistake_ids=list(mistakes),
                           report={}, created_at=now))
        return sub.id


def solution(ex_id):
    from classroom.data.exercise_table import get

    return (ROOT / "solutions" / get(ex_id).filename).read_text()


def own_solution(store, uid, ex_id):
    """The reference as this learner writes it for their own exercise variant (grader/variants.py)."""
    from tests.exercise_variant_support import personalise

    with store.session() as session:
        number = assigned_variant(session, uid, ex_id)
    return personalise(solution(ex_id), ex_id, number)


def stub(ex_id):
    from classroom.data.exercise_table import get

    return (ROOT / "exercises" / get(ex_id).filename).read_text()


def many_submissions(store, learners, per_learner):
    """learners (l0@class.test, l1@...) x per_learner graded-looking submissions of ex00, inserted in bulk
    -> the learners' user ids."""
    now = utcnow()
    with store.session() as session:
        session.execute(insert(User), [dict(email=f"l{i}@class.test", name=f"L{i}", role="learner", created_at=now)
                                       for i in range(learners)])
        ids = list(session.scalars(select(User.id).where(User.email.like("l%@class.test")).order_by(User.id)))
        session.execute(insert(Submission), [
            dict(user_id=uid, exercise_id="ex00", source="x = 1\n", kind=".py", filename="ex00.py", created_at=now,
                 status="done", attempts=1, late=False, penalty=0.0, lang="en")
            for uid in ids for _ in range(per_learner)])
    return ids


def deploy_unit(name):
    """A systemd unit of deploy/ (attention-lab-app.service, ...) read as sections of keys, names kept as written."""
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str
    parser.read(ROOT / "deploy" / name)
    return parser


# ---- Postgres: Debian's server, started for the test session ---------------------------------


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresCluster:
    """A throwaway Postgres cluster in a temporary folder, which a test may stop and start again."""

    def __init__(self):
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
        if not found:
            if os.environ.get("CLASSROOM_REQUIRE_POSTGRES"):
                pytest.fail("Postgres is not installed: apt-get install -y postgresql")
            pytest.skip("Postgres is not installed (apt-get install -y postgresql); CI installs it")
        self.bindir = Path(found[-1]).parent
        self.data = Path(tempfile.mkdtemp(prefix="classroom-pg-"))
        self.prefix = []
        if os.geteuid() == 0:  # initdb refuses root: run the server as the postgres user
            account = pwd.getpwnam("postgres")
            os.chown(self.data, account.pw_uid, account.pw_gid)
            self.prefix = ["runuser", "-u", "postgres", "--"]
        self.port = _free_port()
        subprocess.run(self.prefix + [str(self.bindir / "initdb"), "-D", str(self.data / "db"), "-U", "postgres",
                                      "--auth=trust", "-E", "UTF8"], check=True, capture_output=True)
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}"

    def _ctl(self, *args, check=True):
        subprocess.run(self.prefix + [str(self.bindir / "pg_ctl"), "-D", str(self.data / "db"), *args],
                       check=check, capture_output=True)

    def start(self):
        self._ctl("-l", str(self.data / "log"), "-w", "-o",
                  f"-p {self.port} -k {self.data} -c listen_addresses=127.0.0.1 -c fsync=off", "start")

    def stop(self, mode="fast"):
        self._ctl("-m", mode, "-w", "stop", check=False)

    def remove(self):
        self.stop("immediate")
        shutil.rmtree(self.data, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server():
    """A throwaway Postgres cluster -> base URL without a database name."""
    cluster = PostgresCluster()
    cluster.start()
    try:
        yield cluster.url
    finally:
        cluster.remove()


@pytest.fixture
def own_postgres():
    """A Postgres cluster of this test's own, which the test may stop and start -> the PostgresCluster."""
    cluster = PostgresCluster()
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.remove()


@pytest.fixture
def pg_url(request):
    """A fresh database on the test Postgres server -> its URL. Fails a test not marked `slow` before the server
    starts (a fixture that asks for it through request.getfixturevalue escapes the collection's check)."""
    import psycopg

    if request.node.get_closest_marker("slow") is None:
        pytest.fail(f"{request.node.nodeid} uses Postgres (pg_url) but is not marked slow: give it @pytest.mark.slow, "
                    "or its parameter pytest.param(..., marks=pytest.mark.slow) (tests/classroom_support.py BACKENDS)",
                    pytrace=False)
    postgres_server = request.getfixturevalue("postgres_server")

    name = "t_" + "".join(c if c.isalnum() else "_" for c in request.node.name.lower())[:50] + \
        f"_{int(time.time() * 1000) % 100000}"
    with psycopg.connect(f"{postgres_server}/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{postgres_server}/{name}"
