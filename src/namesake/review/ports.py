"""What the review service needs from the stores, as protocols: the suggestion rows, the decision log and the
memory, in one unit.

The service decides; a unit of work (`unit_of_work.SqlReviewUnitOfWork` over PostgreSQL and the corrections
memory, or a fake in the tests) holds one transaction in which the rows and the memory write commit together.
The transcripts store's `SuggestionRows` and `DecisionLog` are the rows and the log themselves.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol

from namesake.corrections_memory import CorrectionInput, UnteachOutcome
from namesake.domain import Suggestion, SuggestionStatus
from namesake.transcripts import ManualFix, PairReach, StoredSuggestion, Undone


class ReviewRows(Protocol):
    """The suggestion rows a decision reads and writes, inside the unit's transaction."""

    def load(self, suggestion_ids: list[str], transcript_id: str) -> list[StoredSuggestion]:
        """The suggestions in the order asked (NotFoundError for one of another transcript)."""
        ...

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
        """The decision written, keeping what it replaces for undo; `on_race` judges a decision taken meanwhile."""
        ...

    def save_manual(self, fix: ManualFix, *, taught_with: uuid.UUID | None = None, shares: bool = False) -> Suggestion:
        """A fix by hand as a validated suggestion of its span, displacing the open ones it touches; `shares`: one of
        several places that share one memory write (`taught_with`, or its own id for the first)."""
        ...

    def teaching(self, decided: list[StoredSuggestion]) -> set[uuid.UUID]:
        """The suggestions whose memory write the accepted ones among `decided` share."""
        ...

    def still_standing(self, leads: set[uuid.UUID], leaving: list[StoredSuggestion]) -> set[uuid.UUID]:
        """The leads some accepted suggestion outside `leaving` still stands by."""
        ...

    def undo(self, seen: StoredSuggestion) -> Undone:
        """The suggestion as the pipeline left it (ConflictError if it changed meanwhile)."""
        ...

    def settle(self, suggestion_ids: list[uuid.UUID]) -> dict[uuid.UUID, Suggestion]:
        """Write what the unit changed and read those suggestions back (ConflictError on a clash of finals)."""
        ...


class ReviewLog(Protocol):
    """The decisions as taken, and what a decision reads of its transcript, inside the unit's transaction."""

    def language_of(self, transcript_id: str) -> str:
        """The transcript's language ("en" when unknown): what makes heard words everyday."""
        ...

    def segment_texts(self, transcript_id: str) -> dict[str, str]:
        """The transcript's segments as analysed, by id."""
        ...

    def reach(self, transcript_id: str, pairs: list[tuple[str, str]]) -> tuple[list[PairReach], int]:
        """Each pair's open places here and in the owner's other calls, and the other calls they touch together."""
        ...

    def log_decision(
        self, transcript_id: str, *, action: str, label: str, suggestion_ids: list[str], scope: str | None
    ) -> None:
        """The decision as taken, for the history and for undo after a reload."""
        ...

    def log_undone(self, transcript_id: str, suggestion_ids: list[str]) -> None:
        """The decisions naming these suggestions, marked taken back."""
        ...

    def history(self, transcript_id: str) -> list[dict[str, Any]]:
        """The transcript's decisions, newest first (NotFoundError for an unknown transcript)."""
        ...


class ReviewMemory(Protocol):
    """The corrections memory inside the unit's transaction."""

    def lock(self, prepared: CorrectionInput) -> None:
        """Claim the user and hold the correction's lock."""
        ...

    def record(self, prepared: CorrectionInput, *, source_suggestion_id: str | None = None) -> str:
        """Record the correction; what the write did (new, reinforced, superseded, replay)."""
        ...

    def unteach(self, *, user_id: str, suggestion_id: str) -> UnteachOutcome | None:
        """Take back what the decision on `suggestion_id` taught; None when nothing of it is left."""
        ...


class ReviewUnit(Protocol):
    """One transaction: the rows and the memory commit together, or nothing does."""

    @property
    def rows(self) -> ReviewRows:
        """The suggestion rows, in the unit's transaction."""
        ...

    @property
    def log(self) -> ReviewLog:
        """The decision log, in the unit's transaction."""
        ...

    @property
    def memory(self) -> ReviewMemory:
        """The corrections memory, in the unit's transaction."""
        ...


class ReviewUnitOfWork(Protocol):
    """Opens review units, and prepares a correction (checked and embedded) before one opens."""

    max_final_chars: int

    def prepare(self, correction: CorrectionInput) -> CorrectionInput:
        """The correction checked and embedded, outside any transaction."""
        ...

    def begin(self) -> AbstractContextManager[ReviewUnit]:
        """A unit that commits when the block ends, and on an error changes nothing in either store."""
        ...
