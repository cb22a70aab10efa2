"""Retry-After from how fast places have been freeing, not from a mean that counts the wait itself."""

from __future__ import annotations

import threading
import time

import pytest

from namesake.app.admission import Admission
from namesake.core import CancelledWork, Turns, cancellable
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


def test_analyses_past_the_running_limit_wait_their_turn_and_a_gone_client_stops_waiting() -> None:
    turns = Turns(1)
    held, release, order = threading.Event(), threading.Event(), []

    def first() -> None:
        with turns.turn():
            order.append("first in")
            held.set()
            release.wait(5)
            order.append("first out")

    def second() -> None:
        with turns.turn():
            order.append("second in")

    a = threading.Thread(target=first)
    a.start()
    held.wait(5)
    b = threading.Thread(target=second)
    b.start()
    time.sleep(0.6)  # past two of the waiter's looks: it has not started
    assert order == ["first in"] and turns.waiting == 1
    gone = threading.Event()
    gone.set()
    # a third whose client left stops waiting, holding nothing
    with pytest.raises(CancelledWork), cancellable(gone), turns.turn():
        order.append("third in")
    release.set()
    a.join(5)
    b.join(5)
    assert order == ["first in", "first out", "second in"] and turns.waiting == 0
    with turns.turn():  # every turn given back
        pass


def test_no_running_limit_runs_at_once() -> None:
    turns = Turns(0)
    with turns.turn(), turns.turn():
        pass
