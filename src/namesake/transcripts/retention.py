"""Transcripts are kept for a while, not for ever: delete one (API), or expire the old ones (a job)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, select

from namesake.adapters import Database, SuggestionRow, Transcript, VectorStore
from namesake.core import NotFoundError, Settings
from namesake.transcripts.canonical_index import drop_transcript_entities
from namesake.users import user_lock_key

# Transcripts expired per transaction by the retention job.
PAGE = 200


@dataclass(frozen=True)
class TranscriptDeletion:
    """What deleting a transcript removed; what its user taught stays in their memory."""

    transcript_id: str
    suggestions: int
    collections: int

    def as_json(self) -> dict[str, Any]:
        """The body of DELETE /v1/transcripts/{id}."""
        return {
            "transcript_id": self.transcript_id,
            "deleted": {"transcripts": 1, "suggestions": self.suggestions, "collections": self.collections},
        }


def delete_transcript(db: Database, store: VectorStore, settings: Settings, transcript_id: str) -> TranscriptDeletion:
    """Drop the transcript's entities, then its row and suggestions; a retry after a failure converges.

    The entities go first: a failure there leaves the row, so the retry finds the transcript again.
    Corrections taught on it stay (they are the user's, and name the transcript as text only).
    """
    with db.session() as s:
        owner = s.scalar(select(Transcript.user_id).where(Transcript.id == transcript_id))
    if owner is None:
        raise NotFoundError(f"transcript {transcript_id} not found", field="transcript_id")
    # the owner's lock, alone: an analysis of the transcript in flight lands before, or after and anew
    with db.exclusive_lock(user_lock_key(owner)):
        dropped = drop_transcript_entities(store, settings, transcript_id)
        with db.session() as s:
            suggestions = s.scalar(select(func.count()).where(SuggestionRow.transcript_id == transcript_id)) or 0
            s.execute(delete(Transcript).where(Transcript.id == transcript_id))  # suggestions cascade
    return TranscriptDeletion(transcript_id, int(suggestions), dropped)


def expire_transcripts(
    db: Database,
    store: VectorStore,
    settings: Settings,
    *,
    now: datetime | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, int]:
    """Delete the transcripts last analysed more than TRANSCRIPT_RETENTION_DAYS ago (none when unset)."""
    days = settings.transcript_retention_days
    if days is None:
        return {"expired": 0}
    cutoff = (now or datetime.now(UTC)) - timedelta(days=days)
    when = func.coalesce(Transcript.analyzed_at, Transcript.created_at)
    expired = 0
    while True:
        with db.session() as s:
            ids = list(s.scalars(select(Transcript.id).where(when < cutoff).order_by(Transcript.id).limit(PAGE)))
        for tid in ids:
            try:
                delete_transcript(db, store, settings, tid)
            except NotFoundError:  # deleted meanwhile (the API, a user's erasure)
                continue
            expired += 1
        if progress is not None and ids:
            progress(len(ids))
        if len(ids) < PAGE:
            return {"expired": expired}
