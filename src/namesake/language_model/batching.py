"""The compiled model as one shared, bounded resource: the lines of concurrent requests read in the same batches.

Each request's windows are packed into lines of their own (`compiled.pack`), never beside another request's; the
lines waiting, whoever's, go through the graph a batch at a time, first come first read. A line's result does not
depend on the lines it shares a batch with (bit for bit on AVX-512 and AMX CPUs, in bfloat16 too; within 1e-4 nat
on AVX2-only ones, whose kernels sum some batch shapes in another order: `tests/integration/test_lm_batching.py`),
so a transcript reads the same alone or under load. No thread of its own: a waiting caller reads the next batch when
the model is free, and returns as soon as its own lines are read.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np

from namesake.core import cancelled, check_cancelled

R = TypeVar("R")
# (rows, lines: indices into rows) → (len(rows), 2) log-probabilities; only the rows on a line are read
ReadLines = Callable[[Sequence[R], list[list[int]]], np.ndarray]


@dataclass(eq=False)
class _Job(Generic[R]):
    """One caller's rows, its lines still to read, and what came back."""

    rows: Sequence[R]
    left: int
    totals: np.ndarray
    error: BaseException | None = None
    done: bool = False


class LineBatcher(Generic[R]):
    """Reads the lines of every caller waiting, `per_batch` lines at a time, one batch at a time."""

    def __init__(self, read: ReadLines[R], per_batch: int) -> None:
        self._read, self.per_batch = read, per_batch
        self._waiting: deque[tuple[_Job[R], list[int]]] = deque()
        self._busy = False
        self._cond = threading.Condition()
        self.batches = 0
        self.shared_batches = 0  # batches that held lines of more than one caller

    def read(self, rows: Sequence[R], lines: list[list[int]]) -> np.ndarray:
        """(len(rows), 2) log-probabilities of these rows, their `lines` read among whatever else is waiting."""
        job: _Job[R] = _Job(rows, len(lines), np.zeros((len(rows), 2)), done=not lines)
        with self._cond:
            self._waiting.extend((job, line) for line in lines)
        while not job.done:
            with self._cond:
                while not job.done and (self._busy or not self._waiting):
                    self._cond.wait()
                if job.done:
                    break
                if cancelled():  # its client has gone: its lines are not read, the others' are
                    self._waiting = deque(item for item in self._waiting if item[0] is not job)
                    self._cond.notify_all()
                    check_cancelled()
                self._busy = True
                taken = [self._waiting.popleft() for _ in range(min(self.per_batch, len(self._waiting)))]
            self._read_batch(taken)
        if job.error is not None:
            raise job.error
        return job.totals

    def when_free(self, fn: Callable[[], object]) -> None:
        """Run `fn` between batches, the model held so that no batch reads meanwhile (giving its buffers back)."""
        with self._cond:
            while self._busy:
                self._cond.wait()
            self._busy = True
        try:
            fn()
        finally:
            with self._cond:
                self._busy = False
                self._cond.notify_all()

    def _read_batch(self, taken: list[tuple[_Job[R], list[int]]]) -> None:
        """One batch through the model; its results (or its error) to the callers whose lines it held."""
        merged: list[R] = []
        lines: list[list[int]] = []
        back: list[tuple[_Job[R], int]] = []
        for job, line in taken:
            lines.append(list(range(len(merged), len(merged) + len(line))))
            merged.extend(job.rows[i] for i in line)
            back.extend((job, i) for i in line)
        out, error = None, None
        try:
            out = self._read(merged, lines)
        except BaseException as exc:  # the callers of this batch hear of it; the others' lines are read on
            error = exc
        with self._cond:
            self._busy = False
            self.batches += 1
            self.shared_batches += len({id(job) for job, _ in taken}) > 1
            if out is not None:
                for k, (job, i) in enumerate(back):
                    job.totals[i] = out[k]
            for job, _ in taken:
                if error is not None:
                    job.error = error
                job.left -= 1
                job.done = job.left == 0 or job.error is not None
            if error is not None:  # a failed caller's other lines are not worth reading
                self._waiting = deque(item for item in self._waiting if item[0].error is None)
            self._cond.notify_all()
