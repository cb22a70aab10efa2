"""build_services: the services over one runtime, wired once for the API, the CLI and the benches."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from namesake.adapters import Runtime
from namesake.analysis import AnalysisService
from namesake.app.admission import Admission
from namesake.app.metrics import Metrics
from namesake.core import NamesakeError
from namesake.corrections_memory import (
    CorrectionsMemoryBootstrap,
    CorrectionsMemoryReader,
    CorrectionsMemoryWriter,
    ErasureReceipt,
    ForgetReceipt,
    Refusal,
    active_corrections,
    forget_correction,
    forget_refusal,
    list_corrections,
    list_refusals,
    promoted_vocabulary,
)
from namesake.jobs import JobOutcome
from namesake.jobs import erase_user as erase_user_job
from namesake.jobs import expire_transcripts as expire_transcripts_job
from namesake.jobs import promote as promote_job
from namesake.jobs import reconcile as reconcile_job
from namesake.review import ReviewService, SqlReviewUnitOfWork
from namesake.transcripts import CanonicalListReader, TranscriptDeletion, TranscriptStore, delete_transcript
from namesake.users import build_terms, export

log = logging.getLogger(__name__)


@dataclass
class Services:
    """What the routes, the commands and the scheduler call; built once per process."""

    runtime: Runtime
    analysis: AnalysisService
    review: ReviewService
    writer: CorrectionsMemoryWriter  # a correction recorded directly (benches, tests), outside a review
    metrics: Metrics
    admission: Admission = field(default_factory=lambda: Admission(32))  # analyses held at once (HTTP)

    def promote(self, progress: Callable[[int], None] | None = None) -> JobOutcome:
        """The promotion job, counted in the metrics however it was started (HTTP, CLI, scheduler)."""
        outcome = promote_job(self.runtime, progress=progress, on_alert=lambda _n: self.metrics.promotion_alerts.inc())
        self.metrics.promotions.inc(outcome.report.promoted)
        return outcome

    def reconcile(self, progress: Callable[[int], None] | None = None) -> JobOutcome:
        """The reconciliation job."""
        return reconcile_job(self.runtime, progress=progress)

    def expire_transcripts(self, progress: Callable[[int], None] | None = None) -> JobOutcome:
        """The retention job (nothing to do unless TRANSCRIPT_RETENTION_DAYS is set)."""
        return expire_transcripts_job(self.runtime, progress=progress)

    def delete_transcript(self, transcript_id: str) -> TranscriptDeletion:
        """One transcript, its suggestions and its canonical entities."""
        rt = self.runtime
        return delete_transcript(rt.db, rt.vectors, rt.settings, transcript_id)

    def corrections(
        self, user_id: str, *, include_superseded: bool = False, limit: int | None = None, before: int | None = None
    ) -> list[dict[str, Any]]:
        """The user's corrections as mirrored in PostgreSQL, newest first (a page below id `before`)."""
        return list_corrections(
            self.runtime.db, user_id, include_superseded=include_superseded, limit=limit, before=before
        )

    def forget_correction(self, user_id: str, correction_id: int) -> ForgetReceipt:
        """Forget one correction (and the history of that original) in both stores."""
        rt = self.runtime
        return forget_correction(rt.db, rt.vectors, user_id, correction_id, rt.settings.erasure_grace_seconds)

    def refusals(self, user_id: str) -> list[Refusal]:
        """The pairs the user rejected that still stand (never proposed to them again), last refused first."""
        return list_refusals(self.runtime.db, user_id)

    def forget_refusal(self, user_id: str, original: str, final: str) -> Refusal:
        """Take a refusal back: the pair may be proposed to the user again."""
        return forget_refusal(self.runtime.db, user_id, original, final)

    def readiness(self) -> dict[str, str]:
        """Each store "ok" or "failed" (the reason goes to the log): what /readyz answers."""
        checks: dict[str, str] = {}
        for name, probe in (
            ("postgresql", self.runtime.db.ping),
            ("vector_store", self.runtime.vectors.list_collections),
        ):
            try:
                probe()
                checks[name] = "ok"
            except NamesakeError as exc:
                log.warning("readiness: %s: %s", name, exc.message)
                checks[name] = "failed"
        return checks

    def erase_user(self, user_id: str, progress: Callable[[str, int], None] | None = None) -> ErasureReceipt:
        """GDPR erasure of one user, with its receipt."""
        return erase_user_job(self.runtime, user_id, progress=progress)

    def vocabulary(self, user_id: str, fmt: str, transcript_id: str | None = None) -> dict[str, Any]:
        """What the user taught (and, with a transcript, its canonical list) in an ASR engine's request shape."""
        db = self.runtime.db
        corrections = [(c.original, c.final, c.entity_type, c.frequency) for c in active_corrections(db, user_id)]
        canonical = None
        if transcript_id is not None:
            canonical = self.analysis.canonical_lists(transcript_id, user_id)
        promoted = promoted_vocabulary(db, user_id, **self.analysis.enricher.promoted_limits())
        return export(build_terms(corrections, promoted, canonical), fmt, user_id)


def build_services(runtime: Runtime, metrics: Metrics | None = None) -> Services:
    """Wire the services over one runtime (the memory's bootstrap first: a DIM_MISMATCH stops start-up here)."""
    s = runtime.settings
    m = metrics or Metrics()
    CorrectionsMemoryBootstrap(runtime.vectors, runtime.embedder, s).ensure_collection()
    reader = CorrectionsMemoryReader(runtime.vectors, runtime.embedder, s, on_error=m.failsoft_reads.inc)
    writer = CorrectionsMemoryWriter(
        runtime.db, runtime.vectors, runtime.embedder, s, on_compensate=m.compensations.inc
    )
    transcripts = TranscriptStore(runtime.db, s.erasure_grace_seconds)
    enricher = CanonicalListReader(runtime.vectors, runtime.db, s, partial(promoted_vocabulary, runtime.db))
    review = ReviewService(SqlReviewUnitOfWork(writer, s.erasure_grace_seconds))
    analysis = AnalysisService(runtime, transcripts, enricher, reader, renew=writer.renew_applied)
    return Services(runtime, analysis, review, writer, m, Admission(s.analysis_queue_limit))
