"""The jobs' work over one runtime's stores: `ports.JobWork` for real."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from namesake.adapters import Runtime
from namesake.corrections_memory import (
    CorrectionsMemoryCleanup,
    CorrectionsMemoryPromotion,
    CorrectionsMemoryReconciler,
    ErasureReceipt,
)
from namesake.jobs.ports import Progress
from namesake.jobs.runner import JobOutcome, run_exclusive
from namesake.transcripts import expire_transcripts


@dataclass
class RuntimeJobWork:
    """Each job over PostgreSQL and the vector store of one runtime; exclusive by PostgreSQL's advisory lock."""

    runtime: Runtime

    def exclusive(self, job: str, work: Callable[[], Any]) -> JobOutcome:
        return run_exclusive(self.runtime.db, job, work)

    def promote(self, progress: Progress | None, on_alert: Callable[[int], None] | None) -> Any:
        rt = self.runtime
        return CorrectionsMemoryPromotion(rt.db, rt.vectors, rt.settings, on_alert=on_alert).run(progress)

    def reconcile(self, progress: Progress | None) -> Any:
        rt = self.runtime
        return CorrectionsMemoryReconciler(rt.db, rt.vectors, rt.embedder, rt.settings).run(progress)

    def expire(self, progress: Progress | None) -> dict[str, int]:
        rt = self.runtime
        return expire_transcripts(rt.db, rt.vectors, rt.settings, progress=progress)

    def erase(self, user_id: str, progress: Callable[[str, int], None] | None) -> ErasureReceipt:
        rt = self.runtime
        return CorrectionsMemoryCleanup(rt.db, rt.vectors, rt.settings).erase(user_id, progress)
