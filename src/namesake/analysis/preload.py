"""Imported once by the worker pool's fork server (`analysis.pool.StagePool`): the stages' modules and tables, loaded
before any worker is forked, so that every worker starts warm and shares those pages instead of loading its own.
Only the worker's side (`stage_worker`): the service's modules (stores, database) are not a worker's."""

from __future__ import annotations

import logging

try:
    from namesake.analysis.pool import WORKER_THREADS
    from namesake.analysis.worker import run_in_worker, warm_worker  # noqa: F401  (what a worker runs: imported here once)
    from namesake.core import Settings, set_thread_budget
    from namesake.reliability import warm_stages

    set_thread_budget(WORKER_THREADS)  # the fork server exists for the pool's one-thread workers
    warm_stages(Settings())  # the process's settings: a worker given others loads what differs in its initializer
except Exception as exc:  # (a worker's own initializer meets the same error and reports it)
    logging.getLogger(__name__).debug("stage preload skipped: %s", exc)
