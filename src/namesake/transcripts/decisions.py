"""The reviewer's decisions as taken (the transcript's history, what undo takes back), and what a decision reads of
its transcript: its language and its segments as analysed."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ARRAY, Text, cast, func, select
from sqlalchemy.dialects.postgresql import array
from sqlalchemy.orm import Session

from namesake.adapters.models import ReviewDecision, Transcript
from namesake.core.errors import NotFoundError

# The history a transcript shows: its last decisions, newest first.
HISTORY_LIMIT = 200


def log_decision_in(
    s: Session, transcript_id: str, *, action: str, label: str, suggestion_ids: list[str], scope: str | None
) -> None:
    """One decision as the reviewer took it, in the caller's transaction."""
    s.add(ReviewDecision(id=uuid.uuid4(), transcript_id=transcript_id, action=action, label=label,
                         suggestion_ids=suggestion_ids, scope=scope))  # fmt: skip


def log_undone_in(s: Session, transcript_id: str, suggestion_ids: list[str]) -> None:
    """The standing decisions that name any of `suggestion_ids`, marked taken back."""
    standing = s.scalars(
        select(ReviewDecision).where(
            ReviewDecision.transcript_id == transcript_id,
            ReviewDecision.undone_at.is_(None),
            ReviewDecision.suggestion_ids.op("&&")(cast(array(suggestion_ids), ARRAY(Text))),
        )
    ).all()
    for row in standing:
        row.undone_at = func.now()


def history_in(s: Session, transcript_id: str, limit: int = HISTORY_LIMIT) -> list[dict[str, Any]]:
    """The transcript's decisions, newest first: what each did and whether it was taken back (404 if unknown)."""
    if s.get(Transcript, transcript_id) is None:
        raise NotFoundError(f"transcript {transcript_id} not found", field="transcript_id")
    rows = s.scalars(
        select(ReviewDecision)
        .where(ReviewDecision.transcript_id == transcript_id)
        .order_by(ReviewDecision.created_at.desc(), ReviewDecision.id)
        .limit(limit)
    ).all()
    return [decision_json(row) for row in rows]


def decision_json(row: ReviewDecision) -> dict[str, Any]:
    """A decision as the history lists it."""
    return {
        "id": str(row.id),
        "action": row.action,
        "label": row.label,
        "suggestion_ids": list(row.suggestion_ids),
        "scope": row.scope,
        "created_at": _iso(row.created_at),
        "undone_at": _iso(row.undone_at) if row.undone_at else None,
    }


def _iso(when: datetime) -> str:
    return when.isoformat()


def language_of_in(s: Session, transcript_id: str) -> str:
    """The transcript's language as analysed ("en" when it said none or is not registered yet)."""
    return s.scalar(select(Transcript.language).where(Transcript.id == transcript_id)) or "en"


def segment_texts_in(s: Session, transcript_id: str) -> dict[str, str]:
    """The transcript's segments as last analysed, by id (empty when none were kept)."""
    segments = s.scalar(select(Transcript.segments).where(Transcript.id == transcript_id)) or []
    return {str(seg.get("id")): str(seg.get("text", "")) for seg in segments}
