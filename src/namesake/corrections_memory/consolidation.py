"""The consolidation decision for one incoming correction: replay, reinforce, supersede or new (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class WriteOutcome(StrEnum):
    """What a write did to the memory."""

    REPLAY = "replay"
    REINFORCED = "reinforced"
    SUPERSEDED = "superseded"
    NEW = "new"


@dataclass(frozen=True)
class Existing:
    """An active correction as the decision needs it."""

    row_id: int
    final_norm: str
    source_suggestion_ids: tuple[str, ...]


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
    """Replay beats everything; the same original decides next; a semantic twin reinforces only with the same final."""
    if same_original is not None:
        if suggestion_id is not None and suggestion_id in same_original.source_suggestion_ids:
            return Consolidation(WriteOutcome.REPLAY, same_original.row_id)
        if same_original.final_norm == final_norm:
            return Consolidation(WriteOutcome.REINFORCED, same_original.row_id)
        return Consolidation(WriteOutcome.SUPERSEDED, same_original.row_id)
    if (
        semantic is not None
        and semantic.row_id is not None
        and semantic.score >= dedupe_threshold
        and semantic.final_norm == final_norm  # never merge a changed value ("3 vélos" vs "4 vélos")
    ):
        return Consolidation(WriteOutcome.REINFORCED, semantic.row_id)
    return Consolidation(WriteOutcome.NEW)
