"""How tests/run_suite.py's parallel phase hands files to its workers (`--dist loadfile`, pytest-xdist).

xdist keeps each file on one worker and hands the files out in order, by number of tests; the run ends when
the last file does, so a long file handed out late leaves the other worker idle for its whole length. Here:

- the files are handed out longest first (SECONDS, measured), the unmeasured ones after them by xdist's rule;
- files that share a once-per-process computation go to the same worker (SHARED: test_weight_diff reads the
  known mistakes that test_grader grades, tests/grading_support.py);
- a file whose tests are independent per parameter of its module fixture is split by that parameter
  (SPLIT_BY_PARAM: each fresh-learner set is graded by its own fixture run), so its parts run side by side.
"""

import re

from xdist.scheduler import LoadFileScheduling

# file -> the file whose worker runs it too
SHARED = {"tests/test_weight_diff.py": "tests/test_grader.py"}
# files whose tests are scheduled per parameter id (their module fixture is parametrized by it)
SPLIT_BY_PARAM = {"tests/test_fresh_learners.py"}
# seconds of a scope (tests/ left out: a file, a SHARED group, or a file[param]): the 40 longest of the parallel
# phase of a full run of main (286d8de, a clean clone, --durations=0, load 4-6), setup + call + teardown summed
# per scope (`python -m tests.xdist_order LOG` prints this table). Only their order matters.
SECONDS = {
    'test_browser.py': 231,
    'test_exercise_variants.py': 114,
    'test_browser_state.py': 103,
    'test_variant_diagnosis.py': 96,
    'test_grader.py': 78,
    'test_browser_axe.py': 45,
    'test_classroom_oidc.py': 38,
    'test_fresh_learners.py[set_c]': 38,
    'test_lab_browser.py': 38,
    'test_fresh_learners.py[set_b]': 38,
    'test_classroom_browser.py': 37,
    'test_fresh_learners.py[set_a]': 36,
    'test_browser_readable.py': 32,
    'test_fresh_learners.py[set_d]': 31,
    'test_widget_extremes.py': 30,
    'test_sandbox_process.py': 29,
    'test_fresh_learners.py[set_e]': 29,
    'test_classroom_workers.py': 27,
    'test_hostile_results.py': 27,
    'test_notebooks.py': 27,
    'test_classroom_hosts.py': 26,
    'test_classroom_lang.py': 25,
    'test_statuses.py': 25,
    'test_lti_passback.py': 24,
    'test_app_shell.py': 23,
    'test_classroom_browser_faults.py': 22,
    'test_classroom_queue.py': 20,
    'test_translate_page.py': 20,
    'test_browser_weights_diff.py': 20,
    'test_train.py': 19,
    'test_substeps.py': 19,
    'test_lab_page.py': 19,
    'test_lab_runner.py': 18,
    'test_diagnosis.py': 18,
    'test_pages_ch02_04.py': 18,
    'test_browser_chart_text.py': 18,
    'test_browser_masks_positions.py': 16,
    'test_classroom_job_timeout.py': 15,
    'test_demos.py': 14,
    'test_classroom_grading.py': 14,
}


def scope_of(nodeid):
    """The scope a test is scheduled with: its file (or the file it shares a worker with), and for a file
    split by parameter, its parameter id."""
    path, _, rest = nodeid.partition("::")
    if path in SPLIT_BY_PARAM:
        param = re.search(r"\[([^\]]*)\]$", rest)
        return f"{path}[{param.group(1)}]" if param else path
    return SHARED.get(path, path)


def handing_out_order(scopes_with_counts):
    """The scopes, longest first by SECONDS, then the unmeasured ones by their number of tests (xdist's rule)."""
    def seconds(scope):
        return SECONDS.get(scope.removeprefix("tests/"), 0.0)

    return sorted(scopes_with_counts, key=lambda scope: (-seconds(scope), -scopes_with_counts[scope]))


class LongestFirstScheduling(LoadFileScheduling):
    """--dist loadfile, with scope_of's scopes handed out in handing_out_order."""

    ordered = False

    def _split_scope(self, nodeid):
        return scope_of(nodeid)

    def _assign_work_unit(self, node):
        """xdist's hand-out, its queue of scopes put in handing_out_order before the first one."""
        if not self.ordered:
            self.ordered = True
            units = dict(self.workqueue)
            self.workqueue.clear()
            for scope in handing_out_order({scope: len(unit) for scope, unit in units.items()}):
                self.workqueue[scope] = units[scope]
        super()._assign_work_unit(node)


def make_scheduler(config, log):
    """LongestFirstScheduling for `--dist loadfile` (tests/run_suite.py's), else None (xdist's own)."""
    return LongestFirstScheduling(config, log) if config.getoption("dist") == "loadfile" else None


def seconds_from_log(text):
    """{scope: seconds} summed over the `--durations=0` lines (setup, call, teardown) of a pytest log."""
    totals = {}
    for seconds, nodeid in re.findall(r"^\s*([\d.]+)s (?:setup|call|teardown)\s+(\S+)", text, re.MULTILINE):
        scope = scope_of(nodeid)
        totals[scope] = totals.get(scope, 0.0) + float(seconds)
    return totals


if __name__ == "__main__":  # python -m tests.xdist_order LOG: SECONDS from a run's --durations=0 log (its parallel phase)
    import sys
    from pathlib import Path

    phase = Path(sys.argv[1]).read_text(errors="replace").split("== serial phase")[0]
    measured = seconds_from_log(phase)
    print("SECONDS = {")
    for scope in sorted(measured, key=measured.get, reverse=True)[:40]:
        print(f"    {scope.removeprefix('tests/')!r}: {measured[scope]:.0f},")
    print("}")
