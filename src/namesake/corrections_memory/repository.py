"""Reads of the corrections mirror in PostgreSQL: the exact originals the pipeline replaces, the list a user sees."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from namesake.adapters import CorrectionMirror, Database
from namesake.core import normalise
from namesake.corrections_memory.heard import heard_forms
from namesake.domain import CorrectionStatus, MemoryScope, RememberedCorrection, ReviewAction
from namesake.reliability import is_one_off


def active_corrections(db: Database, user_id: str, *, now: datetime | None = None) -> list[RememberedCorrection]:
    """The user's corrections the pipeline may replace like a learned find-and-replace.

    The same filters as the vector read (`reader.boost`): the user's own, active, still within
    `quarantine_until`, and not promoted (a promoted value is canonical vocabulary from then on). A row's fix comes
    back over the other words it was reinforced over as well (`heard.heard_forms`).
    """
    with db.session() as s:
        return active_corrections_in(s, user_id, now=now)


def active_corrections_in(s: Session, user_id: str, *, now: datetime | None = None) -> list[RememberedCorrection]:
    """active_corrections, read in session `s`."""
    when = now or datetime.now(UTC)
    rows = s.execute(
        select(
            CorrectionMirror.original,
            CorrectionMirror.final,
            CorrectionMirror.entity_type,
            CorrectionMirror.context_phrase,
            CorrectionMirror.frequency,
            CorrectionMirror.action,
            CorrectionMirror.created_at,
            CorrectionMirror.scope,
            CorrectionMirror.transcript_id,
            CorrectionMirror.in_conflict,
            CorrectionMirror.also_heard,
        ).where(
            CorrectionMirror.user_id == user_id,
            CorrectionMirror.status == CorrectionStatus.ACTIVE,
            CorrectionMirror.quarantine_until > when,
            CorrectionMirror.promoted_to_canonical.is_(False),
        )
    ).all()
    days = [max(0.0, (when - row.created_at).total_seconds() / 86400) for row in rows]
    own = [
        RememberedCorrection(
            r.original, r.final, r.entity_type, r.context_phrase, r.frequency, ReviewAction(r.action), age,
            MemoryScope(r.scope), r.transcript_id, in_conflict(r),
        )
        for r, age in zip(rows, days, strict=True)
    ]  # fmt: skip
    held = {
        kind: frozenset(normalise(m.original) for m in own if m.entity_type == kind)
        for kind in {r.entity_type for r in rows}
    }
    return own + [
        form
        for m, r in zip(own, rows, strict=True)
        if r.also_heard
        for form in heard_forms(m, r.also_heard, held[m.entity_type])
    ]


def in_conflict(row: Any) -> bool:
    """One side of a conflict not yet chosen (a CorrectionMirror, or a row selected with its `in_conflict` and
    `frequency`): made as one and not taught again since (an undo of the teaching that chose it brings it back)."""
    return bool(row.in_conflict) and row.frequency == 1


class CorrectionState(StrEnum):
    """Where a correction stands for its user, as the API and the page say it."""

    APPLYING = "applying"  # boosts and is spotted until `quarantine_until`
    PROMOTED = "promoted"  # canonical vocabulary from then on
    EXPIRED = "expired"  # not taught again in time: applies no more, until taught again
    SUPERSEDED = "superseded"  # another final replaced it
    CONFLICT = "conflict"  # another final was taught for the same words and place: shown, applied by neither


def correction_state(row: CorrectionMirror, now: datetime) -> CorrectionState:
    """Where a correction stands for its user now."""
    if row.status != CorrectionStatus.ACTIVE:
        return CorrectionState.SUPERSEDED
    if row.promoted_to_canonical:
        return CorrectionState.PROMOTED
    if in_conflict(row) and row.quarantine_until > now:
        return CorrectionState.CONFLICT
    return CorrectionState.APPLYING if row.quarantine_until > now else CorrectionState.EXPIRED


def correction_json(
    row: CorrectionMirror,
    now: datetime | None = None,
    supersedes: int | None = None,
    other: CorrectionMirror | None = None,
) -> dict[str, Any]:
    """A correction as callers see it (ids numbered per user), with where it stands and until when it applies; for
    one side of a conflict, the other side (`other`: the row it supersedes)."""
    state = correction_state(row, now or datetime.now(UTC))
    conflict = None
    if in_conflict(row) and other is not None:
        conflict = {"final": other.final, "transcript_id": other.transcript_id,
                    "taught_at": other.updated_at.isoformat()}  # fmt: skip
    return {
        "id": row.user_seq,
        "entity_type": row.entity_type,
        "original": row.original,
        "also_heard": list(dict.fromkeys(str(e.get("original", "")) for e in row.also_heard or [])),
        "final": row.final,
        "action": row.action,
        "context_phrase": row.context_phrase,
        "frequency": row.frequency,
        "status": row.status,
        "promoted_to_canonical": row.promoted_to_canonical,
        "quarantine_until": row.quarantine_until.isoformat(),
        "state": state,
        "applies_until": row.quarantine_until.isoformat() if state == CorrectionState.APPLYING else None,
        "one_off": is_one_off(row.final, row.original),
        "supersedes_id": supersedes,
        "conflict_with": conflict,
        "transcript_id": row.transcript_id,
        "scope": row.scope,
        "created_at": row.created_at.isoformat(),
        "updated_at": row.updated_at.isoformat(),
    }


def list_corrections(
    db: Database,
    user_id: str,
    *,
    include_superseded: bool = False,
    limit: int | None = None,
    before: int | None = None,
    now: datetime | None = None,
) -> list[dict[str, Any]]:
    """The user's corrections, newest first (active only unless asked); a page of `limit` below id `before`."""
    query = select(CorrectionMirror).where(CorrectionMirror.user_id == user_id)
    if not include_superseded:
        query = query.where(CorrectionMirror.status == CorrectionStatus.ACTIVE)
    if before is not None:
        query = query.where(CorrectionMirror.user_seq < before)  # keyset: a page never shifts under new writes
    with db.session() as s:
        rows = s.scalars(query.order_by(CorrectionMirror.user_seq.desc().nulls_last()).limit(limit)).all()
        replaced = {r.supersedes_id for r in rows if r.supersedes_id is not None}
        older = {r.id: r for r in s.scalars(select(CorrectionMirror).where(CorrectionMirror.id.in_(replaced)))}
        return [
            correction_json(
                r, now, getattr(older.get(r.supersedes_id or 0), "user_seq", None), older.get(r.supersedes_id or 0)
            )
            for r in rows
        ]
