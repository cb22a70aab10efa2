"""A bound on the analyses a server holds at once: past it a request is answered 503 `BUSY` at once, not queued."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from namesake.core.errors import BusyError

# Weight of the newest analysis in the running mean that Retry-After is estimated from.
RECENT = 0.2


class Admission:
    """Counts the analyses in flight; refuses one more past `limit` with an estimate of when to retry."""

    def __init__(self, limit: int, workers: int = 1) -> None:
        self.limit, self.workers = limit, max(1, workers)
        self.inflight = 0
        self.mean_seconds = 1.0
        self._lock = threading.Lock()

    def retry_after(self) -> int:
        """Seconds until the ones ahead are likely done: their count times the mean analysis, over the workers."""
        return max(1, math.ceil(self.inflight * self.mean_seconds / self.workers))

    @contextmanager
    def admitted(self) -> Iterator[None]:
        """Hold a place while the analysis runs; BusyError when none is left."""
        with self._lock:
            if self.inflight >= self.limit:
                raise BusyError(
                    f"{self.inflight} analyses are already in progress (ANALYSIS_QUEUE_LIMIT={self.limit}): "
                    "retry after the Retry-After seconds",
                    self.retry_after(),
                )
            self.inflight += 1
        t0 = time.perf_counter()
        try:
            yield
        finally:
            with self._lock:
                self.inflight -= 1
                self.mean_seconds += RECENT * (time.perf_counter() - t0 - self.mean_seconds)
