"""tests/xdist_order.py: the parallel phase's scopes and the order it hands them out in."""

import pytest

from tests import xdist_order
from tests.xdist_order import handing_out_order, scope_of, seconds_from_log


def test_a_file_is_its_own_scope_unless_it_shares_a_worker_or_is_split():
    assert scope_of("tests/test_ch01.py::test_x[en]") == "tests/test_ch01.py"
    assert scope_of("tests/test_weight_diff.py::test_y") == "tests/test_grader.py"
    assert scope_of("tests/test_fresh_learners.py::test_z[set_b]") == "tests/test_fresh_learners.py[set_b]"
    assert scope_of("tests/test_fresh_learners.py::test_unparametrized") == "tests/test_fresh_learners.py"


def test_measured_scopes_go_first_longest_first_then_the_rest_by_count(monkeypatch):
    monkeypatch.setattr(xdist_order, "SECONDS", {"b.py": 10.0, "c.py": 90.0})
    counts = {"tests/a.py": 3, "tests/b.py": 1, "tests/c.py": 1, "tests/d.py": 7}
    assert handing_out_order(counts) == ["tests/c.py", "tests/b.py", "tests/d.py", "tests/a.py"]


def test_every_measured_scope_and_shared_file_exists():
    """A renamed or removed file must leave SECONDS, SHARED and SPLIT_BY_PARAM too."""
    from tests.browser_support import ROOT

    named = {"tests/" + scope.split("[")[0] for scope in xdist_order.SECONDS} | set(xdist_order.SHARED)
    named |= set(xdist_order.SHARED.values()) | xdist_order.SPLIT_BY_PARAM
    assert [path for path in sorted(named) if not (ROOT / path).is_file()] == []


@pytest.mark.parametrize("line, scope, seconds", [
    ("  36.75s setup    tests/test_fresh_learners.py::test_v[set_d]", "tests/test_fresh_learners.py[set_d]", 36.75),
    ("1.50s call     tests/test_weight_diff.py::test_w", "tests/test_grader.py", 1.5),
])
def test_a_durations_line_counts_for_its_scope(line, scope, seconds):
    assert seconds_from_log(f"noise\n{line}\n{line}\n0.2s warmup x") == {scope: 2 * seconds}

