"""A server idle a while empties its memoised lookups once, never while an analysis runs, and again only after work."""

from __future__ import annotations

import re

import wordfreq

from namesake.app.admission import Admission
from namesake.app.idle import IdleGiveBack
from namesake.core.caches import WORD_CACHE, cached_results
from namesake.core.text import compact, normalise, word_frequency


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_idle_gives_back_once_after_work_never_while_an_analysis_runs() -> None:
    clock, cleared = Clock(), []
    admission = Admission(limit=2, clock=clock)
    idle = IdleGiveBack(admission, 30, [lambda: cleared.append(1)], clock=clock)
    with admission.admitted():
        compact("Reiner Blair"), normalise("Cytova")
        clock.now += 60
        assert not idle.check()  # an analysis in flight, however long ago it started
    assert cached_results() > 0
    clock.now += 29
    assert not idle.check()  # not idle long enough yet
    clock.now += 1
    assert idle.check() and cached_results() == 0 and cleared == [1]
    clock.now += 600
    assert not idle.check()  # nothing has run since: nothing to give back
    with admission.admitted():
        compact("Cytiva")
    clock.now += 30
    assert idle.check() and cleared == [1, 1]


def test_a_memoised_lookup_keeps_at_most_word_cache_results() -> None:
    for i in range(WORD_CACHE + 500):
        compact(f"word{i}")
    assert compact.cache_info().currsize == WORD_CACHE  # type: ignore[attr-defined]


def test_the_give_back_also_empties_the_caches_libraries_keep_of_their_own() -> None:
    """wordfreq's frequencies and re's compiled patterns: entries made among a request's objects pin its arenas."""
    clock = Clock()
    admission = Admission(limit=2, clock=clock)
    idle = IdleGiveBack(admission, 30, [], clock=clock)
    with admission.admitted():
        word_frequency("Cytiva quarterly guidance")
        re.compile(r"an idle\s+pattern")
    assert wordfreq._wf_cache and re._cache  # type: ignore[attr-defined]
    clock.now += 30
    assert idle.check()
    assert not wordfreq._wf_cache and not re._cache  # type: ignore[attr-defined]


def test_a_busy_server_trims_its_heap_every_so_often_and_an_idle_one_not_again() -> None:
    clock = Clock()
    admission = Admission(limit=2, clock=clock)
    idle = IdleGiveBack(admission, 30, [], clock=clock, trim_seconds=30)
    with admission.admitted():
        clock.now += 29
        assert not idle.trim_if_due()  # not yet
        clock.now += 1
        assert idle.trim_if_due()  # busy for 30 s
        assert not idle.trim_if_due()  # just did
        clock.now += 30
        assert idle.trim_if_due()
    clock.now += 600
    assert idle.trim_if_due()  # the work since the last trim
    clock.now += 600
    assert not idle.trim_if_due()  # nothing has run since
    assert not IdleGiveBack(admission, 30, [], clock=clock).trim_if_due()  # trim_seconds 0: never
