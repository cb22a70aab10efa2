"""Suggestion rows as a reviewer changes them: a decision, a fix by hand (the memory writes travel with them)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

from pydantic import ConfigDict, Field, Strict, StringConstraints
from pydantic.dataclasses import dataclass as pydantic_dataclass
from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from namesake.adapters import SuggestionRow, Transcript
from namesake.core import ConflictError, InvalidInputError, NotFoundError
from namesake.domain import (
    MAX_OFFSET,
    CandidateSource,
    EntityType,
    Identifier,
    MemoryScope,
    Offset,
    Suggestion,
    SuggestionStatus,
)
from namesake.transcripts.store import ensure_transcript, suggestion_of
from namesake.users import check_transcript_not_erased


@dataclass(frozen=True)
class StoredSuggestion:
    """A suggestion read for a review decision: what it says now, and the user its transcript belongs to."""

    id: uuid.UUID
    user_id: str
    transcript_id: str
    original: str
    final: str
    entity_type: str
    status: SuggestionStatus
    context_phrase: str
    suggestion: Suggestion


def stored_of(row: SuggestionRow, user_id: str, transcript_id: str) -> StoredSuggestion:
    """A suggestion row as a review decision reads it."""
    return StoredSuggestion(
        row.id, user_id, transcript_id, row.original, row.final, row.entity_type, SuggestionStatus(row.status),
        row.context_phrase, suggestion_of(row),
    )  # fmt: skip


# One fix by hand applies to at most this many other places at once (the page lists each before it is sent).
MAX_MATCHES = 500


@pydantic_dataclass(frozen=True, config=ConfigDict(extra="forbid"))
class Span:
    """Another place of the transcript the fix applies to: a segment and its code-point offsets."""

    segment_id: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    start_char: Offset
    end_char: Annotated[int, Strict(), Field(gt=0, le=MAX_OFFSET)]


@pydantic_dataclass(frozen=True, config=ConfigDict(extra="forbid"))
class ManualFix:
    """A span the reviewer corrected although nothing was suggested; saved as a validated suggestion of its own.

    One type from the request body (POST /v1/corrections) to the row: checked once, where it is made.
    """

    user_id: Identifier
    transcript_id: Identifier
    segment_id: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    start_char: Offset
    end_char: Annotated[int, Strict(), Field(gt=0, le=MAX_OFFSET, description="after start_char (exclusive end)")]
    original: Annotated[str, StringConstraints(min_length=1)]
    final: Annotated[str, StringConstraints(min_length=1)]
    entity_type: EntityType = "KEYWORD"
    segment_text: str | None = None
    scope: MemoryScope | None = Field(
        default=None,
        description="where it applies next (transcript, list, user); by default list when the words "
        "heard are everyday words, else user",
    )
    also: list[Span] = Field(
        default_factory=list, max_length=MAX_MATCHES,
        description="other places of the transcript where the same words were heard: fixed in the same decision, "
        "undone together",
    )  # fmt: skip

    def __post_init__(self) -> None:
        """Checked once, where it is made: a span inside its segment, holding the original it names."""
        if self.segment_text is not None:
            if not 0 <= self.start_char < self.end_char <= len(self.segment_text):
                raise InvalidInputError("start_char/end_char are outside segment_text", field="end_char")
            if self.segment_text[self.start_char : self.end_char] != self.original:
                raise InvalidInputError("original does not match segment_text at the span", field="original")
        elif self.end_char <= self.start_char:
            raise InvalidInputError("end_char must be after start_char", field="end_char")


@dataclass(frozen=True)
class Undone:
    """One decided suggestion taken back: removed (a fix by hand), and the suggestions that came back with it."""

    removed: bool
    restored: list[Suggestion]


@dataclass
class SuggestionRows:
    """The suggestion rows a review decision reads and writes, in the session of its unit of work.

    The review service's `ReviewRows` port, over PostgreSQL; the memory write that goes with a decision shares
    the session, so both commit together.
    """

    session: Session
    grace_seconds: int

    def load(self, suggestion_ids: list[str], transcript_id: str) -> list[StoredSuggestion]:
        """Suggestions of one transcript in the order asked; another transcript's is as invisible as a missing one,
        and a transcript erased with its user is gone (410), not missing."""
        wanted: list[uuid.UUID] = []
        for suggestion_id in suggestion_ids:
            try:
                wanted.append(uuid.UUID(suggestion_id))
            except ValueError as exc:
                raise NotFoundError(f"suggestion {suggestion_id!r} not found", field="suggestion_id") from exc
        rows = self.session.execute(
            select(SuggestionRow, Transcript.user_id)
            .join(Transcript, Transcript.id == SuggestionRow.transcript_id)
            .where(SuggestionRow.id.in_(wanted), SuggestionRow.transcript_id == transcript_id)
        ).all()
        found = {row.id: (row, user_id) for row, user_id in rows}
        missing = next((str(i) for i in wanted if i not in found), None)
        if missing is not None:
            check_transcript_not_erased(self.session, transcript_id, self.grace_seconds)
            raise NotFoundError(
                f"suggestion {missing!r} not found in transcript {transcript_id!r}", field="suggestion_id"
            )
        return [stored_of(*found[i], transcript_id) for i in wanted]

    def decide(
        self,
        seen: StoredSuggestion,
        *,
        status: SuggestionStatus,
        final: str,
        on_race: Callable[[SuggestionStatus, str], None],
        taught_with: uuid.UUID | None = None,
        entity_type: str | None = None,
    ) -> Suggestion:
        """The decision written under a row lock; `on_race` judges a decision taken meanwhile.

        What it replaces is kept (status, and the final when an edit changes it) so that undo can put it back.
        """
        s = self.session
        row = s.get(SuggestionRow, seen.id, with_for_update=True)
        if row is None:
            raise NotFoundError(f"suggestion {seen.id} not found in transcript {seen.transcript_id!r}")
        if row.status != seen.status:  # decided meanwhile by another request
            on_race(SuggestionStatus(row.status), row.final)
            return suggestion_of(row)
        row.previous_status, row.proposed_final, row.taught_with = row.status, row.final, taught_with
        row.proposed_entity_type = row.entity_type
        row.status, row.final, row.decided_at = status, final, func.now()
        row.entity_type = entity_type or row.entity_type
        try:
            s.flush()
        except IntegrityError as exc:
            raise ConflictError("another suggestion of this span already has that final", field="final") from exc
        s.refresh(row)
        return suggestion_of(row)

    def save_manual(self, fix: ManualFix, *, taught_with: uuid.UUID | None = None, shares: bool = False) -> Suggestion:
        """A fix by hand as a validated suggestion of its span (its transcript registered), displacing the open
        ones it touches; `shares`: one of several places that share one memory write (`taught_with`, or its own
        id for the first).

        A repeat (a retry, or the same fix sent twice at once) finds the same row: its id is what makes the
        memory write that goes with it a replay rather than a second count.
        """
        s = self.session
        ensure_transcript(s, fix.transcript_id, fix.user_id, None, self.grace_seconds)
        new = insert(SuggestionRow).values(
            id=uuid.uuid4(), transcript_id=fix.transcript_id, segment_id=fix.segment_id,
            start_char=fix.start_char, end_char=fix.end_char, original=fix.original, final=fix.final,
            entity_type=fix.entity_type, confidence=1.0, signals={"manual": 1.0}, status=SuggestionStatus.VALIDATED,
            source=CandidateSource.MANUAL, decided_at=func.now(),
        ).on_conflict_do_nothing(constraint="uq_suggestions_span")  # fmt: skip
        created = s.execute(new.returning(SuggestionRow.id)).scalar() is not None
        row = s.scalars(
            select(SuggestionRow)
            .where(
                SuggestionRow.transcript_id == fix.transcript_id,
                SuggestionRow.segment_id == fix.segment_id,
                SuggestionRow.start_char == fix.start_char,
                SuggestionRow.end_char == fix.end_char,
                SuggestionRow.final == fix.final,
            )
            .with_for_update()
        ).one()
        if not created:
            row.status, row.decided_at = SuggestionStatus.VALIDATED, func.now()
        if shares:  # one of several places of one fix: undone together, the memory write taken back with the last
            row.taught_with = taught_with or row.id
        self._displace(fix, row.id)
        s.flush()
        s.refresh(row)
        return suggestion_of(row)

    def _displace(self, fix: ManualFix, fix_id: uuid.UUID) -> None:
        """A fix by hand replaces the open suggestions its span holds or touches (undoing the fix brings them back).

        One the reviewer accepted is theirs: 409 asks them to undo it first rather than overwrite it silently.
        """
        touching = self.session.scalars(
            select(SuggestionRow)
            .where(
                SuggestionRow.transcript_id == fix.transcript_id,
                SuggestionRow.segment_id == fix.segment_id,
                SuggestionRow.start_char < fix.end_char,
                SuggestionRow.end_char > fix.start_char,
                SuggestionRow.id != fix_id,
            )
            .with_for_update()
        ).all()
        for row in touching:
            if row.status == SuggestionStatus.VALIDATED:
                raise ConflictError(
                    f"the words hold the accepted “{row.original} → {row.final}”: undo it first", field="start_char"
                )
            if row.status in SuggestionStatus.undecided():
                row.previous_status, row.proposed_final, row.taught_with = row.status, row.final, fix_id
                row.status, row.decided_at = SuggestionStatus.REJECTED, func.now()

    def teaching(self, decided: list[StoredSuggestion]) -> set[uuid.UUID]:
        """The suggestions whose memory write the accepted ones among `decided` share (a group's lead, or their
        own)."""
        rows = [self.session.get(SuggestionRow, x.id) for x in decided]
        return {
            row.taught_with or row.id for row in rows if row is not None and row.status == SuggestionStatus.VALIDATED
        }

    def still_standing(self, leads: set[uuid.UUID], leaving: list[StoredSuggestion]) -> set[uuid.UUID]:
        """The leads an accepted suggestion outside `leaving` still stands by."""
        return set(
            self.session.scalars(
                select(SuggestionRow.taught_with).where(
                    SuggestionRow.taught_with.in_(leads),
                    SuggestionRow.status == SuggestionStatus.VALIDATED,
                    SuggestionRow.id.not_in([x.id for x in leaving]),
                )
            )
        )

    def undo(self, seen: StoredSuggestion) -> Undone:
        """The decided suggestion as the pipeline left it (ConflictError if it changed meanwhile).

        A fix by hand has no proposal to go back to: it is removed, and what it displaced comes back.
        """
        s = self.session
        row = s.get(SuggestionRow, seen.id, with_for_update=True, populate_existing=True)
        if row is None or row.status != seen.status:
            raise ConflictError(f"suggestion {seen.id} changed while it was being undone: try again", field="status")
        if row.source != CandidateSource.MANUAL:
            put_back(row)
            return Undone(False, [])
        displaced = s.scalars(
            select(SuggestionRow).where(
                SuggestionRow.taught_with == row.id, SuggestionRow.status == SuggestionStatus.REJECTED
            )
        ).all()
        restored = []
        for other in displaced:
            put_back(other)
            restored.append(suggestion_of(other))
        s.delete(row)
        return Undone(True, restored)

    def settle(self, suggestion_ids: list[uuid.UUID]) -> dict[uuid.UUID, Suggestion]:
        """Flush what the unit changed and read those suggestions back; a clash of finals on a span is a conflict."""
        try:
            self.session.flush()
        except IntegrityError as exc:
            raise ConflictError(
                "another suggestion of this span already has the proposed final", field="final"
            ) from exc
        rows = (self.session.get(SuggestionRow, key) for key in suggestion_ids)
        return {row.id: suggestion_of(row) for row in rows if row is not None}


def put_back(row: SuggestionRow) -> None:
    """The row as the pipeline left it, before the decision (a row decided before undo existed: pending)."""
    row.status = row.previous_status or SuggestionStatus.PENDING
    row.final = row.proposed_final or row.final
    row.entity_type = row.proposed_entity_type or row.entity_type
    row.previous_status = row.proposed_final = row.proposed_entity_type = row.taught_with = row.decided_at = None
