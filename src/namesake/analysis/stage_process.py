"""The server's stages in a child process of their own, started again fresh when the server is idle.

A server's analyses leave its memory at the level their load brought it to: CPython's object arenas and the model
runtime's buffers, each kept by a few long-lived objects, do not go back to the system when the work stops
(docs/benchmarks/operations.md). Run in a child process, the stages' memory goes back whole when that child ends:
`recycle` ends it once no analysis runs and starts a fresh one, warm, for the next request. The child asks the
server for the memory boost (the server holds the stores) over the same pipe; a request whose client leaves sends
a cancel, and the child stops that analysis at its next step. Code of the child's side: `analysis.stage_child`.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import multiprocessing
import queue
import threading
from collections.abc import Callable
from typing import Any

from namesake.analysis.stage_child import BOOST, BOOSTED, CANCEL, DONE, FAILED, READY, RUN, STOP, serve_stages
from namesake.core import Settings, WorkerError, cancelled, request_id
from namesake.domain import Candidate
from namesake.reliability import BoostStats, MemoryBooster, PipelineInputs, RunStats

log = logging.getLogger(__name__)
# How often a waiting request looks whether its client has left (seconds).
CANCEL_POLL_SECONDS = 0.1
# How long a child that was asked to stop has before it is ended (seconds).
STOP_SECONDS = 5.0
# How long start-up waits for a child to have loaded and warmed the stages and the model (seconds).
READY_SECONDS = 120.0
_DIED = "died"


class _Child:
    """One child process, its end of the pipe, and the queues of the analyses it runs for this process."""

    def __init__(self, settings: Settings, on_exit: Callable[[_Child], None]) -> None:
        context = multiprocessing.get_context("spawn")  # not forked from a process holding stores and threads
        self.conn, theirs = context.Pipe()
        self.process = context.Process(
            target=serve_stages, args=(theirs, settings), name="namesake-stages", daemon=True
        )
        self.process.start()
        theirs.close()
        self.jobs: dict[int, queue.Queue[tuple[Any, ...]]] = {}
        self.ready = threading.Event()
        self.gone = False
        self._send = threading.Lock()
        self._on_exit = on_exit
        self._reader = threading.Thread(target=self._read, name="stages-reader", daemon=True)
        self._reader.start()

    def send(self, message: tuple[Any, ...]) -> None:
        """Send to the child (from any request's thread); a child gone is a WorkerError."""
        try:
            with self._send:
                self.conn.send(message)
        except (OSError, ValueError) as exc:
            raise WorkerError(f"the stage process has gone: {exc}") from exc

    def _read(self) -> None:
        """Hand each message to the analysis it is for; when the child goes, tell every analysis still waiting."""
        while True:
            try:
                message = self.conn.recv()
            except (EOFError, OSError):
                break
            if message[0] == READY:
                self.ready.set()
            elif (answers := self.jobs.get(message[1])) is not None:
                answers.put(message)
        self.gone = True
        self.ready.set()  # nobody waits for a child that will never be ready
        for answers in list(self.jobs.values()):
            answers.put((_DIED, 0))
        self._on_exit(self)

    def stop(self) -> None:
        """Ask the child to stop, and end it if it has not within STOP_SECONDS."""
        with contextlib.suppress(WorkerError):
            self.send((STOP,))
        self.process.join(STOP_SECONDS)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(STOP_SECONDS)
        self.conn.close()


class StageProcess:
    """Runs the stages of the server's analyses in one child process (started now, warming while the server does);
    `recycle` gives its memory back at idle; `close` ends it."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._closed = False
        self._child: _Child | None = self._start()

    def _start(self) -> _Child:
        return _Child(self.settings, self._gone)

    def _gone(self, child: _Child) -> None:
        """A child's pipe closed: the next analysis starts another (one that died is logged)."""
        with self._lock:
            if self._child is child:
                self._child = None
        if child.process.exitcode not in (0, None) or child.jobs:
            log.warning("the stage process ended (exit code %s); a new one starts", child.process.exitcode)

    def wait_ready(self, timeout: float = READY_SECONDS) -> bool:
        """Block until the child has loaded the model and warmed the stages (start-up, before /readyz says ready)."""
        child = self._child
        return child is not None and child.ready.wait(timeout) and not child.gone

    def run(self, inputs: PipelineInputs, booster: MemoryBooster | None) -> tuple[list[Candidate], RunStats]:
        """The stages of one analysis in the child; the boost asked back here; a client that leaves cancels it."""
        with self._lock:
            if self._closed:
                raise WorkerError("the server is stopping: no new analysis starts")
            child = self._child = self._child or self._start()
            job_id = next(self._ids)
            answers: queue.Queue[tuple[Any, ...]] = queue.Queue()
            child.jobs[job_id] = answers
        try:
            child.send((RUN, job_id, inputs, booster is not None, request_id.get()))
            return _wait_for(child, job_id, answers, booster)
        finally:
            child.jobs.pop(job_id, None)

    def recycle(self) -> bool:
        """End the child and start a fresh one, if no analysis runs in it: what the stages kept goes back to the
        system. Whether it did."""
        with self._lock:
            child = self._child
            if self._closed or child is None or child.jobs or not child.ready.is_set():
                return False
            self._child = self._start()
        child.stop()
        log.info("idle: the stage process started again fresh (what it held given back)")
        return True

    def close(self) -> None:
        """End the child: what runs in it stops at its next step (the server has drained its requests first)."""
        with self._lock:
            self._closed = True
            child, self._child = self._child, None
        if child is not None:
            child.stop()


def _wait_for(
    child: _Child, job_id: int, answers: queue.Queue[tuple[Any, ...]], booster: MemoryBooster | None
) -> tuple[list[Candidate], RunStats]:
    """Wait for the child's answer, boosting here when it asks, and sending a cancel once the client has gone."""
    cancel_sent = False
    while True:
        try:
            message = answers.get(timeout=CANCEL_POLL_SECONDS)
        except queue.Empty:
            if not cancel_sent and cancelled():
                child.send((CANCEL, job_id))
                cancel_sent = True
            continue
        kind = message[0]
        if kind == BOOST:
            child.send((BOOSTED, job_id, *_boosted(booster, *message[2:])))
        elif kind == DONE:
            return message[2], message[3]
        elif kind == FAILED:
            raise message[2]
        else:
            raise WorkerError(f"the stage process ended while analysing (exit code {child.process.exitcode})")


def _boosted(
    booster: MemoryBooster | None, user_id: str, candidates: list[Candidate], exclude: frozenset[str]
) -> tuple[list[Candidate], BoostStats]:
    """The child's candidates boosted by this process's memory (fail-soft: the booster counts its own errors)."""
    if booster is None:
        return candidates, BoostStats()
    try:
        return candidates, booster.boost(user_id, candidates, exclude=exclude)
    except Exception:  # the child waits for an answer whatever happens: without the boost, as a failed read
        log.exception("the memory's boost failed; the analysis goes on without it")
        return candidates, BoostStats(errors=1)
