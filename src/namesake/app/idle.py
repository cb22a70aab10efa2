"""A server that has been idle a while gives its memory back: the memoised lookups emptied, the heap trimmed."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from namesake.app.admission import Admission
from namesake.core import give_back

log = logging.getLogger(__name__)
# How often the server looks whether it has become idle (seconds).
IDLE_CHECK_SECONDS = 5.0


class IdleGiveBack:
    """Once no analysis has run for `idle_seconds`, empties the caches (and `also`'s) once, until the next one."""

    def __init__(
        self,
        admission: Admission,
        idle_seconds: float,
        also: list[Callable[[], object]],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.admission, self.idle_seconds, self.also, self.clock = admission, idle_seconds, also, clock
        self._given_back_at = clock()
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

    def start(self) -> None:
        """Look every IDLE_CHECK_SECONDS in a thread of its own, until `stop`."""
        self._thread = threading.Thread(target=self._run, name="idle-give-back", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(IDLE_CHECK_SECONDS):
            try:
                self.check()
            except Exception:  # a failed trim must not end the thread: memory is given back next time
                log.exception("giving memory back failed")

    def stop(self) -> None:
        """Stop looking (the thread ends within a check's interval)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=IDLE_CHECK_SECONDS * 2)
