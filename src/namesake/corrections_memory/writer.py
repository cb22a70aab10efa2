"""Recording a correction: one PostgreSQL transaction under an advisory lock, Qdrant written first, compensated."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from namesake.adapters import CORRECTION_ACTIONS, CorrectionMirror, Database, Embedder, VectorPoint, VectorStore
from namesake.core import (
    CORRECTIONS_COLLECTION,
    InvalidInputError,
    NamesakeError,
    Settings,
    compact,
    context_around,
    normalise,
)
from namesake.corrections_memory.consolidation import Consolidation, Existing, SemanticHit, WriteOutcome, consolidate
from namesake.corrections_memory.heard import heard_entry, with_heard
from namesake.corrections_memory.repository import in_conflict
from namesake.corrections_memory.scope import memory_filter
from namesake.domain import ENTITY_TYPES_SAID, CorrectionStatus, MemoryScope, ReviewAction, entity_type_of
from namesake.users import claim_user, next_correction_number_in

log = logging.getLogger(__name__)
PAYLOAD_SCHEMA_VERSION = 1
# accept / edit: a reviewer's decision on a suggestion; manual: a fix of a span nothing suggested.


@dataclass(frozen=True)
class CorrectionInput:
    """A reviewer's correction: accepted/edited suggestion, or a manual fix (no suggestion)."""

    user_id: str
    entity_type: str
    original: str
    final: str
    action: ReviewAction = ReviewAction.ACCEPT
    source_suggestion_id: str | None = None
    transcript_id: str | None = None
    segment_text: str | None = None
    start_char: int | None = None
    end_char: int | None = None
    context: str | None = None  # the words around the span, when the caller kept them (a decided suggestion)
    scope: MemoryScope = MemoryScope.USER  # where it applies next (corrections_memory/scope.py)
    vector: tuple[float, ...] = ()  # its original embedded: set by `CorrectionsMemoryWriter.prepare`, before a unit

    @property
    def original_norm(self) -> str:
        """The words heard as the memory keys them."""
        return normalise(self.original)

    @property
    def final_norm(self) -> str:
        """The final as the memory compares it."""
        return normalise(self.final)


@dataclass(frozen=True)
class WriteResult:
    """What the write did and the active correction it left."""

    outcome: WriteOutcome
    correction_id: int
    point_id: uuid.UUID
    frequency: int


@dataclass
class MemoryUnit:
    """One unit of work: the transaction the memory and what taught it write in, and the index writes to undo.

    Opened by `CorrectionsMemoryWriter.unit()`; the caller writes its own rows (a decision, a manual fix) in
    `session`, the writer records in it; one commit, or nothing and every index write undone.
    """

    session: Session
    undo: list[Callable[[], None]]


def validate_correction(c: CorrectionInput, max_final: int) -> CorrectionInput:
    """Check and normalise the input; raises InvalidInputError naming the field."""
    if not c.user_id or not c.user_id.strip():
        raise InvalidInputError("user_id must not be empty", field="user_id")
    entity_type = entity_type_of(c.entity_type)
    if entity_type is None:
        raise InvalidInputError(ENTITY_TYPES_SAID, field="entity_type")
    if c.action not in CORRECTION_ACTIONS:
        raise InvalidInputError(f"action must be one of {', '.join(CORRECTION_ACTIONS)}", field="action")
    original, final = c.original.strip(), c.final.strip()
    if not compact(original):
        raise InvalidInputError("original must contain a letter or digit", field="original")
    if not compact(final):
        raise InvalidInputError("final must contain a letter or digit", field="final")
    has_span = c.segment_text is not None and c.start_char is not None and c.end_char is not None
    if has_span and not 0 <= c.start_char < c.end_char <= len(c.segment_text):  # type: ignore[operator,arg-type]
        raise InvalidInputError("span offsets are outside the segment", field="start_char")
    return CorrectionInput(
        **{**c.__dict__, "entity_type": entity_type, "original": original, "final": final[:max_final]}
    )


def context_phrase(c: CorrectionInput, radius: int) -> str:
    """±radius characters around the span (as given, or cut from the segment), or the original alone."""
    if c.context:
        return c.context
    if c.segment_text is None or c.start_char is None or c.end_char is None:
        return c.original
    return context_around(c.segment_text, c.start_char, c.end_char, radius)


def mirror_payload(row: CorrectionMirror, *, created_at: datetime | None = None) -> dict[str, Any]:
    """The payload of a memory point, derived from its mirror row: the one definition of the point schema."""
    created = created_at or row.created_at
    return {
        "user_id": row.user_id,
        "entity_type": row.entity_type,
        "original": row.original,
        "original_norm": row.original_norm,
        "final": row.final,
        "final_norm": row.final_norm,
        "action": row.action,
        "frequency": row.frequency,
        "context_phrase": row.context_phrase,
        "promoted_to_canonical": bool(row.promoted_to_canonical),
        "quarantine_until": int(row.quarantine_until.timestamp()),
        "created_at": int(created.timestamp()),
        "source_suggestion_id": row.source_suggestion_ids[-1] if row.source_suggestion_ids else None,
        "transcript_id": row.transcript_id,
        "payload_schema_version": PAYLOAD_SCHEMA_VERSION,
        "embedding_model": row.embedding_model,
        "embedding_model_version": row.embedding_model_version,
    }


def correction_lock_key(user_id: str, entity_type: str, original_norm: str) -> str:
    """The advisory-lock key: one writer at a time per (user, type, original)."""
    return f"corrections:{user_id}\x1f{entity_type}\x1f{original_norm}"


class CorrectionsMemoryWriter:
    """Writes corrections so that PostgreSQL and Qdrant agree, or the caller hears why not."""

    def __init__(
        self,
        db: Database,
        store: VectorStore,
        embedder: Embedder,
        settings: Settings,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        on_compensate: Callable[[], None] | None = None,
    ) -> None:
        self.db, self.store, self.embedder, self.settings, self.clock = db, store, embedder, settings, clock
        self.on_compensate = on_compensate

    def record(self, correction: CorrectionInput) -> WriteResult:
        """Record one correction in a unit of its own; replay is a no-op, errors surface after compensation."""
        prepared = self.prepare(correction)
        with self.unit() as work:
            return self.record_in(work, prepared)

    def prepare(self, correction: CorrectionInput) -> CorrectionInput:
        """Check the correction and embed its original: done before the transaction opens."""
        c = validate_correction(correction, self.settings.reliability_corrections_memory_final_text_max_len)
        return replace(c, vector=tuple(self.embedder.embed([c.original])[0].tolist()))

    @contextmanager
    def unit(self) -> Iterator[MemoryUnit]:
        """A unit of work: commit when the block ends; on any error roll back and undo the index, newest first.

        Database errors leave it as StoreError / ConflictError (Database.session); an error answered has
        changed nothing, whether it came from a flush, the index itself or the commit.
        """
        undo: list[Callable[[], None]] = []
        try:
            with self.db.session() as session:
                yield MemoryUnit(session, undo)
        except NamesakeError:
            for step in reversed(undo):
                self._compensate(step)
            raise

    def lock(self, work: MemoryUnit, c: CorrectionInput) -> None:
        """Register the user and take the (user, type, original) lock: one writer at a time per correction."""
        claim_user(work.session, c.user_id, self.settings.erasure_grace_seconds)
        work.session.execute(
            text("SELECT pg_advisory_xact_lock(hashtextextended(:k, 0))"),
            {"k": correction_lock_key(c.user_id, c.entity_type, c.original_norm)},
        )

    def record_in(
        self, work: MemoryUnit, prepared: CorrectionInput, *, source_suggestion_id: str | None = None
    ) -> WriteResult:
        """Record the correction in the caller's unit of work (its lock taken here unless already held).

        `source_suggestion_id` names the row that taught it when the caller wrote it in this unit (a manual
        fix's suggestion: a repeat finds the same row, so the write is a replay).
        """
        if not prepared.vector:
            raise ValueError("a correction is prepared (checked and embedded) before its unit opens")
        self.lock(work, prepared)  # advisory transaction locks are re-entrant
        if source_suggestion_id is not None:
            prepared = replace(prepared, source_suggestion_id=source_suggestion_id)
        return self._record_locked(work, prepared)

    def _record_locked(self, work: MemoryUnit, c: CorrectionInput) -> WriteResult:
        session = work.session
        active = session.scalar(
            select(CorrectionMirror)
            .where(
                CorrectionMirror.user_id == c.user_id,
                CorrectionMirror.entity_type == c.entity_type,
                CorrectionMirror.original_norm == c.original_norm,
                CorrectionMirror.status == CorrectionStatus.ACTIVE,
            )
            .with_for_update()
        )
        decision = consolidate(
            suggestion_id=c.source_suggestion_id,
            final_norm=c.final_norm,
            same_original=None if active is None else self._existing(session, active, c),
            semantic=None if active is not None else self._semantic_top1(session, c),
            dedupe_threshold=self.settings.reliability_corrections_memory_dedupe_threshold,
        )
        if decision.outcome is WriteOutcome.REPLAY and active is not None:
            return WriteResult(decision.outcome, active.id, active.qdrant_point_id, active.frequency)
        if decision.outcome is WriteOutcome.REINFORCED:
            reinforced = self._reinforce(work, decision, c)
            if reinforced is not None:
                return reinforced
            decision = Consolidation(WriteOutcome.NEW)  # its twin was forgotten meanwhile: this one is new
        return self._insert(work, c, superseded=active, decision=decision)

    @staticmethod
    def _existing(session: Session, active: CorrectionMirror, c: CorrectionInput) -> Existing:
        """The active correction of the same words as consolidate weighs it: where it applies, and its conflict."""
        same_scope = active.scope == c.scope and (
            active.scope != MemoryScope.TRANSCRIPT or active.transcript_id == c.transcript_id
        )
        other = None
        if in_conflict(active) and active.supersedes_id is not None:
            side = select(CorrectionMirror.final_norm).where(CorrectionMirror.id == active.supersedes_id)
            other = session.scalar(side)
        return Existing(active.id, active.final_norm, tuple(active.source_suggestion_ids), same_scope,
                        in_conflict(active), other)  # fmt: skip

    def _semantic_top1(self, session: Session, c: CorrectionInput) -> SemanticHit | None:
        flt = memory_filter(c.user_id, entity_type=c.entity_type, embedding_model=self.embedder.name)
        hits = self.store.query(CORRECTIONS_COLLECTION, list(c.vector), limit=1, flt=flt)
        if not hits:
            return None
        row_id = session.scalar(
            select(CorrectionMirror.id).where(
                CorrectionMirror.qdrant_point_id == hits[0].id, CorrectionMirror.status == CorrectionStatus.ACTIVE
            )
        )
        return SemanticHit(row_id, hits[0].score, normalise(str(hits[0].payload.get("final", ""))))

    def _reinforce(self, work: MemoryUnit, decision: Consolidation, c: CorrectionInput) -> WriteResult | None:
        """Teach the named row once more; None when it is gone (forgotten between the query and the lock)."""
        session, undo = work.session, work.undo
        row = session.get(CorrectionMirror, decision.target_row_id, with_for_update=True, populate_existing=True)
        if row is None or row.status != CorrectionStatus.ACTIVE:
            return None
        old = {"frequency": row.frequency, "source_suggestion_id": row.source_suggestion_ids[-1:] or None,
               "quarantine_until": int(row.quarantine_until.timestamp())}  # fmt: skip
        row.frequency += 1  # one side of a conflict taught again: chosen (in_conflict holds at frequency 1 only)
        row.scope, row.transcript_id = c.scope, c.transcript_id or row.transcript_id  # the latest lesson says where
        if c.source_suggestion_id:
            row.source_suggestion_ids = [*row.source_suggestion_ids, c.source_suggestion_id]
        # a semantic twin: the words heard this time are kept with it, so that they come back too (heard.py)
        context = context_phrase(c, self.settings.reliability_corrections_memory_context_radius)
        taught = heard_entry(c.original, context, c.action, c.source_suggestion_id)
        row.also_heard = with_heard(list(row.also_heard or []), row.original, taught)
        # taught again: it applies for another QUARANTINE_DAYS from now (quarantine = time since last taught)
        row.quarantine_until = self.applies_until()
        row.updated_at = func.now()
        new_payload = {"frequency": row.frequency, "source_suggestion_id": c.source_suggestion_id,
                       "quarantine_until": int(row.quarantine_until.timestamp())}  # fmt: skip
        point = row.qdrant_point_id
        undo.append(lambda: self.store.set_payload(CORRECTIONS_COLLECTION, [point], old))
        self.store.set_payload(CORRECTIONS_COLLECTION, [point], new_payload)
        session.flush()
        return WriteResult(WriteOutcome.REINFORCED, row.id, row.qdrant_point_id, row.frequency)

    def _insert(
        self, work: MemoryUnit, c: CorrectionInput, *, superseded: CorrectionMirror | None, decision: Consolidation
    ) -> WriteResult:
        session, undo, vector = work.session, work.undo, list(c.vector)
        original_norm, final_norm = c.original_norm, c.final_norm
        s = self.settings
        now = self.clock()
        quarantine_until = self.applies_until()
        point_id = uuid.uuid4()
        user_seq = next_correction_number_in(session, c.user_id)
        row = CorrectionMirror(
            user_seq=user_seq,
            qdrant_point_id=point_id,
            user_id=c.user_id,
            entity_type=c.entity_type,
            original=c.original,
            original_norm=original_norm,
            final=c.final,
            final_norm=final_norm,
            action=c.action,
            frequency=1,
            context_phrase=context_phrase(c, s.reliability_corrections_memory_context_radius),
            quarantine_until=quarantine_until,
            promoted_to_canonical=False,
            status=CorrectionStatus.ACTIVE,
            supersedes_id=superseded.id if superseded is not None else None,
            in_conflict=decision.outcome is WriteOutcome.CONFLICT,
            source_suggestion_ids=[c.source_suggestion_id] if c.source_suggestion_id else [],
            transcript_id=c.transcript_id,
            scope=c.scope,
            payload_schema_version=PAYLOAD_SCHEMA_VERSION,
            embedding_model=self.embedder.name,
            embedding_model_version=self.embedder.version,
        )
        payload = mirror_payload(row, created_at=now)
        old_points: list[VectorPoint] = []
        if superseded is not None:
            old_points = self.store.retrieve(CORRECTIONS_COLLECTION, [superseded.qdrant_point_id], with_vectors=True)
        # Compensation: if the mirror does not take the write, neither may the index.
        undo.append(lambda: self.store.delete(CORRECTIONS_COLLECTION, [point_id]))
        self.store.upsert(CORRECTIONS_COLLECTION, [VectorPoint(point_id, vector, payload)])
        if superseded is not None:
            # The old final must stop boosting at once: its point leaves the index, its row stays as history.
            if old_points:
                undo.append(lambda: self.store.upsert(CORRECTIONS_COLLECTION, old_points))
            self.store.delete(CORRECTIONS_COLLECTION, [superseded.qdrant_point_id])
            superseded.status = CorrectionStatus.SUPERSEDED
            superseded.updated_at = func.now()
            session.flush()
        session.add(row)
        session.flush()
        replaced = superseded is not None and decision.outcome is not WriteOutcome.CONFLICT
        outcome = WriteOutcome.SUPERSEDED if replaced else decision.outcome
        return WriteResult(outcome, row.id, point_id, 1)

    def renew_applied(self, user_id: str, pairs: list[tuple[str, str]]) -> int:
        """Fixes the pipeline just applied by themselves apply for another QUARANTINE_DAYS, like fixes taught again: a
        fix that keeps working does not expire. `pairs` are (original, final) as applied; returns how many renewed."""
        wanted = {(normalise(o), normalise(f)) for o, f in pairs}
        if not wanted:
            return 0
        until = self.applies_until()
        with self.unit() as work:
            rows = work.session.scalars(
                select(CorrectionMirror)
                .where(
                    CorrectionMirror.user_id == user_id,
                    CorrectionMirror.status == CorrectionStatus.ACTIVE,
                    CorrectionMirror.promoted_to_canonical.is_(False),
                    CorrectionMirror.quarantine_until > self.clock(),  # an expired fix did not apply: not renewed
                    CorrectionMirror.original_norm.in_({o for o, _ in wanted}),
                )
                .with_for_update()
            ).all()
            renewed = [row for row in rows if (row.original_norm, row.final_norm) in wanted]
            for row in renewed:
                work.undo.append(self._payload_back(row.qdrant_point_id, int(row.quarantine_until.timestamp())))
                row.quarantine_until = until
                self.store.set_payload(CORRECTIONS_COLLECTION, [row.qdrant_point_id],
                                       {"quarantine_until": int(until.timestamp())})  # fmt: skip
        return len(renewed)

    def _payload_back(self, point: uuid.UUID, quarantine_until: int) -> Callable[[], None]:
        """The compensation of a renewal: the point's old date back."""
        return lambda: self.store.set_payload(CORRECTIONS_COLLECTION, [point], {"quarantine_until": quarantine_until})

    def applies_until(self) -> datetime:
        """When a correction taught now stops applying unless taught again or promoted before then."""
        return self.clock() + timedelta(days=self.settings.reliability_corrections_memory_quarantine_days)

    def _compensate(self, undo: Callable[[], None]) -> None:
        """Undo an index write; if even that fails, reconciliation will, and the log says so."""
        if self.on_compensate is not None:
            self.on_compensate()
        try:
            undo()
        except NamesakeError as exc:
            log.error("compensation failed, reconciliation will repair: %s", exc.message)
