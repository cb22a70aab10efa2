"""Blocking work for a request that stops when nobody waits for it: its client left, or the server is stopping."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TypeVar

import anyio
from starlette.requests import Request
from starlette.types import Message, Receive

from namesake.core import CancelledWork, cancellable

T = TypeVar("T")
# How often a request's connection is asked whether its client is still there (seconds).
DISCONNECT_POLL_SECONDS = 0.25
# Where the app's middleware leaves the server's own `receive`: the one a route sees, wrapped by the middleware,
# never reports a disconnect once the body is read (Starlette's BaseHTTPMiddleware).
SERVER_RECEIVE = "namesake.server_receive"


async def gone(request: Request) -> bool:
    """Whether the request's client has disconnected, asked of the server without waiting."""
    receive: Receive = request.scope.get(SERVER_RECEIVE, request.receive)
    message: Message = {}
    with anyio.CancelScope() as scope:
        scope.cancel()  # the message, only if it is there already
        message = await receive()
    return message.get("type") == "http.disconnect"


async def while_connected(request: Request, work: Callable[[], T], on_cancel: Callable[[], None]) -> T:
    """Run `work` in a worker thread; when the client disconnects, or the server cancels the request as it stops,
    the work is told (`core.cancel`) and stops at its next step, freeing its admission place and its CPU."""
    event = threading.Event()

    def run() -> T:
        with cancellable(event):
            return work()

    # in the server's thread pool for blocking work (anyio's, as a plain route's): a task, so that it can be polled
    future = asyncio.ensure_future(anyio.to_thread.run_sync(run))
    try:
        while not event.is_set():
            done, _ = await asyncio.wait({future}, timeout=DISCONNECT_POLL_SECONDS)
            if done:
                break
            if await gone(request):
                event.set()
        return await future  # stopped or not, the work has ended before the request does
    except asyncio.CancelledError:
        event.set()  # the server is stopping: the work stops at its next step, in its thread
        on_cancel()
        raise
    except CancelledWork:
        on_cancel()
        raise
