"""What the maintenance jobs need, as a protocol: run a job once across replicas and do each job's work.

`jobs/work.py: RuntimeJobWork` is the adapter over one runtime's stores; `tests/fakes/jobs.py` is the in-memory one
the jobs' unit tests use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from namesake.corrections_memory import ErasureReceipt
from namesake.jobs.runner import JobOutcome

T = TypeVar("T")
Progress = Callable[[int], None]


class JobWork(Protocol):
    """The stores' side of each job, and the lock and record that make a run exclusive."""

    def exclusive(self, job: str, work: Callable[[], Any]) -> JobOutcome:
        """`work` run and recorded if no other process runs `job` (JobAlreadyRunningError otherwise)."""
        ...

    def promote(self, progress: Progress | None, on_alert: Callable[[int], None] | None) -> Any:
        """One promotion run; its report counts `promoted`."""
        ...

    def reconcile(self, progress: Progress | None) -> Any:
        """The corrections index made to agree with PostgreSQL; its report."""
        ...

    def expire(self, progress: Progress | None) -> dict[str, int]:
        """The transcripts past their retention gone; how many."""
        ...

    def erase(self, user_id: str, progress: Callable[[str, int], None] | None) -> ErasureReceipt:
        """Everything of one user gone from every store; the receipt."""
        ...
