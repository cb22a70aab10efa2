"""Forget one correction: its rows (the whole history of that original) and their points, or nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, func, select

from namesake.adapters import CorrectionMirror, Database, VectorStore
from namesake.core import CORRECTIONS_COLLECTION, NotFoundError
from namesake.users import claim_user


@dataclass(frozen=True)
class ForgetReceipt:
    """What was forgotten and what remains of it (zero on success), like erasure's receipt."""

    user_id: str
    correction_id: int
    original: str
    final: str
    deleted: dict[str, int]
    remaining: dict[str, int]

    def as_json(self) -> dict[str, Any]:
        """The body of DELETE /v1/users/{user_id}/corrections/{correction_id}."""
        return {
            "user_id": self.user_id,
            "correction_id": self.correction_id,
            "original": self.original,
            "final": self.final,
            "deleted": self.deleted,
            "remaining": self.remaining,
        }


def forget_correction(
    db: Database, store: VectorStore, user_id: str, correction_id: int, grace_seconds: int
) -> ForgetReceipt:
    """Delete the correction and the rows it superseded (same user, type and original) with their points.

    The rows go in one transaction that commits only after the points are deleted: a vector store that
    fails leaves both stores as they were. Another user's correction is a 404 like a missing one.
    """
    with db.session() as s:
        claim_user(s, user_id, grace_seconds, register=False)  # serialised with the user's erasure
        row = s.scalar(
            select(CorrectionMirror)
            .where(CorrectionMirror.user_seq == correction_id, CorrectionMirror.user_id == user_id)
            .with_for_update()
        )
        if row is None:
            raise NotFoundError(f"correction {correction_id} not found for user {user_id}", field="correction_id")
        same = (
            (CorrectionMirror.user_id == user_id)
            & (CorrectionMirror.entity_type == row.entity_type)
            & (CorrectionMirror.original_norm == row.original_norm)
        )
        history = s.execute(select(CorrectionMirror.id, CorrectionMirror.qdrant_point_id).where(same)).all()
        original, final = row.original, row.final
        s.execute(delete(CorrectionMirror).where(CorrectionMirror.id.in_([i for i, _ in history])))
        s.flush()
        points = [p for _, p in history]
        store.delete(CORRECTIONS_COLLECTION, points)  # raises before the commit: the rows stay
    with db.session() as s:
        rows_left = int(s.scalar(select(func.count()).where(same)) or 0)
    points_left = len(store.retrieve(CORRECTIONS_COLLECTION, points))
    return ForgetReceipt(
        user_id,
        correction_id,
        original,
        final,
        {"rows": len(history), "qdrant_points": len(points)},
        {"rows": rows_left, "qdrant_points": points_left},
    )
