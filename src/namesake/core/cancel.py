"""Work nobody waits for stops: an analysis checks between its steps whether its client is still there.

The HTTP layer sets an event when the client disconnects (or the server shuts down); the stages call
`check_cancelled` between steps and stop with `CancelledWork` before anything is written. Work with no event
(the CLI, a worker process) runs to its end.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from namesake.core.errors import NamesakeError

_current: ContextVar[threading.Event | None] = ContextVar("namesake_cancel", default=None)


class CancelledWork(NamesakeError):
    """The client of this work has gone: it stopped between two steps, and nothing of it was saved."""

    code = "CANCELLED"


@contextmanager
def cancellable(event: threading.Event) -> Iterator[None]:
    """Run the block's work (in this thread or context) so that setting `event` stops it at its next check."""
    token = _current.set(event)
    try:
        yield
    finally:
        _current.reset(token)


def cancelled() -> bool:
    """Whether the work running in this context has lost its client."""
    event = _current.get()
    return event is not None and event.is_set()


def check_cancelled() -> None:
    """Raise CancelledWork if the work's event is set; nothing otherwise (cheap: called between steps)."""
    if cancelled():
        raise CancelledWork("the client went away: the analysis stopped before saving anything")
