"""GDPR erasure: everything of one user, in both stores, counted and verified; safe to retry at any step."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select

from namesake.adapters import (
    CanonicalVocabulary,
    CorrectionMirror,
    Database,
    ForgottenRefusal,
    VectorStore,
)
from namesake.core import CORRECTIONS_COLLECTION, Settings
from namesake.corrections_memory.promotion import min_tenants, refresh_global_vocabulary
from namesake.corrections_memory.scope import memory_filter
from namesake.transcripts import drop_transcript_entities, transcript_ids_in, user_row_counts_in
from namesake.users import delete_user_in, mark_erased, mark_transcripts_erased, user_count_in, user_lock_key

PAGE = 1000
Progress = Callable[[str, int], None]


@dataclass
class ErasureReceipt:
    """What was deleted and what remains (both zero-remaining on success)."""

    user_id: str
    deleted: dict[str, Any] = field(default_factory=dict)
    remaining: dict[str, int] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        """The receipt body of DELETE /v1/users/{user_id} and `namesake users erase`."""
        return {"user_id": self.user_id, "deleted": self.deleted, "remaining": self.remaining}


class CorrectionsMemoryCleanup:
    """Erases a user: mirror-listed points, then a filter sweep, transcript collections, then the rows."""

    def __init__(self, db: Database, store: VectorStore, settings: Settings) -> None:
        self.db, self.store, self.settings = db, store, settings

    def _row_counts(self, user_id: str) -> dict[str, int]:
        with self.db.session() as s:
            return {
                "users": user_count_in(s, user_id),
                **user_row_counts_in(s, user_id),
                "corrections": int(s.scalar(select(func.count()).where(CorrectionMirror.user_id == user_id)) or 0),
                "vocabulary": int(s.scalar(select(func.count()).where(CanonicalVocabulary.user_id == user_id)) or 0),
                "forgotten_refusals": int(
                    s.scalar(select(func.count()).where(ForgottenRefusal.user_id == user_id)) or 0
                ),
            }

    def _points(self, user_id: str) -> int:
        if not self.store.collection_exists(CORRECTIONS_COLLECTION):
            return 0
        return self.store.count(CORRECTIONS_COLLECTION, memory_filter(user_id))

    def erase(self, user_id: str, progress: Progress | None = None) -> ErasureReceipt:
        """Delete everything of user_id; raises on a failed step (nothing reported as done that is not).

        Holds the user's lock alone for the whole erasure: the user's writes in flight finish first and are
        erased with the rest; the ones that come after meet the tombstone (410). The receipt is counted
        under the lock, so what it says remains is what remains.
        """
        with self.db.exclusive_lock(user_lock_key(user_id)):
            return self._erase_locked(user_id, progress)

    def _erase_locked(self, user_id: str, progress: Progress | None) -> ErasureReceipt:
        receipt = ErasureReceipt(user_id)
        rows_before = self._row_counts(user_id)
        points_before = self._points(user_id)
        with self.db.session() as s:
            point_ids = list(
                s.scalars(select(CorrectionMirror.qdrant_point_id).where(CorrectionMirror.user_id == user_id))
            )
            transcripts = transcript_ids_in(s, user_id)
        if self.store.collection_exists(CORRECTIONS_COLLECTION):
            for i in range(0, len(point_ids), PAGE):
                self.store.delete(CORRECTIONS_COLLECTION, point_ids[i : i + PAGE])
                if progress is not None:
                    progress("points", len(point_ids[i : i + PAGE]))
            # anything the mirror missed (an orphan of a crashed write) goes by the user filter
            self.store.delete_by_filter(CORRECTIONS_COLLECTION, memory_filter(user_id))
        dropped = 0
        for tid in transcripts:
            dropped += drop_transcript_entities(self.store, self.settings, tid)
            if progress is not None:
                progress("collections", 1)
        with self.db.session() as s:
            mark_erased(s, user_id)
            mark_transcripts_erased(s, transcripts, self.settings.erasure_grace_seconds)
            delete_user_in(s, user_id)  # everything else cascades
            s.flush()
            refresh_global_vocabulary(
                s, self.settings.reliability_corrections_memory_promo_min_users, min_tenants(self.settings)
            )
        receipt.deleted = {"qdrant_points": points_before, "rows": rows_before, "collections": dropped}
        remaining_rows = self._row_counts(user_id)
        receipt.remaining = {"qdrant_points": self._points(user_id), "rows": sum(remaining_rows.values())}
        return receipt
