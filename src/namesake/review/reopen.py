"""Decisions taken back: each suggestion as the pipeline left it, and what the decisions taught undone."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from namesake.domain import Suggestion, SuggestionStatus
from namesake.review.ports import ReviewUnit
from namesake.transcripts import StoredSuggestion

DECIDED = (SuggestionStatus.VALIDATED, SuggestionStatus.REJECTED)


@dataclass
class ReopenResult:
    """The suggestions as the undo left them, those removed (manual fixes), and what the memory took back."""

    suggestions: list[Suggestion]
    removed: list[str]
    memory: list[str]

    def as_json(self) -> dict[str, Any]:
        """The body of an undo."""
        return {"suggestions": [s.as_json() for s in self.suggestions], "removed": self.removed,
                "memory": self.memory}  # fmt: skip


def reopen_in(unit: ReviewUnit, seen: list[StoredSuggestion]) -> ReopenResult:
    """Undo the decisions on `seen` in the caller's unit: memory first (its lock order), then the rows.

    A memory write shared by a group is taken back only once no member outside this undo stands by it.
    """
    decided = [x for x in seen if x.status in DECIDED]
    leads = unit.rows.teaching(decided)
    standing = unit.rows.still_standing(leads, decided)
    memory: list[str] = []
    for lead in sorted(leads - standing, key=str):
        outcome = unit.memory.unteach(user_id=seen[0].user_id, suggestion_id=str(lead))
        if outcome is not None:
            memory.append(outcome.value)
    out: dict[uuid.UUID, Suggestion] = {x.id: x.suggestion for x in seen}
    removed: list[str] = []
    for x in decided:
        undone = unit.rows.undo(x)
        for back in undone.restored:
            out[uuid.UUID(back.id)] = back
        if undone.removed:
            removed.append(str(x.id))
            del out[x.id]
    out.update(unit.rows.settle(list(out)))
    return ReopenResult(list(out.values()), removed, memory)
