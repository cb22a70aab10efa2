"""Service functions of the corrections memory, one per use."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from namesake.corrections_memory.reader import CorrectionsMemoryReader
from namesake.corrections_memory.writer import CorrectionInput, CorrectionMemoryWriter, WriteResult
from namesake.db import Database
from namesake.models import CorrectionMirror
from namesake.reliability.pipeline import BoostStats
from namesake.reliability.types import Candidate


def record_correction(*, writer: CorrectionMemoryWriter, correction: CorrectionInput) -> WriteResult:
    """Remember an accepted, edited or manual correction for its user."""
    return writer.record(correction)


def boost_candidates(*, reader: CorrectionsMemoryReader, user_id: str, candidates: list[Candidate]) -> BoostStats:
    """Apply the user's memory to pipeline candidates (fail-soft)."""
    return reader.boost(user_id, candidates)


def correction_json(row: CorrectionMirror) -> dict[str, Any]:
    """A correction as callers see it."""
    return {
        "id": row.id,
        "entity_type": row.entity_type,
        "original": row.original,
        "final": row.final,
        "action": row.action,
        "frequency": row.frequency,
        "status": row.status,
        "promoted_to_canonical": row.promoted_to_canonical,
        "quarantine_until": row.quarantine_until.isoformat(),
        "supersedes_id": row.supersedes_id,
        "transcript_id": row.transcript_id,
        "created_at": row.created_at.isoformat(),
        "updated_at": row.updated_at.isoformat(),
    }


def list_corrections(db: Database, user_id: str, *, include_superseded: bool = False) -> list[dict[str, Any]]:
    """The user's corrections, newest first (active only unless asked)."""
    query = select(CorrectionMirror).where(CorrectionMirror.user_id == user_id)
    if not include_superseded:
        query = query.where(CorrectionMirror.status == "active")
    with db.session() as s:
        return [correction_json(r) for r in s.scalars(query.order_by(CorrectionMirror.id.desc())).all()]
