"""Retry-After from how fast places have been freeing, not from a mean that counts the wait itself."""

from __future__ import annotations

import pytest

from namesake.app.admission import Admission
from namesake.core.errors import BusyError


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _busy(a: Admission) -> int:
    with pytest.raises(BusyError) as refused, a.admitted():
        pass
    return refused.value.retry_after


def test_retry_after_follows_the_drain_rate_and_grows_while_nothing_finishes() -> None:
    clock = Clock()
    a = Admission(limit=2, clock=clock)
    for _ in range(4):  # analyses finishing every 3 s
        with a.admitted():
            clock.now += 3.0
    slow, held = a.admitted(), a.admitted()
    slow.__enter__()
    held.__enter__()
    clock.now += 1.0
    assert _busy(a) == 2  # a place frees every 3 s, the last one 1 s ago: 2 s
    clock.now += 40.0  # nothing finished since: one of them is stuck (or nobody waits for it)
    assert _busy(a) == 41  # not 1: as long again as since a place last freed
    held.__exit__(None, None, None)
    slow.__exit__(None, None, None)


def test_with_nothing_finished_lately_retry_after_is_the_oldest_analysis_age() -> None:
    clock = Clock()
    a = Admission(limit=1, clock=clock)
    first = a.admitted()
    first.__enter__()
    clock.now += 12.0
    assert _busy(a) == 12
    first.__exit__(None, None, None)
