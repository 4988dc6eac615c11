"""Waiting in tests: poll a condition with a deadline instead of sleeping a fixed time, and a fake clock
for code that takes a `clock` (what a wait for time to pass becomes)."""

import time
from datetime import datetime, timedelta, timezone


def wait_until(predicate, timeout, what, interval=0.05):
    """predicate()'s first truthy value, polled every `interval` s; fails naming `what` (text, or a callable giving
    it at that moment) after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            named = what() if callable(what) else what
            raise AssertionError(f"timed out after {timeout:g} s waiting for {named} (last seen: {value!r})")
        time.sleep(interval)


class FakeClock:
    """A clock that moves only when told: call it for the time now, `advance(seconds)` to let time pass.

    start: a datetime (default: now as a naive UTC datetime, like classroom.data.models.utcnow) or a number (a
    monotonic clock, like time.monotonic).
    """

    def __init__(self, start=None):
        self.now = datetime.now(timezone.utc).replace(tzinfo=None) if start is None else start

    def __call__(self):
        return self.now

    def advance(self, seconds):
        """Let `seconds` pass -> the new time."""
        step = timedelta(seconds=seconds) if isinstance(self.now, datetime) else seconds
        self.now = self.now + step
        return self.now
