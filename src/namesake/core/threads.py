"""How many threads one analysis may use: every core, unless it runs in a worker process beside others."""

from __future__ import annotations

import os
import threading

# OpenBLAS multiplies on one pool of threads for the whole process: two threads multiplying at once can deadlock in it
# (OpenBLAS issue #937: a caller spinning in `inner_thread` for ever), and its thread count, which threadpoolctl sets,
# is a process global. A run here hung so, 18 minutes: the embedder's first encode, in its background load, beside the
# numpy language model's pass. Every section that multiplies with OpenBLAS (the embedder, the numpy language model)
# or sets its thread count holds this lock.
BLAS_LOCK = threading.RLock()


def thread_budget() -> int:
    """The process's thread budget: what the worker pool set for BLAS (analysis.pool.BLAS_THREADS), or every core."""
    value = os.environ.get("OMP_NUM_THREADS", "")
    return int(value) if value.isdigit() else 0
