"""The consolidation decision for one incoming correction: replay, reinforce, supersede, conflict or new (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class WriteOutcome(StrEnum):
    """What a write did to the memory."""

    REPLAY = "replay"
    REINFORCED = "reinforced"
    SUPERSEDED = "superseded"
    CONFLICT = "conflict"
    NEW = "new"


@dataclass(frozen=True)
class Existing:
    """An active correction as the decision needs it."""

    row_id: int
    final_norm: str
    source_suggestion_ids: tuple[str, ...]
    same_scope: bool = True  # taught for the same place as the incoming one (scope, and transcript for `transcript`)
    in_conflict: bool = False  # it is itself one side of a conflict
    other_final_norm: str | None = None  # the final of the row it supersedes (the conflict's other side)


@dataclass(frozen=True)
class SemanticHit:
    """Top-1 of the semantic query over the user's corrections of that type."""

    row_id: int | None
    score: float
    final_norm: str


@dataclass(frozen=True)
class Consolidation:
    """The outcome and the row it applies to (None for NEW)."""

    outcome: WriteOutcome
    target_row_id: int | None = None


def consolidate(
    *,
    suggestion_id: str | None,
    final_norm: str,
    same_original: Existing | None,
    semantic: SemanticHit | None,
    dedupe_threshold: float,
) -> Consolidation:
    """Replay beats everything; the same original decides next; a semantic twin reinforces only with the same final.

    Another final for the same words, taught for the same place, is a conflict: both kept, neither applied by itself,
    until the user teaches one of them again (the same final reinforces and settles it; the other side's final
    supersedes and settles it). Taught for another place (scope), the newer lesson supersedes the older.
    """
    if same_original is not None:
        s = same_original
        if suggestion_id is not None and suggestion_id in s.source_suggestion_ids:
            return Consolidation(WriteOutcome.REPLAY, s.row_id)
        if s.final_norm == final_norm:
            return Consolidation(WriteOutcome.REINFORCED, s.row_id)
        settles = s.in_conflict and s.other_final_norm == final_norm
        if settles or not s.same_scope:
            return Consolidation(WriteOutcome.SUPERSEDED, s.row_id)
        return Consolidation(WriteOutcome.CONFLICT, s.row_id)
    if (
        semantic is not None
        and semantic.row_id is not None
        and semantic.score >= dedupe_threshold
        and semantic.final_norm == final_norm  # never merge a changed value ("3 vélos" vs "4 vélos")
    ):
        return Consolidation(WriteOutcome.REINFORCED, semantic.row_id)
    return Consolidation(WriteOutcome.NEW)
