"""build_services: the services over one runtime, wired once for the API, the CLI and the benches."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

from namesake.adapters import Runtime
from namesake.analysis import AnalysisService, SqlAnalysisStores, StageProcess
from namesake.app.admission import Admission
from namesake.app.metrics import Metrics
from namesake.core import Turns
from namesake.corrections_memory import (
    CorrectionsMemoryBootstrap,
    CorrectionsMemoryReader,
    CorrectionsMemoryService,
    CorrectionsMemoryWriter,
    SqlMemoryRecords,
    promoted_vocabulary,
)
from namesake.jobs import Jobs, RuntimeJobWork
from namesake.review import ReviewQueue, ReviewService, SqlReviewUnitOfWork
from namesake.transcripts import CanonicalListReader, TranscriptStore, delete_transcript


@dataclass
class Services:
    """What the routes, the commands and the scheduler call, each a use case's service; built once per process."""

    runtime: Runtime
    analysis: AnalysisService
    review: ReviewService
    queue: ReviewQueue
    memory: CorrectionsMemoryService
    jobs: Jobs
    writer: CorrectionsMemoryWriter  # a correction recorded directly (benches, tests), outside a review
    metrics: Metrics
    admission: Admission = field(default_factory=lambda: Admission(32))  # analyses held at once (HTTP)


def list_values(lists: CanonicalListReader, transcript_id: str) -> list[str]:
    """A transcript's list values as its analysis reads them (its lists and the promoted vocabulary)."""
    return [v for vs in lists.fetch_canonical_entities(transcript_id).lists.values() for v in vs]


def build_services(runtime: Runtime, metrics: Metrics | None = None, stages: StageProcess | None = None) -> Services:
    """Wire the services over one runtime (the memory's bootstrap first: a DIM_MISMATCH stops start-up here); with
    `stages`, the analyses' stages run in that child process (the server's)."""
    rt, s = runtime, runtime.settings
    m = metrics or Metrics()
    CorrectionsMemoryBootstrap(rt.vectors, rt.embedder, s).ensure_collection()
    reader = CorrectionsMemoryReader(rt.vectors, rt.embedder, s, on_error=m.failsoft_reads.inc)
    writer = CorrectionsMemoryWriter(rt.db, rt.vectors, rt.embedder, s, on_compensate=m.compensations.inc)
    transcripts = TranscriptStore(rt.db, s.erasure_grace_seconds)
    lists = CanonicalListReader(rt.vectors, rt.db, s, partial(promoted_vocabulary, rt.db))
    turns, admission = Turns(s.analysis_running_limit), Admission(s.analysis_queue_limit)
    m.watch(lambda: admission.inflight, lambda: turns.waiting)
    return Services(
        runtime,
        AnalysisService(
            s,
            SqlAnalysisStores(rt, transcripts, lists, writer.renew_applied),
            reader,
            rt.llm,
            lambda: rt.language_model_on_demand,
            turns,
            stages,
        ),
        ReviewService(SqlReviewUnitOfWork(writer, s.erasure_grace_seconds)),
        ReviewQueue(
            transcripts,
            s.review_fold_below,
            partial(delete_transcript, rt.db, rt.vectors, s),
            partial(list_values, lists),
        ),
        CorrectionsMemoryService(SqlMemoryRecords(rt.db, rt.vectors, lists, s.erasure_grace_seconds)),
        Jobs(RuntimeJobWork(rt), on_promoted=m.promotions.inc, on_alert=lambda _n: m.promotion_alerts.inc()),
        writer,
        m,
        admission,
    )
