"""The tests' waiting helpers: wait_until returns the first truthy value or fails naming what it waited for;
FakeClock moves only when advanced."""

from datetime import datetime, timedelta

import pytest

from classroom.data.models import utcnow
from tests.waiting import FakeClock, wait_until


def test_wait_until_returns_the_first_truthy_value():
    values = iter([None, 0, [], "ready", "later"])
    assert wait_until(lambda: next(values), 5, "a value", interval=0) == "ready"


def test_wait_until_fails_naming_what_it_waited_for_and_the_last_value():
    with pytest.raises(AssertionError, match=r"timed out after 0.01 s waiting for the marker file \(last seen: \[\]\)"):
        wait_until(lambda: [], 0.01, "the marker file", interval=0.001)


def test_a_fake_clock_moves_only_when_advanced():
    wall = FakeClock(datetime(2026, 1, 1, 12, 0))
    assert wall() == wall() == datetime(2026, 1, 1, 12, 0)
    assert wall.advance(61) == datetime(2026, 1, 1, 12, 1, 1) == wall()
    steady = FakeClock(100.0)
    steady.advance(0.25)
    assert steady() == 100.25
    assert FakeClock()().tzinfo is None and abs(FakeClock()() - utcnow()) < timedelta(seconds=60)
