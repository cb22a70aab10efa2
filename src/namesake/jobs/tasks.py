"""The jobs as one call each, over an opened runtime: promotion, reconciliation, retention, erasure of a user."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from namesake.adapters import Runtime
from namesake.corrections_memory import (
    CorrectionsMemoryCleanup,
    CorrectionsMemoryPromotion,
    CorrectionsMemoryReconciler,
    ErasureReceipt,
)
from namesake.jobs.runner import JobOutcome, run_exclusive
from namesake.transcripts import expire_transcripts as expire_in_stores


@dataclass
class Jobs:
    """The maintenance jobs over one runtime, as the API, the CLI and the scheduler start them.

    `on_promoted` counts what a promotion promoted and `on_alert` its alerts, however it was started.
    """

    runtime: Runtime
    on_promoted: Callable[[int], None] | None = None
    on_alert: Callable[[int], None] | None = None

    def promote(self, progress: Callable[[int], None] | None = None) -> JobOutcome:
        """The daily promotion, once across replicas."""
        rt = self.runtime
        job = CorrectionsMemoryPromotion(rt.db, rt.vectors, rt.settings, on_alert=self.on_alert)
        outcome = run_exclusive(rt.db, "promotion", lambda: job.run(progress))
        if self.on_promoted is not None:
            self.on_promoted(outcome.report.promoted)
        return outcome

    def reconcile(self, progress: Callable[[int], None] | None = None) -> JobOutcome:
        """Reconciliation of the corrections index with PostgreSQL, once across replicas."""
        rt = self.runtime
        job = CorrectionsMemoryReconciler(rt.db, rt.vectors, rt.embedder, rt.settings)
        return run_exclusive(rt.db, "reconciliation", lambda: job.run(progress))

    def erase_user(self, user_id: str, progress: Callable[[str, int], None] | None = None) -> ErasureReceipt:
        """GDPR erasure of one user (idempotent; a second call finds nothing), with its receipt."""
        rt = self.runtime
        return CorrectionsMemoryCleanup(rt.db, rt.vectors, rt.settings).erase(user_id, progress)

    def expire_transcripts(self, progress: Callable[[int], None] | None = None) -> JobOutcome:
        """The retention job: transcripts older than TRANSCRIPT_RETENTION_DAYS go, once across replicas (nothing to
        do unless it is set)."""
        rt = self.runtime
        return run_exclusive(rt.db, "retention", lambda: expire_in_stores(rt.db, rt.vectors, rt.settings,
                                                                                       progress=progress))  # fmt: skip
