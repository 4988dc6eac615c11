"""Shared test setup: a temporary progress home, the check of the test tiers' marks, and the fixtures several files
use."""

import atexit
import os
import shutil
import tempfile

import pytest

from tests.browser_support import browsers, chromiums, server, shared_apps
from tests.app_helpers import utc_plus_8
from tests.classroom_support import any_store, class_store, own_postgres, pg_url, postgres_server, sqlite_url
from tests.xdist_order import make_scheduler

# fixtures for every test file
__all__ = ["any_store", "browsers", "chromiums", "class_store", "own_postgres", "pg_url", "postgres_server", "server",
           "shared_apps", "sqlite_url", "utc_plus_8"]


def own_folder(variable, prefix, mode=0o700):
    """Point the environment variable at a new folder of this process's, removed at exit."""
    folder = tempfile.mkdtemp(prefix=prefix)
    os.chmod(folder, mode)
    os.environ[variable] = folder
    os.environ[f"{variable}_BY_TESTS"] = str(os.getpid())  # made here: a pytest-xdist worker makes its own
    atexit.register(shutil.rmtree, folder, ignore_errors=True)


def made_by_another_test_process(variable):
    """True if the variable names a folder that a parent test process (the pytest-xdist controller) made."""
    return os.environ.get(f"{variable}_BY_TESTS", str(os.getpid())) != str(os.getpid())


# Set before any test runs (course.common.paths reads it at each call): grader runs in tests must not
# touch the learner's real progress file. Each pytest-xdist worker gets its own.
if "ATTENTION_LAB_HOME" not in os.environ or made_by_another_test_process("ATTENTION_LAB_HOME"):
    own_folder("ATTENTION_LAB_HOME", "attention-lab-test-home-")
# No app a test starts (AppTest or a real server) starts a grading server as it opens (course/app/grading_client
# EARLY_START_VAR): each would import torch and build the mutant caches beside the tests; the tests of the early
# start set it themselves.
os.environ.setdefault("ATTENTION_LAB_GRADER_EARLY", "0")
# A pytest-xdist worker gets a temp folder of its own (mode 1777, like /tmp): tests that look for what a run
# left in the temp folder (sandbox run folders) see only their own worker's runs.
if os.environ.get("PYTEST_XDIST_WORKER"):  # made inside the given temp folder
    own_folder("TMPDIR", f"attention-lab-{os.environ['PYTEST_XDIST_WORKER']}-", 0o1777)
    tempfile.tempdir = None  # gettempdir() reads TMPDIR again

# The tiers: `-m "not slow"` (the fast tier) needs no browser, Postgres, strict sandbox or tiny checkpoints and
# asserts no duration. Each test carries its own marks (`pytestmark = pytest.mark.slow` for a module,
# `@pytest.mark.slow` for a test, `pytest.param("postgres", marks=pytest.mark.slow)` for a parameter); this file
# assigns none, it checks them at collection (pytest_collection_modifyitems below).
# A test that uses one of these fixtures (directly or through another fixture) must be marked `slow`:
SLOW_FIXTURES = {
    "browsers": "headless Chromium",
    "chromiums": "headless Chromium",
    "postgres_server": "a Postgres server",
    "pg_url": "a database on the test Postgres server",
    "own_postgres": "a Postgres server of the test's own",
    "strict_available": "the strict (bubblewrap) sandbox",
    "tiny": "tiny checkpoints written and evaluated, and the demo pages that load them",
}
# ... and so must a test with one of these parameter values (any parameter name: any_store's "postgres" reaches
# pg_url through request.getfixturevalue, which the test's fixture names do not show; "strict" is a `sandbox`):
SLOW_PARAM_VALUES = {"postgres": "Postgres", "strict": "the strict (bubblewrap) sandbox"}
# tests/run_suite.py runs tests with these marks in its serial phase; each must be `slow` too (the fast tier is
# run in parallel, where a duration or machine-wide state cannot be asserted)
SERIAL_MARKERS = ("timing", "alone")


def why_slow(item):
    """[what the test needs that only the slow tier may use] (empty: it may be fast)."""
    needs = [f"{what} (fixture `{name}`)" for name, what in SLOW_FIXTURES.items() if name in item.fixturenames]
    params = getattr(getattr(item, "callspec", None), "params", {})
    needs += [f"{SLOW_PARAM_VALUES[value]} (parameter {name}={value!r})" for name, value in params.items()
              if isinstance(value, str) and value in SLOW_PARAM_VALUES]
    needs += [f"the `{mark}` mark" for mark in SERIAL_MARKERS if item.get_closest_marker(mark)]
    return needs


@pytest.hookimpl(optionalhook=True)  # xdist's hook: unknown where xdist is off (-p no:xdist, the serial phase)
def pytest_xdist_make_scheduler(config, log):
    """The parallel phase's scheduler: files handed out longest first (tests/xdist_order.py)."""
    return make_scheduler(config, log)


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects: every collected test is checked
def pytest_collection_modifyitems(config, items):
    """Fail the collection if a test needs what only the slow tier may use but is not marked `slow`."""
    unmarked = [f"{item.nodeid} needs {', '.join(needs)}" for item in items
                if not item.get_closest_marker("slow") and (needs := why_slow(item))]
    if unmarked:
        raise pytest.UsageError(
            "tests not marked slow, which the fast tier (-m \"not slow\") would run:\n  " + "\n  ".join(unmarked)
            + "\nmark each: @pytest.mark.slow on the test, pytestmark = pytest.mark.slow in its module, or "
            "pytest.param(VALUE, marks=pytest.mark.slow) for a parameter (docs/inside/tests.md)")


@pytest.fixture
def lab_home(tmp_path, monkeypatch):
    """Progress and notes go to a fresh folder (the test's tmp_path) -> that folder."""
    monkeypatch.setenv("ATTENTION_LAB_HOME", str(tmp_path))
    return tmp_path


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    """A folder of tiny checkpoints and their BLEU reports (tests/demo_fixtures.py), written once per run."""
    from demo_fixtures import write_tiny_checkpoints

    return write_tiny_checkpoints(tmp_path_factory.mktemp("checkpoints"))


@pytest.fixture
def tiny_env(tiny, lab_home, monkeypatch):
    """A fresh progress home; the app reads the tiny checkpoints -> their folder."""
    monkeypatch.setenv("ATTENTION_LAB_CHECKPOINTS", str(tiny))
    return tiny


@pytest.fixture(scope="session")
def strict_available():
    """Skip (in CI: fail) unless the strict sandbox runs here; a test that asks for it must be marked `slow`."""
    from sandbox_helpers import require_strict

    require_strict()
