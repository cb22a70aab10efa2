"""Reconciliation: make the Qdrant index agree with PostgreSQL, the source of truth."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select

from namesake.adapters import CorrectionMirror, Database, Embedder, VectorPoint, VectorStore
from namesake.core import CORRECTIONS_COLLECTION, Settings
from namesake.corrections_memory.writer import mirror_payload
from namesake.domain import CorrectionStatus
from namesake.transcripts import collection_for, is_transcript_collection, transcript_ids_in
from namesake.users import COLLECTIONS_LOCK

SCROLL_PAGE = 1000
Progress = Callable[[int], None]


@dataclass
class ReconcileReport:
    """Counts of one reconciliation run."""

    points_seen: int = 0
    rows_seen: int = 0
    orphans_deleted: int = 0
    orphans_too_young: int = 0
    superseded_deleted: int = 0
    restored: int = 0
    drift_repaired: int = 0
    unrestorable: int = 0
    orphan_collections_dropped: int = 0
    optimized: bool = False  # the embedded store compacted the memory's segments (it never does by itself)


# Fields whose drift changes what the boost or promotion does; repaired from PostgreSQL.
DRIFT_FIELDS = ("frequency", "promoted_to_canonical", "final", "quarantine_until", "user_id", "entity_type")


def drifted(point_payload: dict[str, Any], row: CorrectionMirror) -> dict[str, Any]:
    """The fields whose stored value differs from the mirror's (booleans compared as 0/1 ints)."""
    want = mirror_payload(row)
    out = {}
    for key in DRIFT_FIELDS:
        have, expected = point_payload.get(key), want[key]
        if isinstance(expected, bool):
            expected, have = int(expected), int(bool(have))
        if have != expected:
            out[key] = want[key]
    return out


@dataclass
class CorrectionsMemoryReconciler:
    """Deletes orphan points (past a grace period), restores missing ones, repairs payload drift."""

    db: Database
    store: VectorStore
    embedder: Embedder  # a missing point is restored with its original embedded again
    settings: Settings
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))

    def run(self, progress: Progress | None = None) -> ReconcileReport:
        """One pass over the collection and the mirror."""
        report = ReconcileReport()
        grace = self.settings.reliability_corrections_memory_reconcile_grace_seconds
        cutoff = self.clock().timestamp() - grace
        quarantine = self.settings.reliability_corrections_memory_quarantine_days * 86400
        with self.db.session() as s:
            rows = {r.qdrant_point_id: r for r in s.scalars(select(CorrectionMirror)).all()}
        report.rows_seen = len(rows)
        seen: set[uuid.UUID] = set()
        orphans, superseded = [], []
        offset = None
        while True:
            page, offset = self.store.scroll(CORRECTIONS_COLLECTION, limit=SCROLL_PAGE, offset=offset)
            for point in page:
                pid = point.id if isinstance(point.id, uuid.UUID) else uuid.UUID(str(point.id))
                seen.add(pid)
                row = rows.get(pid)
                if row is None:
                    created = point.payload.get("created_at") or (point.payload.get("quarantine_until", 0) - quarantine)
                    if created <= cutoff:  # an in-flight write is younger than the grace period: leave it
                        orphans.append(pid)
                    else:
                        report.orphans_too_young += 1
                elif row.status != CorrectionStatus.ACTIVE:
                    superseded.append(pid)
                else:
                    fix = drifted(point.payload, row)
                    if fix:
                        self.store.set_payload(CORRECTIONS_COLLECTION, [pid], fix)
                        report.drift_repaired += 1
            report.points_seen += len(page)
            if progress is not None:
                progress(len(page))
            if offset is None:
                break
        self.store.delete(CORRECTIONS_COLLECTION, orphans + superseded)
        report.orphans_deleted, report.superseded_deleted = len(orphans), len(superseded)
        missing = [r for pid, r in rows.items() if r.status == CorrectionStatus.ACTIVE and pid not in seen]
        missing = [r for r in missing if not (r.promoted_to_canonical and self._deleted_after_promo())]
        # a point can only be rebuilt with the model that embedded it; others wait for a re-embedding migration
        report.unrestorable = sum(r.embedding_model != self.embedder.name for r in missing)
        missing = [r for r in missing if r.embedding_model == self.embedder.name]
        for i in range(0, len(missing), 256):
            batch = missing[i : i + 256]
            vectors = self.embedder.embed([r.original for r in batch])
            self.store.upsert(
                CORRECTIONS_COLLECTION,
                [
                    VectorPoint(r.qdrant_point_id, v.tolist(), mirror_payload(r))
                    for r, v in zip(batch, vectors, strict=True)
                ],
            )
        report.restored = len(missing)
        report.orphan_collections_dropped = self.drop_orphan_collections()
        report.optimized = self.store.optimize(CORRECTIONS_COLLECTION)
        return report

    def drop_orphan_collections(self) -> int:
        """Drop the transcript collections no transcript row owns (a crash between the two, an old race).

        Under the collections lock held alone: a unit creating a collection (with its row, not yet
        committed) finishes first, so its collection is owned by the time it is looked at.
        """
        with self.db.exclusive_lock(COLLECTIONS_LOCK):
            with self.db.session() as s:
                owned = {collection_for(t, self.settings) for t in transcript_ids_in(s)}
            orphans = [c for c in self.store.list_collections() if is_transcript_collection(c) and c not in owned]
            for name in orphans:
                self.store.drop_collection(name)
        return len(orphans)

    def _deleted_after_promo(self) -> bool:
        return self.settings.reliability_corrections_memory_delete_after_promo
