"""How many threads one analysis may use (every core, unless it runs in a worker process beside others), and how many
analyses run at once."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from namesake.core.cancel import check_cancelled

# OpenBLAS multiplies on one pool of threads for the whole process: two threads multiplying at once can deadlock in it
# (OpenBLAS issue #937: a caller spinning in `inner_thread` for ever), and its thread count, which threadpoolctl sets,
# is a process global. A run here hung so, 18 minutes: the embedder's first encode, in its background load, beside the
# numpy language model's pass. Every section that multiplies with OpenBLAS (the embedder, the numpy language model)
# or sets its thread count holds this lock. So does every fork of this process (the embedded PostgreSQL's pg_ctl, the
# worker pool's fork server): OpenBLAS's fork handler waits for its threads to go idle, and with a multiplication in
# flight on another thread it waited for ever (`namesake serve` on a cold cache: pg_ctl forked during the embedder's
# first encode).
BLAS_LOCK = threading.RLock()


_budget = 0  # 0: every core


def thread_budget() -> int:
    """The threads one analysis of this process may use: 0 for every core, 1 in a worker process beside others."""
    return _budget


def set_thread_budget(threads: int) -> int:
    """Set this process's budget (the worker pool: 1, in its workers and in the parent meanwhile); the previous one."""
    global _budget
    previous, _budget = _budget, threads
    return previous


# How often an analysis waiting for its turn looks whether its client has gone (seconds).
TURN_POLL_SECONDS = 0.25


class Turns:
    """At most `limit` analyses run their stages at once (0: no bound), the others wait their turn: a server's memory
    under load is its running analyses' working sets, so it is bounded by this, not by how many clients send."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._slots = threading.BoundedSemaphore(limit) if limit > 0 else None
        self.waiting = 0  # analyses waiting for a turn now (a gauge of /metrics)
        self._count = threading.Lock()

    @contextmanager
    def turn(self) -> Iterator[None]:
        """Run the block once a turn is free; a wait whose work is cancelled (its client gone) stops with
        CancelledWork, having held nothing."""
        if self._slots is None:
            yield
            return
        self._wait(+1)
        try:
            while not self._slots.acquire(timeout=TURN_POLL_SECONDS):
                check_cancelled()
        finally:
            self._wait(-1)
        try:
            yield
        finally:
            self._slots.release()

    def _wait(self, step: int) -> None:
        with self._count:
            self.waiting += step
