"""The test tiers mean what they say: the fast tier (`-m "not slow"`) needs no browser, Postgres or strict sandbox
and asserts no duration, and tests/conftest.py refuses a test that would put one there unmarked."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each test collects in a child pytest (the whole suite: ~10 s at no load)

ROOT = Path(__file__).resolve().parent.parent
# what the fast tier may not use, written out here rather than read from tests/conftest.py, which it checks
HEAVY_FIXTURES = {"browsers", "chromiums", "postgres_server", "pg_url", "own_postgres", "strict_available", "tiny"}
HEAVY_PARAMS = {"'postgres'", "'strict'"}  # any_store's Postgres run, a `sandbox` parameter's strict sandbox
SERIAL_MARKS = {"timing", "alone"}  # tests/run_suite.py's serial phase


def pytest_child(*args, listing=None):
    """`python -m pytest ARGS` in the project root, not as an xdist worker -> CompletedProcess (text)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith(("PYTEST_", "ATTENTION_LAB_HOME"))}
    env["PYTHONPATH"] = str(ROOT)
    env["COLUMNS"] = "1000"  # -ra's summary lines whole: pytest cuts them to the terminal's width (CI's is narrow)
    if listing:
        env["TIER_LISTING"] = str(listing)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", *map(str, args)],
                          cwd=ROOT, env=env, text=True, capture_output=True, timeout=600)


def pytest_on(folder, *args):
    """pytest ARGS on the test files in `folder`, with the suite's settings and tests/conftest.py as a plugin (its
    checks and fixtures) -> CompletedProcess (text)."""
    return pytest_child("-p", "tests.conftest", "-c", ROOT / "pytest.ini", "--rootdir", folder, *args, folder)


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    """Every test of the suite, as its collection lists it -> [{id, marks, fixtures, params}] (tests/tier_listing.py)."""
    listing = tmp_path_factory.mktemp("tiers") / "listing.json"
    child = pytest_child("--collect-only", "-q", "-p", "tests.tier_listing", listing=listing)
    assert child.returncode == 0, child.stdout[-3000:] + child.stderr[-3000:]
    tests = json.loads(listing.read_text())
    assert len(tests) > 2000  # the whole suite
    return tests


def test_the_fast_tier_needs_no_browser_postgres_or_strict_sandbox_and_times_nothing(suite):
    fast = [test for test in suite if "slow" not in test["marks"]]  # what -m "not slow" selects
    heavy = {test["id"]: sorted(HEAVY_FIXTURES & set(test["fixtures"])) + sorted(HEAVY_PARAMS & set(test["params"].values()))
             + sorted(SERIAL_MARKS & set(test["marks"])) for test in fast}
    assert not {name: what for name, what in heavy.items() if what}
    assert len(fast) > 1000
    # any_store's Postgres runs are slow; its SQLite runs are fast unless the test is slow for another reason
    runs = [(test["params"]["any_store"], "slow" in test["marks"]) for test in suite if "any_store" in test["params"]]
    assert ("'postgres'", False) not in runs and ("'sqlite'", False) in runs


def test_every_file_that_checks_for_live_sandbox_processes_runs_alone(suite):
    """A check that no process of a strict-sandbox uid is alive sees another worker's grading too: every test of
    such a file is marked `alone` (the serial phase). test_sandbox_seccomp.py once was not, and failed once the
    parallel phase put it beside another file's strict grading."""
    here = Path(__file__).resolve().parent
    checking = {f"tests/{path.name}" for path in here.glob("test_*.py")
                if any(name in path.read_text(encoding="utf-8") for name in ("sandbox_uid_processes", "assert_contained"))
                and path.name != Path(__file__).name}
    assert "tests/test_sandbox_seccomp.py" in checking
    tests = [test for test in suite if test["id"].split("::")[0] in checking]
    assert {test["id"].split("::")[0] for test in tests} == checking
    assert not [test["id"] for test in tests if "alone" not in test["marks"]]


UNMARKED = '''
    import pytest

    def test_plain():
        pass

    def test_on_postgres(pg_url):
        pass

    @pytest.mark.slow
    def test_on_postgres_marked(pg_url):
        pass

    def test_on_each_backend(any_store):
        pass

    @pytest.mark.parametrize("sandbox", ["process", "strict"])
    def test_in_each_sandbox(sandbox):
        pass

    @pytest.mark.timing
    def test_timed():
        pass

    def test_in_chromium(browsers):
        pass
'''


def test_a_test_not_marked_slow_for_what_it_needs_fails_the_collection_with_its_name(tmp_path):
    (tmp_path / "test_unmarked.py").write_text(textwrap.dedent(UNMARKED))
    child = pytest_on(tmp_path, "--collect-only", "-q")
    assert child.returncode == pytest.ExitCode.USAGE_ERROR, child.stdout[-3000:] + child.stderr[-3000:]
    named = {line.split("::", 1)[1].split(" needs ", 1)[0]: line.split(" needs ", 1)[1]
             for line in child.stderr.splitlines() if "test_unmarked.py::" in line}
    assert named == {"test_on_postgres": "a database on the test Postgres server (fixture `pg_url`)",
                     "test_in_each_sandbox[strict]": "the strict (bubblewrap) sandbox (parameter sandbox='strict')",
                     "test_timed": "the `timing` mark",
                     "test_in_chromium": "headless Chromium (fixture `browsers`), headless Chromium (fixture `chromiums`)"}, \
        child.stderr


MARKED = '''
    import pytest

    def test_plain():
        pass

    @pytest.mark.slow
    def test_on_postgres_marked(pg_url):
        pass

    def test_on_each_backend(any_store):
        pass

    @pytest.mark.parametrize("sandbox", ["process", pytest.param("strict", marks=pytest.mark.slow)])
    def test_in_each_sandbox(sandbox):
        pass

    @pytest.fixture(params=["local", "remote"])
    def somewhere(request):  # the collection sees neither pg_url nor a "postgres" parameter
        return "here" if request.param == "local" else request.getfixturevalue("pg_url")

    def test_somewhere(somewhere):
        pass
'''


def test_marked_tests_collect_and_a_fixture_that_reaches_postgres_unseen_fails_its_setup(tmp_path):
    (tmp_path / "test_marked.py").write_text(textwrap.dedent(MARKED))
    child = pytest_on(tmp_path, "-q", "-m", "not slow")
    out = child.stdout
    assert child.returncode == pytest.ExitCode.TESTS_FAILED, out[-3000:] + child.stderr[-3000:]
    assert "4 passed, 3 deselected, 1 error" in out, out[-3000:]
    errors = [line for line in out.splitlines() if line.startswith("ERROR ")]  # -ra's summary of the setup errors
    assert len(errors) == 1 and "test_marked.py::test_somewhere[remote]" in errors[0], errors
    assert "test_marked.py::test_somewhere[remote] uses Postgres (pg_url) but is not marked slow" in out
