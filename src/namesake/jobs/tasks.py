"""The jobs as one call each, over an opened runtime: promotion, reconciliation, retention, erasure of a user."""

from __future__ import annotations

from collections.abc import Callable

from namesake.adapters import Runtime
from namesake.corrections_memory import (
    CorrectionsMemoryCleanup,
    CorrectionsMemoryPromotion,
    CorrectionsMemoryReconciler,
    ErasureReceipt,
)
from namesake.jobs.runner import JobOutcome, run_exclusive
from namesake.transcripts import expire_transcripts as expire_in_stores


def promote(
    runtime: Runtime, *, progress: Callable[[int], None] | None = None, on_alert: Callable[[int], None] | None = None
) -> JobOutcome:
    """The daily promotion, once across replicas."""
    job = CorrectionsMemoryPromotion(runtime.db, runtime.vectors, runtime.settings, on_alert=on_alert)
    return run_exclusive(runtime.db, "promotion", lambda: job.run(progress))


def reconcile(runtime: Runtime, *, progress: Callable[[int], None] | None = None) -> JobOutcome:
    """Reconciliation of the corrections index with PostgreSQL, once across replicas."""
    job = CorrectionsMemoryReconciler(runtime.db, runtime.vectors, runtime.embedder, runtime.settings)
    return run_exclusive(runtime.db, "reconciliation", lambda: job.run(progress))


def erase_user(runtime: Runtime, user_id: str, *, progress: Callable[[str, int], None] | None = None) -> ErasureReceipt:
    """GDPR erasure of one user (idempotent; a second call finds nothing)."""
    return CorrectionsMemoryCleanup(runtime.db, runtime.vectors, runtime.settings).erase(user_id, progress)


def expire_transcripts(runtime: Runtime, *, progress: Callable[[int], None] | None = None) -> JobOutcome:
    """The retention job: transcripts older than TRANSCRIPT_RETENTION_DAYS go, once across replicas."""
    rt = runtime
    return run_exclusive(rt.db, "retention", lambda: expire_in_stores(rt.db, rt.vectors, rt.settings,
                                                                                   progress=progress))  # fmt: skip
