"""Decisions taken together and taken back: groups of one pair, and undo of what a decision wrote."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from namesake.adapters.models import SuggestionRow
from namesake.core.errors import ConflictError, InvalidInputError
from namesake.corrections_memory.unteach import UnteachOutcome, unteach_in
from namesake.corrections_memory.writer import CorrectionMemoryWriter, MemoryUnit
from namesake.reliability.types import CandidateSource, Suggestion, SuggestionStatus
from namesake.transcripts.store import suggestion_of
from namesake.transcripts.suggestions import StoredSuggestion

# One request decides at most this many occurrences (a 9,000-word call repeats a pair a few dozen times).
MAX_GROUP = 500
DECIDED = (SuggestionStatus.VALIDATED, SuggestionStatus.REJECTED)


@dataclass
class GroupResult:
    """The suggestions after a group decision, and what the one memory write did (None: none made)."""

    suggestions: list[Suggestion]
    memory: str | None

    def as_json(self) -> dict[str, Any]:
        """The body of POST /v1/transcripts/{id}/decisions."""
        return {"suggestions": [s.as_json() for s in self.suggestions], "memory": self.memory}


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


def check_group(suggestion_ids: list[str]) -> list[str]:
    """The ids once each, in the order given; InvalidInputError for none or too many."""
    unique = list(dict.fromkeys(suggestion_ids))
    if not unique:
        raise InvalidInputError("suggestion_ids must name at least one suggestion", field="suggestion_ids")
    if len(unique) > MAX_GROUP:
        raise InvalidInputError(
            f"suggestion_ids names {len(unique)} suggestions, the limit is {MAX_GROUP}", field="suggestion_ids"
        )
    return unique


def pair_of(original: str, final: str) -> tuple[str, str]:
    """What makes occurrences one group: the same words heard (any case) and the same final."""
    return (" ".join(original.split()).casefold(), final)


def reopen_in(writer: CorrectionMemoryWriter, work: MemoryUnit, seen: list[StoredSuggestion]) -> ReopenResult:
    """Undo the decisions on `seen` in the caller's unit: memory first (its lock order), then the rows."""
    session = work.session
    decided = [x for x in seen if x.status in DECIDED]
    rows = {x.id: session.get(SuggestionRow, x.id) for x in decided}
    leads = {row.taught_with or row.id for row in rows.values()
             if row is not None and row.status == SuggestionStatus.VALIDATED}  # fmt: skip
    # a write shared by a group stays while a member outside this undo still stands by it
    standing = set(
        session.scalars(
            select(SuggestionRow.taught_with).where(
                SuggestionRow.taught_with.in_(leads),
                SuggestionRow.status == SuggestionStatus.VALIDATED,
                SuggestionRow.id.not_in(list(rows)),
            )
        )
    )
    memory: list[str] = []
    user_id = seen[0].user_id
    for lead in sorted(leads - standing, key=str):
        outcome: UnteachOutcome | None = unteach_in(writer, work, user_id=user_id, suggestion_id=str(lead))
        if outcome is not None:
            memory.append(outcome.value)
    out: dict[uuid.UUID, Suggestion] = {x.id: x.suggestion for x in seen}
    removed: list[str] = []
    for x in decided:
        row = session.get(SuggestionRow, x.id, with_for_update=True, populate_existing=True)
        if row is None or row.status != x.status:
            raise ConflictError(f"suggestion {x.id} changed while it was being undone: try again", field="status")
        if (
            row.source == CandidateSource.MANUAL
        ):  # a fix by hand has no proposal to go back to; what it replaced comes back
            displaced = session.scalars(
                select(SuggestionRow).where(
                    SuggestionRow.taught_with == row.id, SuggestionRow.status == SuggestionStatus.REJECTED
                )
            ).all()
            for other in displaced:
                put_back(other)
                out[other.id] = suggestion_of(other)
            session.delete(row)
            removed.append(str(x.id))
            del out[x.id]
            continue
        put_back(row)
    try:
        session.flush()
    except IntegrityError as exc:
        raise ConflictError("another suggestion of this span already has the proposed final", field="final") from exc
    for key in list(out):
        reread = session.get(SuggestionRow, key)
        if reread is not None:
            out[key] = suggestion_of(reread)
    return ReopenResult(list(out.values()), removed, memory)


def put_back(row: SuggestionRow) -> None:
    """The row as the pipeline left it, before the decision (a row decided before undo existed: pending)."""
    row.status = row.previous_status or SuggestionStatus.PENDING
    row.final = row.proposed_final or row.final
    row.entity_type = row.proposed_entity_type or row.entity_type
    row.previous_status = row.proposed_final = row.proposed_entity_type = row.taught_with = row.decided_at = None
