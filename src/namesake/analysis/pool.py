"""Worker processes for the pure stages: started early, warmed once by the fork server, one BLAS thread each."""

from __future__ import annotations

import multiprocessing
import os
import threading
from concurrent.futures import Future, ProcessPoolExecutor

from namesake.analysis.worker import run_in_worker, warm_worker
from namesake.core import BLAS_LOCK, Settings, set_thread_budget
from namesake.domain import Candidate
from namesake.reliability import PipelineInputs, RunStats

# Threads of one analysis in a worker process (one worker per core).
WORKER_THREADS = 1
# What BLAS libraries read for their thread count when they load (in a worker: when it starts).
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _one_blas_thread_per_worker() -> dict[str, str | None]:
    """Workers that start from now on load their BLAS library with one thread each (unless the operator set a
    count): a worker per core with a thread per core each oversubscribes the cores."""
    saved = {k: os.environ.get(k) for k in BLAS_THREADS}
    if all(v is None for v in saved.values()):
        os.environ.update(dict.fromkeys(BLAS_THREADS, "1"))
    return saved


def _restore(saved: dict[str, str | None]) -> None:
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def _worker_context() -> multiprocessing.context.BaseContext:
    """Workers forked from a fork server that imported and warmed the stages once (`stage_preload`): not forked
    from this process, which holds database connections and the vector store's threads; spawned where there is
    no fork server."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["namesake.analysis.preload"])
    return context


class StagePool:
    """Worker processes for the pure stages, every one started (and warming: imports, tables, the language model) as
    soon as the pool is made, so that they are ready when the first transcript is: `namesake analyze` makes it
    before it opens the stores."""

    def __init__(self, settings: Settings, workers: int) -> None:
        self.settings, self.workers = settings, workers
        self._blas = _one_blas_thread_per_worker()
        # one thread for each analysis while the workers hold the cores: theirs, and this process's embedder
        self._budget = set_thread_budget(WORKER_THREADS)
        self._pool = ProcessPoolExecutor(
            workers, mp_context=_worker_context(), initializer=warm_worker, initargs=(settings, WORKER_THREADS)
        )
        # a process is started per submission while none is idle: all of them, now, from a thread, since each
        # start waits for the fork server to have loaded the stages while this one goes on to open the stores
        self._starting = threading.Thread(target=self._start_all, name="stage-pool-start", daemon=True)
        self._starting.start()

    def _start_all(self) -> None:
        with BLAS_LOCK:  # the first submission forks the fork server: not while OpenBLAS multiplies (threads.BLAS_LOCK)
            for _ in range(self.workers):
                self._pool.submit(os.getpid)

    def submit(self, inputs: PipelineInputs) -> Future[tuple[list[Candidate], RunStats]]:
        """The stages of one transcript, in the next free worker."""
        return self._pool.submit(run_in_worker, inputs, self.settings)

    def close(self) -> None:
        """Wait for the workers to stop (jobs not started are cancelled) and give this process its threads back."""
        try:
            self._starting.join()
            self._pool.shutdown(wait=True, cancel_futures=True)
        finally:
            _restore(self._blas)
            set_thread_budget(self._budget)

    def __enter__(self) -> StagePool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
