"""A bound on the analyses a server holds at once: past it a request is answered 503 `BUSY` at once, not queued."""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from namesake.core import BusyError

# How many recent completions the drain rate is read from, and how old one may be to count (seconds).
RECENT_DONE = 16
RECENT_WINDOW = 120.0


class Admission:
    """Counts the analyses in flight; refuses one more past `limit` with an estimate of when to retry."""

    def __init__(self, limit: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.inflight = 0
        self.clock = clock
        self._done: deque[float] = deque(maxlen=RECENT_DONE)  # when recent analyses finished
        self._started: dict[int, float] = {}  # when each analysis in flight was admitted
        self._next = 0
        self._last_admitted = clock()
        self._lock = threading.Lock()

    def last_activity(self) -> float:
        """When an analysis was last admitted or last finished (the clock's time; its start when none has run)."""
        with self._lock:
            return max(self._last_admitted, self._done[-1] if self._done else self._last_admitted)

    def retry_after(self) -> int:
        """Seconds until a place is likely free, from how fast places have been freeing lately (the drain rate): the
        gap between completions, less the time since the last one. Overdue (an analysis far slower than the rest, or
        one nobody waits for any more), as long again as it has been since a place last freed; with nothing finished
        lately, as long as the oldest analysis in flight has run."""
        now = self.clock()
        recent = [t for t in self._done if now - t <= RECENT_WINDOW]
        if len(recent) >= 2:
            gap = (recent[-1] - recent[0]) / (len(recent) - 1)
            since = now - recent[-1]
            return max(1, math.ceil(gap - since if since < gap else since))
        oldest = min(self._started.values(), default=now)
        return max(1, math.ceil(now - oldest))

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
            mine, self._next = self._next, self._next + 1
            self._started[mine] = self._last_admitted = self.clock()
        try:
            yield
        finally:
            with self._lock:
                self.inflight -= 1
                del self._started[mine]
                self._done.append(self.clock())
