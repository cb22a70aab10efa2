"""The jobs as one call each, over their work (`ports.JobWork`): promotion, reconciliation, retention, erasure."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from namesake.corrections_memory import ErasureReceipt
from namesake.jobs.ports import JobWork, Progress
from namesake.jobs.runner import JobOutcome


@dataclass
class Jobs:
    """The maintenance jobs as the API, the CLI and the scheduler start them: the periodic ones once across
    replicas; erasure whenever asked (a second call finds nothing).

    `on_promoted` counts what a promotion promoted and `on_alert` its alerts, however it was started.
    """

    work: JobWork
    on_promoted: Callable[[int], None] | None = None
    on_alert: Callable[[int], None] | None = None

    def promote(self, progress: Progress | None = None) -> JobOutcome:
        """The daily promotion, once across replicas."""
        outcome = self.work.exclusive("promotion", lambda: self.work.promote(progress, self.on_alert))
        if self.on_promoted is not None:
            self.on_promoted(outcome.report.promoted)
        return outcome

    def reconcile(self, progress: Progress | None = None) -> JobOutcome:
        """Reconciliation of the corrections index with PostgreSQL, once across replicas."""
        return self.work.exclusive("reconciliation", lambda: self.work.reconcile(progress))

    def erase_user(self, user_id: str, progress: Callable[[str, int], None] | None = None) -> ErasureReceipt:
        """GDPR erasure of one user (idempotent; a second call finds nothing), with its receipt."""
        return self.work.erase(user_id, progress)

    def expire_transcripts(self, progress: Progress | None = None) -> JobOutcome:
        """The retention job: transcripts older than TRANSCRIPT_RETENTION_DAYS go, once across replicas (nothing to
        do unless it is set)."""
        return self.work.exclusive("retention", lambda: self.work.expire(progress))
