"""The child side of `analysis.stage_process.StageProcess`: the stages and their language model in a process of their
own, each analysis on a thread, a cancel from the server stopping it at its next step, the memory boost asked of the
server (which holds the stores) over the same pipe. Imports nothing of the stores or the service."""

from __future__ import annotations

import contextlib
import pickle
import queue
import signal
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from namesake.core import (
    NamesakeError,
    Settings,
    WorkerError,
    cancellable,
    check_cancelled,
    configure_logging,
    few_heap_arenas,
    request_id,
    trim_heap,
)
from namesake.domain import Candidate
from namesake.language_model import build_language_model, warm_read
from namesake.reliability import BoostStats, LanguageModel, PipelineInputs, run_stages, warm_stages

# The messages, each a tuple that starts with its kind. Server → child: RUN (job, inputs, with a boost, request id),
# CANCEL (job), BOOSTED (job, candidates, stats), STOP. Child → server: READY, BOOST (job, user, candidates,
# excluded), DONE (job, candidates, stats), FAILED (job, error).
RUN, CANCEL, BOOSTED, STOP = "run", "cancel", "boosted", "stop"
# How often an analysis waiting for the server's boost looks whether it was cancelled (seconds).
ANSWER_POLL_SECONDS = 0.1
READY, BOOST, DONE, FAILED = "ready", "boost", "done", "failed"


@dataclass
class _Job:
    """One analysis running in the child: its cancel and the answers to its boosts."""

    cancel: threading.Event = field(default_factory=threading.Event)
    answers: queue.Queue[tuple[Any, ...]] = field(default_factory=queue.Queue)


class _Pipe:
    """The child's end of the pipe, sent to from every analysis's thread (one at a time)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self._lock = threading.Lock()

    def send(self, message: tuple[Any, ...]) -> None:
        with self._lock:
            self.conn.send(message)


class _BoostThroughServer:
    """The memory's port as the stages see it in the child: the server boosts the candidates with its stores and
    sends them back; they are copied into the child's own, which the stages go on with."""

    def __init__(self, pipe: _Pipe, job_id: int, job: _Job) -> None:
        self.pipe, self.job_id, self.job = pipe, job_id, job

    def boost(self, user_id: str, candidates: list[Candidate], *, exclude: frozenset[str] = frozenset()) -> BoostStats:
        """Fail-soft like the server's booster: its own errors are counted in the stats it sends back."""
        self.pipe.send((BOOST, self.job_id, user_id, candidates, exclude))
        while True:  # until the server answers, or the analysis is cancelled (its client, or the server, gone)
            try:
                boosted, stats = self.job.answers.get(timeout=ANSWER_POLL_SECONDS)
                break
            except queue.Empty:
                check_cancelled()
        for mine, theirs in zip(candidates, boosted, strict=True):
            mine.__dict__.update(theirs.__dict__)
        return stats  # type: ignore[no-any-return]


def serve_stages(conn: Connection, settings: Settings) -> None:
    """The child's life: load and warm the model and the stages, say READY, then run what the server sends until
    STOP or the server's end of the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C at the server's terminal: the server ends it, in order
    configure_logging()  # the server's JSON lines
    few_heap_arenas()  # as the server: the threads' freed memory pooled, not kept per thread
    # the model compiles in its runtime's threads, mostly outside the interpreter, beside the stages' tables
    with ThreadPoolExecutor(1, thread_name_prefix="warm-model") as beside:
        loading = beside.submit(_warm_model, settings)
        with contextlib.suppress(NamesakeError):  # a setting the stages cannot use: each run meets it and says so
            warm_stages(settings)
        model = loading.result()
    pipe, jobs = _Pipe(conn), dict[int, _Job]()
    # as many threads as the server runs analyses at once, kept: native code keeps buffers for every thread that ever
    # computed (BLAS, the model's runtime), which a thread's end does not give back
    runner = ThreadPoolExecutor(settings.analysis_running_limit or settings.analysis_queue_limit, "stages")
    stop = threading.Event()
    if settings.heap_trim_seconds:
        threading.Thread(target=_trim_every, args=(settings.heap_trim_seconds, stop), name="trim", daemon=True).start()
    pipe.send((READY,))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            break
        kind = message[0]
        if kind == RUN:
            job_id, inputs, with_boost, rid = message[1:]
            jobs[job_id] = job = _Job()
            runner.submit(_run, pipe, jobs, job_id, job, inputs, settings, model, with_boost, rid)
        elif kind == CANCEL and message[1] in jobs:
            jobs[message[1]].cancel.set()
        elif kind == BOOSTED and message[1] in jobs:
            jobs[message[1]].answers.put(message[2:])
        elif kind == STOP:
            break
    for job in list(jobs.values()):  # what still runs stops at its next step
        job.cancel.set()
    runner.shutdown(wait=True, cancel_futures=True)
    stop.set()


def _trim_every(seconds: float, stop: threading.Event) -> None:
    """Hand the heap's free pages back every `seconds` (what a busy server does too: app/idle.py)."""
    while not stop.wait(seconds):
        trim_heap()


def _warm_model(settings: Settings) -> LanguageModel | None:
    """The language model, its first read done (its buffers made), or None: off, or it cannot load."""
    model = build_language_model(settings)
    if model is not None:
        warm_read(model)
    return model


def _run(
    pipe: _Pipe,
    jobs: dict[int, _Job],
    job_id: int,
    job: _Job,
    inputs: PipelineInputs,
    settings: Settings,
    model: LanguageModel | None,
    with_boost: bool,
    rid: str,
) -> None:
    """One analysis on a thread of the child: DONE with what the stages kept, or FAILED with why (a cancel:
    CancelledWork); its log lines carry the request's id."""
    request_id.set(rid)
    try:
        with cancellable(job.cancel):
            booster = _BoostThroughServer(pipe, job_id, job) if with_boost else None
            kept, stats = run_stages(inputs, settings, booster=booster, language_model=model)
        answer: tuple[Any, ...] = (DONE, job_id, kept, stats)
    except Exception as exc:  # every failure goes back to the request that waits for it
        answer = (FAILED, job_id, portable(exc))
    finally:
        jobs.pop(job_id, None)
    with contextlib.suppress(OSError, ValueError):  # the server has gone: nobody waits for it
        pipe.send(answer)


def portable(exc: Exception) -> Exception:
    """The error as it can cross the pipe: itself when it pickles, else a WorkerError that names it."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return WorkerError(f"the stages failed: {type(exc).__name__}: {exc}")
    return exc
