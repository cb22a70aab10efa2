"""A user's refusals: the pairs they rejected, never proposed to them again — listed, and taken back.

A refusal is not stored apart: it is the user's rejected suggestions, keyed as the pipeline matches them
(refusal_policy.refusal_key). Forgetting one records when; rejections decided before that no longer count,
and rejecting the pair again refuses it again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from namesake.adapters import Database, ForgottenRefusal
from namesake.core import NotFoundError
from namesake.reliability import best_read, refusal_key
from namesake.transcripts import rejected_pairs_in

Key = tuple[str, str]


@dataclass(frozen=True)
class Refusal:
    """A refused pair as the reviewer reads it: the last words heard and final, how many decisions, when."""

    original: str
    final: str
    times: int
    last_refused_at: datetime

    def as_json(self) -> dict[str, Any]:
        """One row of GET /v1/users/{user_id}/refusals."""
        return {"original": self.original, "final": self.final, "times": self.times,
                "last_refused_at": self.last_refused_at.isoformat()}  # fmt: skip


Rejection = tuple[str, str, datetime, str, float | None]  # original, final, decided at, the words around, lm_gain
EPOCH = datetime.fromtimestamp(0, UTC)  # a rejection older than decision times: before any forgetting


def standing(
    rejected: Iterable[tuple[str, str, datetime | None, str, float | None]], forgotten: dict[Key, datetime]
) -> dict[Key, list[Rejection]]:
    """The rejections that still count, by refusal key: those decided after the pair was last forgotten."""
    out: dict[Key, list[Rejection]] = {}
    for original, final, decided_at, context, gain in rejected:
        key = refusal_key(original, final)
        at = decided_at or EPOCH
        since = forgotten.get(key)
        if since is None or at > since:
            out.setdefault(key, []).append((original, final, at, context, gain))
    return out


@dataclass(frozen=True)
class StandingRefusals:
    """What the pipeline reads of a user's refusals: how many decisions refused each pair, the words around each
    refusal by refused final, and the likeliest the language model read a pair's final where it was refused (only
    where every rejection of it was read)."""

    times: dict[Key, int]
    around: dict[str, list[str]]
    read: dict[Key, float]


def _read(s: Session, user_id: str) -> dict[Key, list[Rejection]]:
    forgotten = {
        (f.original_norm, f.final_key): f.forgotten_at
        for f in s.scalars(select(ForgottenRefusal).where(ForgottenRefusal.user_id == user_id))
    }
    return standing(rejected_pairs_in(s, user_id), forgotten)


def refused_pairs_in(s: Session, user_id: str) -> StandingRefusals:
    """The user's refused pairs (refusal_policy.refusal_key), read in session `s` at once: what the pipeline skips, or
    weighs against the same fix the user made, where a refused pair stays refused whatever its sentence reads
    (recall.refused_alike), and how the sentences it was refused in read it (refusal_policy.refusal_stands)."""
    times: dict[Key, int] = {}
    around: dict[str, list[str]] = {}
    read: dict[Key, float] = {}
    for key, rows in _read(s, user_id).items():
        times[key] = _times(rows)
        around.setdefault(key[1], []).extend(r[3] for r in rows if r[3])
        best = best_read(r[4] for r in rows)
        if best is not None:
            read[key] = best
    return StandingRefusals(times, around, read)


def _times(rows: list[Rejection]) -> int:
    """How many decisions refused a pair: a group decision's rows share one time and count once."""
    return len({r[2] for r in rows})


def _refusal(rows: list[Rejection]) -> Refusal:
    """The pair as last refused, and how many decisions refused it."""
    original, final, at, *_ = max(rows, key=lambda r: r[2])
    return Refusal(original, final, _times(rows), at)


def list_refusals(db: Database, user_id: str) -> list[Refusal]:
    """The user's standing refusals, last refused first."""
    with db.session() as s:
        by_key = _read(s, user_id)
    return sorted((_refusal(rows) for rows in by_key.values()), key=lambda r: r.last_refused_at, reverse=True)


def forget_refusal(db: Database, user_id: str, original: str, final: str) -> Refusal:
    """Take a refusal back: the pair may be proposed to the user again. NotFoundError if none stands."""
    key = refusal_key(original, final)
    with db.session() as s:
        rows = _read(s, user_id).get(key)
        if not rows:
            raise NotFoundError(f"no refusal of {original!r} → {final!r} stands for this user", field="original")
        s.execute(
            insert(ForgottenRefusal)
            .values(user_id=user_id, original_norm=key[0], final_key=key[1])
            .on_conflict_do_update(constraint="pk_forgotten_refusals", set_={"forgotten_at": func.now()})
        )
    return _refusal(rows)
