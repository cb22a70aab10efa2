"""Undo what one decision taught: one count fewer, or the correction gone and the one it replaced back."""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol

from sqlalchemy import any_, func, literal, select, text

from namesake.adapters import CorrectionMirror, VectorPoint
from namesake.core import CORRECTIONS_COLLECTION, ConflictError
from namesake.corrections_memory.heard import without_taught_by
from namesake.corrections_memory.writer import CorrectionsMemoryWriter, MemoryUnit, correction_lock_key, mirror_payload
from namesake.domain import CorrectionStatus


class UnteachOutcome(StrEnum):
    """What taking a decision back did to the memory."""

    REDUCED = "reduced"  # taught more than once: one count fewer
    UNTAUGHT = "untaught"  # taught by this decision alone: gone
    RESTORED = "restored"  # gone, and the correction it had replaced applies again


class TaughtCorrection(Protocol):
    """What the undo of one decision reads of the correction that decision recorded."""

    original: str
    final: str
    status: str
    promoted_to_canonical: bool
    frequency: int
    source_suggestion_ids: list[str]


def unteach_step(row: TaughtCorrection | None, suggestion_id: str) -> UnteachOutcome | None:
    """What taking back the decision on `suggestion_id` does to the correction it recorded (pure).

    None when nothing of it is left; ConflictError when something newer depends on it. UNTAUGHT becomes
    RESTORED when the correction had replaced another one, which then applies again.
    """
    if row is None or suggestion_id not in row.source_suggestion_ids:
        return None
    pair = f"“{row.original} → {row.final}”"
    if row.status != CorrectionStatus.ACTIVE:
        raise ConflictError(
            f"a newer correction has replaced {pair} since this decision: undo or forget that one first",
            field="suggestion_id",
        )
    if row.promoted_to_canonical:
        raise ConflictError(f"{pair} was promoted to the user's vocabulary since this decision", field="suggestion_id")
    return UnteachOutcome.REDUCED if row.frequency > 1 else UnteachOutcome.UNTAUGHT


def unteach_in(
    writer: CorrectionsMemoryWriter, work: MemoryUnit, *, user_id: str, suggestion_id: str
) -> UnteachOutcome | None:
    """Take back the memory write the decision on `suggestion_id` made, in the caller's unit of work.

    None when nothing of it is left (the reviewer forgot it since). ConflictError when something newer
    depends on it: a later correction replaced it, or it was promoted to the user's vocabulary.
    """
    session, store = work.session, writer.store
    taught_by = literal(suggestion_id) == any_(CorrectionMirror.source_suggestion_ids)
    taught = session.scalar(
        select(CorrectionMirror)
        .where(CorrectionMirror.user_id == user_id, taught_by)
        .order_by(CorrectionMirror.id.desc())
        .limit(1)
    )
    if taught is None:
        return None
    # the writer's lock first, then the row: the same order as a write, so the two never deadlock
    session.execute(
        text("SELECT pg_advisory_xact_lock(hashtextextended(:k, 0))"),
        {"k": correction_lock_key(user_id, taught.entity_type, taught.original_norm)},
    )
    row = session.get(CorrectionMirror, taught.id, with_for_update=True, populate_existing=True)
    step = unteach_step(row, suggestion_id)
    if row is None or step is None:
        return None
    point = row.qdrant_point_id
    if step is UnteachOutcome.REDUCED:
        old = {"frequency": row.frequency, "source_suggestion_id": row.source_suggestion_ids[-1]}
        row.source_suggestion_ids = [i for i in row.source_suggestion_ids if i != suggestion_id]
        row.also_heard = without_taught_by(list(row.also_heard or []), suggestion_id)
        row.frequency -= 1
        row.updated_at = func.now()
        last = row.source_suggestion_ids[-1] if row.source_suggestion_ids else None
        new = {"frequency": row.frequency, "source_suggestion_id": last}
        work.undo.append(lambda: store.set_payload(CORRECTIONS_COLLECTION, [point], old))
        store.set_payload(CORRECTIONS_COLLECTION, [point], new)
        session.flush()
        return UnteachOutcome.REDUCED
    kept = store.retrieve(CORRECTIONS_COLLECTION, [point], with_vectors=True)
    work.undo.append(lambda: store.upsert(CORRECTIONS_COLLECTION, kept))
    store.delete(CORRECTIONS_COLLECTION, [point])
    replaced = session.get(CorrectionMirror, row.supersedes_id, with_for_update=True) if row.supersedes_id else None
    session.delete(row)
    session.flush()
    if replaced is None or replaced.status != CorrectionStatus.SUPERSEDED:
        return UnteachOutcome.UNTAUGHT
    return _restore(writer, work, replaced)


def _restore(writer: CorrectionsMemoryWriter, work: MemoryUnit, row: CorrectionMirror) -> UnteachOutcome:
    """The correction an undone one had replaced applies again: active, and back in the index."""
    row.status = CorrectionStatus.ACTIVE
    row.updated_at = func.now()
    row.embedding_model, row.embedding_model_version = writer.embedder.name, writer.embedder.version
    vector = writer.embedder.embed([row.original])[0].tolist()
    point = row.qdrant_point_id
    work.undo.append(lambda: writer.store.delete(CORRECTIONS_COLLECTION, [point]))
    writer.store.upsert(CORRECTIONS_COLLECTION, [VectorPoint(point, vector, mirror_payload(row))])
    work.session.flush()
    return UnteachOutcome.RESTORED
