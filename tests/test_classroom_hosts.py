"""Several machines, shown on one: Postgres and two worker pools, each in a network namespace of its own.

The database's namespace reaches each worker's namespace over a veth pair
(10.x addresses inside the namespaces this test creates, nothing else); the
workers reach Postgres only over TCP on those links, the test itself over the
cluster's unix socket. One worker "host" is torn down in the middle of a job
(its link cut, its processes killed, its namespace deleted); the other takes
the job over once the lease runs out, and every submission is graded exactly
once. Needs root, iproute2 and Postgres.
"""

import glob
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from sqlalchemy import func, select, text

from classroom.data.roster import import_roster, init_class
from classroom.data.settings import set_setting
from classroom.data.submissions import submit
from classroom.data.models import Job, Result
from grader.sandbox import strict_problem
from tests.classroom_support import ROOT, solution, user_id
from tests.waiting import wait_until

pytestmark = pytest.mark.slow
SANDBOX = "process" if strict_problem() else "strict"  # the workers' sandbox: strict wherever it can run
LEASE_S = 4


def _ip(*args, netns=None, check=True):
    prefix = ["ip", "netns", "exec", netns] if netns else []
    return subprocess.run([*prefix, "ip", *args], check=check, capture_output=True, text=True)


class Hosts:
    """Three network namespaces: `db` linked to `w1` and to `w2` by veth pairs on 10.N.{1,2}.0/30."""

    def __init__(self):
        tag = f"{os.getpid() % 10000}"
        self.net = 10 + os.getpid() % 200  # second octet: 10.<net>.x.y, inside our namespaces only
        self.names = {role: f"al{tag}{role}" for role in ("db", "w1", "w2")}
        for name in self.names.values():
            subprocess.run(["ip", "netns", "add", name], check=True, capture_output=True)
            _ip("link", "set", "lo", "up", netns=name)
        for i, worker in ((1, "w1"), (2, "w2")):
            db_end, w_end = f"v{tag}d{i}", f"v{tag}w{i}"
            _ip("link", "add", db_end, "netns", self.names["db"], "type", "veth", "peer", "name", w_end,
                "netns", self.names[worker])
            _ip("addr", "add", f"10.{self.net}.{i}.1/30", "dev", db_end, netns=self.names["db"])
            _ip("link", "set", db_end, "up", netns=self.names["db"])
            _ip("addr", "add", f"10.{self.net}.{i}.2/30", "dev", w_end, netns=self.names[worker])
            _ip("link", "set", w_end, "up", netns=self.names[worker])

    def db_address(self, worker):
        """The database's address as that worker's host sees it."""
        return f"10.{self.net}.{1 if worker == 'w1' else 2}.1"

    def address(self, worker):
        """That worker host's own address (the client address Postgres sees)."""
        return f"10.{self.net}.{1 if worker == 'w1' else 2}.2"

    def pids(self, role):
        """Processes in a namespace."""
        out = subprocess.run(["ip", "netns", "pids", self.names[role]], capture_output=True, text=True).stdout
        return [int(p) for p in out.split()]

    def tear_down(self, role):
        """Cut the host's link, kill everything in it, delete its namespace."""
        tag = self.names[role][2:-len(role)]
        _ip("link", "del", f"v{tag}d{role[1]}", netns=self.names["db"], check=False)
        for pid in self.pids(role):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        subprocess.run(["ip", "netns", "del", self.names[role]], capture_output=True)

    def remove(self):
        for role in self.names:
            self.tear_down(role)


@pytest.fixture
def hosts():
    if os.geteuid() != 0 or not shutil.which("ip"):
        pytest.skip("needs root and iproute2 to create network namespaces")
    made = Hosts()
    try:
        yield made
    finally:
        made.remove()


@pytest.fixture
def database(hosts):
    """A Postgres cluster in the `db` namespace, on both links and a unix socket -> (socket URL, port)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    if not found:
        pytest.skip("Postgres is not installed (apt-get install -y postgresql)")
    bindir = Path(found[-1]).parent
    data = Path(tempfile.mkdtemp(prefix="classroom-hosts-pg-"))
    account = pwd.getpwnam("postgres")
    os.chown(data, account.pw_uid, account.pw_gid)
    as_pg = ["runuser", "-u", "postgres", "--"]
    subprocess.run(as_pg + [str(bindir / "initdb"), "-D", str(data / "db"), "-U", "postgres", "--auth=trust"],
                   check=True, capture_output=True)
    with open(data / "db" / "pg_hba.conf", "a") as f:
        f.write(f"host all all 10.{hosts.net}.0.0/16 trust\n")
    port = 5432
    listen = f"{hosts.db_address('w1')},{hosts.db_address('w2')}"
    ctl = ["ip", "netns", "exec", hosts.names["db"], *as_pg, str(bindir / "pg_ctl"), "-D", str(data / "db")]
    subprocess.run(ctl + ["-l", str(data / "log"), "-w", "-o",
                          f"-p {port} -k {data} -c listen_addresses={listen} -c fsync=off", "start"],
                   check=True, capture_output=True)
    subprocess.run(as_pg + [str(bindir / "createdb"), "-h", str(data), "-p", str(port), "-U", "postgres", "lab"],
                   check=True, capture_output=True)
    try:
        yield f"postgresql://postgres@/lab?host={data}&port={port}", port
    finally:
        subprocess.run(ctl + ["-m", "immediate", "stop"], capture_output=True)
        shutil.rmtree(data, ignore_errors=True)


def start_pool(hosts, role, port):
    """`python -m classroom worker` (2 processes, SANDBOX) in a worker host's namespace, over TCP to the database."""
    url = f"postgresql://postgres@{hosts.db_address(role)}:{port}/lab"
    env = dict(os.environ, ATTENTION_LAB_CLASS_DB=url)
    return subprocess.Popen(["ip", "netns", "exec", hosts.names[role], sys.executable, "-m", "classroom", "worker",
                             "--concurrency", "2", "--sandbox", SANDBOX, "--lease", str(LEASE_S)],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def statements_running_from(store, address):
    """How many statements of clients at address Postgres is still running (one might yet commit)."""
    with store.session() as session:
        return session.scalar(text("SELECT count(*) FROM pg_stat_activity WHERE client_addr = CAST(:address AS inet) "
                                   "AND state = 'active'"), {"address": address})


def test_two_worker_hosts_and_one_torn_down_mid_job(hosts, database, tmp_path):
    url, port = database
    store = init_class(url, "prof@class.test")
    roster = tmp_path / "roster.csv"
    roster.write_text("email,name,role\n" + "".join(f"l{i}@class.test,L{i},learner\n" for i in range(12)))
    import_roster(store, roster)
    set_setting(store, "variants", 0)  # the published ex00 is the correct file
    slow = "import time\ntime.sleep(3)\n" + solution("ex00")  # long enough to be caught mid-job
    ids = [submit(store, user_id(store, f"l{i}@class.test"), "ex00", slow if i % 2 else solution("ex00"),
                            "ex00_paths.py") for i in range(12)]
    pools = {role: start_pool(hosts, role, port) for role in ("w1", "w2")}
    try:
        def w1_grading():
            w1 = {str(p) for p in hosts.pids("w1")}
            with store.session() as session:
                running = session.scalars(select(Job.worker_id).where(Job.state == "running")).all()
            return any(worker.rsplit(":", 1)[-1] in w1 for worker in running if worker)

        wait_until(w1_grading, 300, "a job running on the first host", interval=0.1)
        hosts.tear_down("w1")
        with store.session() as session:
            orphaned = session.scalar(select(func.count(Job.id)).where(Job.state == "running"))
        assert orphaned >= 1

        def all_graded():
            with store.session() as session:
                return session.scalar(select(func.count(func.distinct(Result.submission_id)))) == len(ids)

        wait_until(all_graded, 300, "every submission graded", interval=0.1)
        # A late verdict from the torn-down host could only come from a statement Postgres still runs for it.
        wait_until(lambda: statements_running_from(store, hosts.address("w1")) == 0, 60,
                   "the torn-down host's statements to end")
        with store.session() as session:
            per_submission = dict(session.execute(select(Result.submission_id, func.count(Result.id))
                                                  .group_by(Result.submission_id)).all())
            statuses = set(session.scalars(select(Result.status)).all())
            sandboxes = set(session.scalars(select(Result.sandbox)).all())
            retried = session.scalar(select(func.count(Job.id)).where(Job.attempts > 1))
        assert per_submission == {sid: 1 for sid in ids}
        assert statuses == {"passed"} and sandboxes == {SANDBOX}
        assert retried >= 1  # the job of the torn-down host was taken over
    finally:
        for pool in pools.values():
            if pool.poll() is None:
                pool.send_signal(signal.SIGTERM)
                try:
                    pool.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    pool.kill()
        store.close()
