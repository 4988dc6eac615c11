"""Shared test setup: a temporary progress home, the `slow` tier, and the fixtures several files use."""

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
    "test_classroom_non_finite.py::test_a_report_with_nan_weights_is_strict_json_and_shows_nan_after_a_round_trip",
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
    "test_ch12_claims.py::test_the_timing_text_claims_hold_on_this_machine",
    "test_ch12_claims.py::test_a_recomputed_grouped_bleu_is_the_shipped_one",
    "test_ch12.py::test_on_the_shipped_model_the_three_strategies_agree_in_float64_within_1e_5_and_in_float32",
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

# Tests that assert a duration ("file::test", every parameter): marked `timing`, they run in the serial phase
# of tests/run_suite.py, after the parallel one, with nothing else running.
TIMING_TESTS = {
    "test_child_process.py::test_a_silent_child_gives_none_at_the_deadline_and_the_reader_can_go_on",
    "test_child_process.py::test_a_child_that_prints_without_pause_cannot_carry_the_reader_past_its_deadline",
    "test_classroom_eta_honesty.py::test_forecasts_shown_at_submission_are_near_the_actual_waits",
    "test_classroom_gradebook_speed.py::test_a_thousand_learners_gradebook_and_analytics_are_drawn_within_three_seconds",
    "test_classroom_live_page.py::test_a_followed_page_shows_each_change_within_a_second_and_polls_cheaply",
    "test_classroom_metrics.py::test_a_scrape_stays_cheap_with_a_20000_job_regrade_queued_behind_20000_graded_jobs",
    "test_classroom_queue_priority.py::test_a_new_submission_goes_ahead_of_a_20000_job_regrade",
    "test_ch12_claims.py::test_the_timing_text_claims_hold_on_this_machine",
    "test_demos.py::test_a_translation_past_its_time_limit_is_stopped",
    "test_demos.py::test_a_detached_process_holding_the_pipes_does_not_hold_the_translation_and_is_killed",
    "test_grading_client.py::test_a_grading_server_that_crashed_or_was_killed_is_replaced_by_a_fresh_one",
    "test_grading_client.py::test_a_grading_server_past_the_timeout_is_stopped_not_waited_for",
    "test_grading_server.py::test_a_second_grade_reuses_the_warm_server_and_a_killed_one_is_replaced",
    "test_hostile_results.py::test_a_hanging_result_costs_no_more_than_the_timeout",
    "test_hostile_results.py::test_a_pickle_bomb_costs_no_more_time_than_a_correct_grade",
    "test_hostile_results.py::test_a_notebook_nested_too_deep_is_not_a_readable_notebook",
    "test_mutant_limits.py::test_an_endless_mutant_is_given_up_by_its_cpu_limit",
    "test_sandbox_warm.py::test_a_strict_timeout_ends_in_time_and_keeps_the_server",
}
# Files that check machine-wide state (no process of any strict-sandbox uid alive, /tmp left as it was):
# another worker's grading would show there, so they are marked `alone` and run in the serial phase too.
ALONE_FILES = {"test_classroom_hostile.py", "test_sandbox_seccomp.py", "test_sandbox_strict.py", "test_sandbox_warm.py"}
SERIAL_MARKERS = ("timing", "alone")  # tests/run_suite.py runs these after the parallel phase


def is_slow(item):
    """True if the test needs a browser, Postgres, the strict sandbox (also as a `sandbox` parameter) or the
    tiny checkpoints, or is listed in SLOW_TESTS."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    return (bool(SLOW_FIXTURES.keys() & set(item.fixturenames)) or params.get("sandbox") == "strict"
            or f"{item.path.name}::{item.originalname}" in SLOW_TESTS)


@pytest.hookimpl(optionalhook=True)  # xdist's hook: unknown where xdist is off (-p no:xdist, the serial phase)
def pytest_xdist_make_scheduler(config, log):
    """The parallel phase's scheduler: files handed out longest first (tests/xdist_order.py)."""
    return make_scheduler(config, log)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if is_slow(item):
            item.add_marker(pytest.mark.slow)
        if f"{item.path.name}::{item.originalname}" in TIMING_TESTS:
            item.add_marker(pytest.mark.timing)
        if item.path.name in ALONE_FILES:
            item.add_marker(pytest.mark.alone)
    modules = {item.path.name: item.module for item in items if getattr(item, "module", None)}
    for listed, names in (("SLOW_TESTS", SLOW_TESTS), ("TIMING_TESTS", TIMING_TESTS)):
        stale = sorted(name for name in names if name.split("::")[0] in modules
                       and not hasattr(modules[name.split("::")[0]], name.split("::")[1]))
        if stale:  # renamed or removed: the list must follow
            raise pytest.UsageError(f"tests/conftest.py {listed} names tests that do not exist: {stale}")


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
