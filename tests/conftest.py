"""Shared test setup: a temporary progress home, the `slow` tier, and the fixtures several files use."""

import atexit
import os
import shutil
import tempfile

import pytest

from tests.browser_support import browsers
from tests.classroom_support import class_store, pg_url, postgres_server, sqlite_url

__all__ = ["browsers", "class_store", "pg_url", "postgres_server", "sqlite_url"]  # fixtures for every test file

# Set before any project module reads it: grader runs in tests must not touch
# the learner's real progress file.
if "ATTENTION_LAB_HOME" not in os.environ:
    os.environ["ATTENTION_LAB_HOME"] = tempfile.mkdtemp(prefix="attention-lab-test-home-")
    atexit.register(shutil.rmtree, os.environ["ATTENTION_LAB_HOME"], ignore_errors=True)

# A test that uses one of these (directly or through another fixture) is `slow`.
SLOW_FIXTURES = {
    "browsers": "headless Chromium",
    "postgres_server": "a Postgres server",
    "strict_available": "the strict (bubblewrap) sandbox",
    "tiny": "tiny checkpoints written and evaluated, and the demo pages that load them",
}
# Single tests of otherwise fast files that take over ~2 s ("file::test", every parameter).
SLOW_TESTS = {
    "test_decoding.py::test_kv_cache_decodes_the_same_ids_greedy_and_beam",
    "test_decoding.py::test_kv_cache_gives_the_logits_of_the_blocks_and_of_full_recomputation",
    "test_decoding.py::test_the_alpha_and_ngram_stored_with_the_checkpoint_are_the_ones_used",
    "test_decoding.py::test_blocking_on_a_random_transformer_in_beam_and_greedy",
    "test_decoding.py::test_a_checkpoint_without_a_chosen_alpha_says_so",
    "test_statuses.py::test_review_page_after_grading_the_untouched_stubs",
    "test_statuses.py::test_every_page_renders_for_every_status_the_grader_saves",
}


def is_slow(item):
    """True if the test needs a browser, Postgres, the strict sandbox (also as a `sandbox` parameter) or the
    tiny checkpoints, or is listed in SLOW_TESTS."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    return (bool(SLOW_FIXTURES.keys() & set(item.fixturenames)) or params.get("sandbox") == "strict"
            or f"{item.path.name}::{item.originalname}" in SLOW_TESTS)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if is_slow(item):
            item.add_marker(pytest.mark.slow)


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
    """Skip (in CI: fail) unless the strict sandbox runs here; a test that asks for it is `slow`."""
    from sandbox_helpers import require_strict

    require_strict()
