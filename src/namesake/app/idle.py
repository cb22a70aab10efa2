"""A server that has been idle a while gives its memory back: the memoised lookups emptied, the heap trimmed; a busy
one trims its heap every so often."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from namesake.app.admission import Admission
from namesake.core import give_back, trim_heap

log = logging.getLogger(__name__)
# How often the server looks whether it has become idle (seconds).
IDLE_CHECK_SECONDS = 5.0


class IdleGiveBack:
    """Once no analysis has run for `idle_seconds`, empties the caches (and `also`'s) once, until the next one; while
    the server works, trims its heap every `trim_seconds` (0: never)."""

    def __init__(
        self,
        admission: Admission,
        idle_seconds: float,
        also: list[Callable[[], object]],
        clock: Callable[[], float] = time.monotonic,
        trim_seconds: float = 0,
    ) -> None:
        self.admission, self.idle_seconds, self.also, self.clock = admission, idle_seconds, also, clock
        self.trim_seconds = trim_seconds
        self._given_back_at = self._trimmed_at = clock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def check(self) -> bool:
        """Give back now if the server is idle and has worked since it last gave back; whether it did."""
        last = self.admission.last_activity()
        idle = self.admission.inflight == 0 and self.clock() - last >= self.idle_seconds
        if not idle or last < self._given_back_at:
            return False
        dropped = give_back(self.also)
        self._given_back_at = self.clock()
        log.info("idle for %.0f s: %d cached results dropped, the heap trimmed", self.idle_seconds, dropped)
        return True

    def trim_if_due(self) -> bool:
        """Trim the heap if the server worked since the last trim, `trim_seconds` ago or more; whether it did."""
        now = self.clock()
        if not self.trim_seconds or now - self._trimmed_at < self.trim_seconds:
            return False
        if self.admission.inflight == 0 and self.admission.last_activity() < self._trimmed_at:
            return False
        trim_heap()
        self._trimmed_at = now
        return True

    def start(self) -> None:
        """Look every IDLE_CHECK_SECONDS in a thread of its own, until `stop`."""
        self._thread = threading.Thread(target=self._run, name="idle-give-back", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(IDLE_CHECK_SECONDS):
            try:
                self.check() or self.trim_if_due()
            except Exception:  # a failed trim must not end the thread: memory is given back next time
                log.exception("giving memory back failed")

    def stop(self) -> None:
        """Stop looking (the thread ends within a check's interval)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=IDLE_CHECK_SECONDS * 2)
