"""Shared test setup: a temporary progress home, the `slow` tier, and the fixtures several files use."""

import atexit
import os
import shutil
import tempfile

import pytest

from tests.browser_support import browsers, chromiums, server
from tests.app_helpers import utc_plus_8
from tests.classroom_support import class_store, own_postgres, pg_url, postgres_server, sqlite_url

# fixtures for every test file
__all__ = ["browsers", "chromiums", "class_store", "own_postgres", "pg_url", "postgres_server", "server", "sqlite_url",
           "utc_plus_8"]

# Set before any test runs (course.common.paths reads it at each call): grader runs in tests must not
# touch the learner's real progress file.
if "ATTENTION_LAB_HOME" not in os.environ:
    os.environ["ATTENTION_LAB_HOME"] = tempfile.mkdtemp(prefix="attention-lab-test-home-")
    atexit.register(shutil.rmtree, os.environ["ATTENTION_LAB_HOME"], ignore_errors=True)

# A test that uses one of these (directly or through another fixture) is `slow`.
SLOW_FIXTURES = {
    "browsers": "headless Chromium",
    "postgres_server": "a Postgres server",
    "own_postgres": "a Postgres server of the test's own",
    "strict_available": "the strict (bubblewrap) sandbox",
    "tiny": "tiny checkpoints written and evaluated, and the demo pages that load them",
}
# Single tests of otherwise fast files that take over ~2 s ("file::test", every parameter): they grade in child
# processes or run a worker, train, sweep every page in both languages, or decode with the shipped-size models.
SLOW_TESTS = {
    "test_app_shell.py::test_every_existing_page_runs_without_errors",
    "test_bottleneck_task.py::test_a_run_is_determined_by_its_seed",
    "test_bottleneck_task.py::test_attention_beats_a_fixed_context_on_long_sequences_in_a_short_run",
    "test_classroom_app.py::test_a_learner_reading_chinese_submits_and_reads_chinese_feedback",
    "test_classroom_app.py::test_a_link_signs_in_and_the_learner_submits",
    "test_classroom_grading.py::test_a_notebook_without_an_answer_cell_gets_the_graders_message",
    "test_classroom_grading.py::test_a_submission_that_kills_the_sandbox_gets_its_own_error_verdict",
    "test_classroom_grading.py::test_dependencies_are_the_learners_own_and_must_have_passed",
    "test_classroom_grading.py::test_regrade_reports_every_changed_score",
    "test_classroom_hostile.py::test_hostile_submissions_change_nothing_but_their_own_verdicts",
    "test_classroom_lang.py::test_submit_records_the_language_and_the_worker_grades_in_it",
    "test_classroom_lang.py::test_submit_language_defaults_to_the_locale_and_refuses_unknown_ones",
    "test_classroom_store.py::test_submission_is_acknowledged_only_after_its_commit",
    "test_classroom_store.py::test_roster_errors_name_their_lines_and_import_nothing",
    "test_classroom_store.py::test_links_command_refuses_unknown_emails",
    "test_classroom_store.py::test_init_is_idempotent_and_uses_wal",
    "test_grader_report.py::test_a_dependency_failing_in_the_same_run_blocks_what_builds_on_it",
    "test_lab_page.py::test_a_live_run_trains_in_a_child_and_the_stop_button_ends_it",
    "test_scaling_task.py::test_at_d_256_the_unscaled_layer_learns_slower_in_a_short_run",
    "test_classroom_queue.py::test_a_burst_from_threads_and_processes_is_graded_exactly_once",
    "test_classroom_queue.py::test_a_worker_killed_mid_job_has_its_job_regraded_exactly_once",
    "test_decoding.py::test_a_checkpoint_without_a_chosen_alpha_says_so",
    "test_decoding.py::test_blocking_on_a_random_transformer_in_beam_and_greedy",
    "test_decoding.py::test_kv_cache_decodes_the_same_ids_greedy_and_beam",
    "test_decoding.py::test_kv_cache_gives_the_logits_of_the_blocks_and_of_full_recomputation",
    "test_decoding.py::test_the_alpha_and_ngram_stored_with_the_checkpoint_are_the_ones_used",
    "test_grading_client.py::test_a_background_process_cannot_rewrite_the_report",
    "test_statuses.py::test_every_page_renders_for_every_status_the_grader_saves",
    "test_statuses.py::test_review_page_after_grading_the_untouched_stubs",
    "test_ui_consistency.py::test_series_keep_their_colour_across_languages",
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
    modules = {item.path.name: item.module for item in items if getattr(item, "module", None)}
    stale = sorted(name for name in SLOW_TESTS if name.split("::")[0] in modules
                   and not hasattr(modules[name.split("::")[0]], name.split("::")[1]))
    if stale:  # renamed or removed: the list must follow
        raise pytest.UsageError(f"tests/conftest.py SLOW_TESTS names tests that do not exist: {stale}")


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
