"""The process's memoised lookups (words, windows, sounds): bounded, and given back when a server is idle.

Each lookup keeps at most `WORD_CACHE` results, least recently used out first: enough for the distinct words and
windows of the calls in flight, so that a server's memory stops growing once they are full, not after millions of
distinct words. `give_back` empties them all and returns the freed heap to the system: the server calls it once it
has been idle a while (`app/idle.py`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import os
import re
import sys
from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])
# Results each memoised lookup keeps (≈ 0.5 KB each): a 9,000-word call has ~20,000 distinct windows.
WORD_CACHE = 20_000
_every: list[Any] = []
# glibc's mallopt parameter for the most heaps (arenas) its malloc keeps, and how many a server keeps: measured in
# the soak (docs/benchmarks/2026-12-04-soak.md), two hold a quarter less memory after the same traffic than the default.
M_ARENA_MAX = -8
HEAP_ARENAS = 2
# Set while a server runs again on the allocator `with_trimmable_allocator` chose for it.
ALLOCATOR_CHOSEN = "NAMESAKE_ALLOCATOR_CHOSEN"


def memoised(fn: F) -> F:
    """`fn` memoised (at most WORD_CACHE results), and emptied by `give_back`."""
    cached = lru_cache(maxsize=WORD_CACHE)(fn)
    _every.append(cached)
    return cached  # type: ignore[return-value]


def cached_results() -> int:
    """How many results the memoised lookups hold now."""
    return sum(c.cache_info().currsize for c in _every)


def give_back(also: list[Callable[[], object]] | None = None) -> int:
    """Empty every memoised lookup (and whatever `also` empties), collect, and hand the freed heap back to the system
    (glibc's malloc_trim, where there is glibc); the results dropped."""
    dropped = cached_results()
    for c in _every:
        c.cache_clear()
    _clear_library_caches()
    for clear in also or ():
        clear()
    gc.collect()
    trim_heap()
    return dropped


def _clear_library_caches() -> None:
    """Empty the caches libraries keep of their own: wordfreq's frequencies (up to 100,000 entries, emptied only
    when full) and `re`'s compiled patterns. Their entries, made among a request's short-lived objects, each keep
    CPython's 1 MB object arena they sit in from going back to the system."""
    re.purge()
    wordfreq = sys.modules.get("wordfreq")
    cache = getattr(wordfreq, "_wf_cache", None)
    if isinstance(cache, dict):
        cache.clear()


def few_heap_arenas(arenas: int = HEAP_ARENAS) -> None:
    """Let glibc's malloc keep at most `arenas` heaps for all the threads made from now on (a server's request
    threads): by default it makes up to eight per core, each holding freed memory of its own, and a server's resident
    memory grows with how many threads once allocated, not with what they hold. Nothing where there is no glibc."""
    libc = _libc()
    if libc is not None and hasattr(libc, "mallopt"):
        libc.mallopt(M_ARENA_MAX, arenas)


def with_trimmable_allocator() -> None:
    """Run this process (a server) on the C library's malloc: start it again with `PYTHONMALLOC=malloc`, unless an
    allocator was chosen already; then take the variable out again, so that the processes it starts (its stage
    process) use CPython's own. CPython keeps each 1 MB arena of its objects while one object in it lives: after a
    load, a few long-lived objects among the requests' short-lived ones hold ~100 MB that way, which the C library's
    heap gives back at idle (`give_back`'s trim). Nothing where a process cannot be started again in place."""
    if os.environ.pop(ALLOCATOR_CHOSEN, None) is not None:
        os.environ.pop("PYTHONMALLOC", None)
        return
    if "PYTHONMALLOC" in os.environ or not hasattr(os, "execv") or not sys.orig_argv:
        return
    os.environ.update({"PYTHONMALLOC": "malloc", ALLOCATOR_CHOSEN: "1"})
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, sys.orig_argv)


def trim_heap() -> None:
    """Return the heap's free pages to the system (glibc's malloc gives back only the top of its heaps by itself, so a
    busy process's resident memory otherwise creeps up with fragmentation); ~40–90 ms for a few hundred MB."""
    libc = _libc()
    if libc is not None and hasattr(libc, "malloc_trim"):
        libc.malloc_trim(0)


@functools.cache
def _libc() -> ctypes.CDLL | None:
    """The C library malloc belongs to, loaded once (None where there is none to find)."""
    name = ctypes.util.find_library("c")
    return ctypes.CDLL(name) if name else None
