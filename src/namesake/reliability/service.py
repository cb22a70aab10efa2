"""Reliability service: validates a transcript, feeds the pipeline from the stores, persists its suggestions."""

from __future__ import annotations

import multiprocessing
import time
import uuid
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from namesake.errors import ConflictError, StoreError, WorkerError
from namesake.models import CorrectionMirror, Suggestion, Transcript, User
from namesake.reliability.canonical import ReliabilityRagEnricher, index_canonical_entities, validate_entities
from namesake.reliability.inputs import TranscriptIn, check_limits, to_segments
from namesake.reliability.pipeline import MemoryBooster, PipelineInputs, RunStats, run_stages
from namesake.reliability.types import Candidate, RememberedCorrection
from namesake.runtime import Runtime
from namesake.text import compact

DEFAULT_USER = "default"


@dataclass
class PreparedAnalysis:
    """A transcript checked, registered and read from the stores: what the stages need, and the I/O time so far."""

    transcript_id: str
    inputs: PipelineInputs
    seconds: float


# Transcripts prepared in order, each with its stages running in a worker (or None: run here, needs the ports).
_Pending = deque[tuple[PreparedAnalysis, Future[tuple[list[Candidate], RunStats]] | None]]


@dataclass
class AnalysisResult:
    """One analysed transcript, in the predictions format of the benchmark and the API."""

    transcript_id: str
    mode: str
    seconds: float
    suggestions: list[dict[str, Any]]
    stats: dict[str, Any]

    def as_json(self) -> dict[str, Any]:
        """The output line of `namesake analyze` and the body of POST /v1/reliability/analyze."""
        return {
            "transcript_id": self.transcript_id,
            "mode": self.mode,
            "seconds": round(self.seconds, 4),
            "suggestions": self.suggestions,
            "stats": self.stats,
        }


def suggestion_json(row: Suggestion) -> dict[str, Any]:
    """A persisted suggestion as callers see it."""
    return {
        "id": str(row.id),
        "segment_id": row.segment_id,
        "start_char": row.start_char,
        "end_char": row.end_char,
        "original": row.original,
        "final": row.final,
        "entity_type": row.entity_type,
        "confidence": row.confidence,
        "status": row.status,
        "source": row.source,
        "signals": row.signals,
    }


def ensure_transcript(s: Session, transcript_id: str, user_id: str, language: str | None) -> None:
    """Create the user and transcript rows on first reference; a transcript belongs to one user."""
    s.execute(insert(User).values(id=user_id).on_conflict_do_nothing())
    s.execute(insert(Transcript).values(id=transcript_id, user_id=user_id, language=language).on_conflict_do_nothing())
    owner = s.scalar(select(Transcript.user_id).where(Transcript.id == transcript_id))
    if owner != user_id:
        raise ConflictError(f"transcript {transcript_id!r} belongs to another user", field="transcript_id")


def remembered_corrections(s: Session, user_id: str) -> list[RememberedCorrection]:
    """The user's active corrections: exact originals the pipeline replaces like a learned find-and-replace."""
    rows = s.execute(
        select(CorrectionMirror.original, CorrectionMirror.final, CorrectionMirror.entity_type).where(
            CorrectionMirror.user_id == user_id, CorrectionMirror.status == "active"
        )
    ).all()
    return [RememberedCorrection(o, f, t) for o, f, t in rows]


def refused_pairs(s: Session, user_id: str) -> set[tuple[str, str]]:
    """(original, final) pairs this user rejected: never proposed to them again."""
    rows = s.execute(
        select(Suggestion.original, Suggestion.final)
        .join(Transcript, Transcript.id == Suggestion.transcript_id)
        .where(Transcript.user_id == user_id, Suggestion.status == "rejected")
    ).all()
    return {(compact(o), compact(f)) for o, f in rows}


def persist_suggestions(s: Session, transcript_id: str, cands: list[Candidate]) -> list[Suggestion]:
    """One upsert on the span key: re-analysing refreshes open suggestions, never duplicates or reopens decided ones."""
    if not cands:
        return []
    rows = [
        {
            "id": uuid.uuid4(),
            "transcript_id": transcript_id,
            "segment_id": c.segment_id,
            "start_char": c.start_char,
            "end_char": c.end_char,
            "original": c.original,
            "final": c.final,
            "entity_type": c.entity_type,
            "confidence": c.confidence,
            "signals": c.signals,
            "status": c.decision.value,
            "source": c.source,
        }
        for c in cands
    ]
    stmt = insert(Suggestion).values(rows)
    stmt = stmt.on_conflict_do_update(
        constraint="uq_suggestions_span",
        set_={"confidence": stmt.excluded.confidence, "signals": stmt.excluded.signals, "status": stmt.excluded.status},
        # a suggestion the reviewer already decided stays as they left it (and is not returned)
        where=Suggestion.status.in_(("auto_applied", "pending")),
    )
    returned = s.scalars(stmt.returning(Suggestion), execution_options={"populate_existing": True}).all()
    return sorted(returned, key=lambda r: (r.segment_id, r.start_char))


class ReliabilityService:
    """Runs the pipeline for one transcript against the runtime's stores."""

    def __init__(self, runtime: Runtime, booster: MemoryBooster | None = None) -> None:
        self.runtime = runtime
        self.booster = booster
        self.enricher = ReliabilityRagEnricher(runtime.vectors, runtime.db, runtime.settings)

    def index_entities(self, transcript_id: str, entities: dict[str, list[str]]) -> int:
        """Validate and (re)index a transcript's canonical entities; returns chunks written."""
        clean = validate_entities(entities, max_items=self.runtime.settings.max_canonical_entities)
        return index_canonical_entities(
            self.runtime.vectors, self.runtime.embedder, self.runtime.settings, transcript_id, clean
        )

    def prepare(self, transcript: TranscriptIn, *, user_id: str | None = None) -> PreparedAnalysis:
        """Validate fully, register the transcript, index given entities, read the user's memory: the stages' input."""
        t0 = time.perf_counter()
        settings = self.runtime.settings
        check_limits(transcript, settings)
        user = user_id or transcript.user_id or DEFAULT_USER
        try:
            with self.runtime.db.session() as s:
                ensure_transcript(s, transcript.transcript_id, user, transcript.language)
                remembered = remembered_corrections(s, user)
                refused = refused_pairs(s, user)
        except SQLAlchemyError as exc:
            raise StoreError(f"PostgreSQL: {exc}") from exc
        if transcript.canonical_entities is not None:
            self.index_entities(transcript.transcript_id, transcript.canonical_entities)
        dictionary = self.enricher.fetch_canonical_entities(transcript.transcript_id, user)
        inputs = PipelineInputs(
            segments=to_segments(transcript),
            dictionary=dictionary,
            language=transcript.language,
            user_id=user,
            remembered=remembered,
            refused=refused,
        )
        return PreparedAnalysis(transcript.transcript_id, inputs, time.perf_counter() - t0)

    def needs_ports(self, prepared: PreparedAnalysis) -> bool:
        """Whether the stages need this process's stores (memory boost) or LLM, or are pure and may run anywhere."""
        # PostgreSQL is the truth: a user without active corrections has nothing in the index to boost with
        return bool(prepared.inputs.remembered and self.booster) or self.runtime.llm is not None

    def compute(self, prepared: PreparedAnalysis) -> tuple[list[Candidate], RunStats]:
        """Run the stages in this process, with its ports."""
        booster = self.booster if prepared.inputs.remembered else None
        return run_stages(prepared.inputs, self.runtime.settings, booster=booster, llm=self.runtime.llm)

    def finish(self, prepared: PreparedAnalysis, kept: list[Candidate], stats: RunStats) -> AnalysisResult:
        """Persist what the stages kept; returns the suggestions as stored."""
        t0 = time.perf_counter()
        try:
            with self.runtime.db.session() as s:
                rows = persist_suggestions(s, prepared.transcript_id, kept)
                out = [suggestion_json(r) for r in rows]
        except SQLAlchemyError as exc:
            raise StoreError(f"PostgreSQL: {exc}") from exc
        io_seconds = prepared.seconds + time.perf_counter() - t0
        stats.stage_seconds["fetch"] = round(io_seconds, 4)
        stats_json = stats.as_dict()
        stats_json["malformed_canonical_payloads"] = prepared.inputs.dictionary.malformed
        seconds = io_seconds + sum(v for k, v in stats.stage_seconds.items() if k != "fetch")
        return AnalysisResult(prepared.transcript_id, stats.mode, seconds, out, stats_json)

    def analyze(self, transcript: TranscriptIn, *, user_id: str | None = None) -> AnalysisResult:
        """Validate fully, index given entities, run the stages, persist; returns the suggestions made."""
        prepared = self.prepare(transcript, user_id=user_id)
        return self.finish(prepared, *self.compute(prepared))

    def analyze_many(
        self, transcripts: Iterable[TranscriptIn], *, user_id: str | None = None, workers: int = 1
    ) -> Iterator[AnalysisResult]:
        """Analyse in order; with workers > 1 the pure stages run in worker processes while this one does I/O."""
        if workers <= 1:
            for t in transcripts:
                yield self.analyze(t, user_id=user_id)
            return
        # spawn, not fork: this process holds database connections and the vector store's threads
        pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
        pending: _Pending = deque()
        try:
            for t in transcripts:
                prepared = self.prepare(t, user_id=user_id)
                job = (
                    None
                    if self.needs_ports(prepared)
                    else pool.submit(run_stages, prepared.inputs, self.runtime.settings)
                )
                pending.append((prepared, job))
                while len(pending) > 2 * workers or (pending and pending[0][1] is None):
                    yield self._finish_next(pending)
            while pending:
                yield self._finish_next(pending)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _finish_next(self, pending: _Pending) -> AnalysisResult:
        prepared, job = pending.popleft()
        try:
            kept, stats = self.compute(prepared) if job is None else job.result()
        except BrokenProcessPool as exc:
            raise WorkerError(f"a worker process died while analysing {prepared.transcript_id!r}: {exc}") from exc
        return self.finish(prepared, kept, stats)

    def list_suggestions(self, transcript_id: str) -> list[dict[str, Any]]:
        """Every suggestion of a transcript, in text order."""
        with self.runtime.db.session() as s:
            rows = s.scalars(
                select(Suggestion)
                .where(Suggestion.transcript_id == transcript_id)
                .order_by(Suggestion.segment_id, Suggestion.start_char)
            ).all()
            return [suggestion_json(r) for r in rows]
