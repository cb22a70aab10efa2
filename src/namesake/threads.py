"""How many threads one analysis may use: every core, unless it runs in a worker process beside others."""

from __future__ import annotations

import os


def thread_budget() -> int:
    """The process's thread budget: what the worker pool set for BLAS (analysis.BLAS_THREADS), or every core (0)."""
    value = os.environ.get("OMP_NUM_THREADS", "")
    return int(value) if value.isdigit() else 0
