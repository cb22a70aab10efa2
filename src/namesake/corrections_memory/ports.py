"""What the corrections memory service needs from the stores, as a protocol: a user's corrections, refusals and
promoted vocabulary, read and taken back.

`corrections_memory/records.py: SqlMemoryRecords` is the adapter over PostgreSQL and the vector store;
`tests/fakes/memory.py` is the in-memory one the service's unit tests use.
"""

from __future__ import annotations

from typing import Any, Protocol

from namesake.corrections_memory.forget import ForgetReceipt
from namesake.corrections_memory.refusals import Refusal

Taught = tuple[str, str, str, int]  # (original, final, entity type, times taught): an active correction


class MemoryRecords(Protocol):
    """A user's memory as stored: the mirror's rows, the refusals, the promoted values and a transcript's list."""

    def corrections(
        self, user_id: str, *, include_superseded: bool, limit: int | None, before: int | None
    ) -> list[dict[str, Any]]:
        """The user's corrections, newest first (a page below id `before`)."""
        ...

    def forget(self, user_id: str, correction_id: int) -> ForgetReceipt:
        """The correction and the history of its original gone from both stores (NotFoundError if not theirs)."""
        ...

    def refusals(self, user_id: str) -> list[Refusal]:
        """The refusals that stand, last refused first."""
        ...

    def forget_refusal(self, user_id: str, original: str, final: str) -> Refusal:
        """A standing refusal taken back (NotFoundError when none stands)."""
        ...

    def taught(self, user_id: str) -> list[Taught]:
        """The user's active corrections."""
        ...

    def promoted(self, user_id: str) -> dict[str, list[str]]:
        """The user's and everyone's promoted values by list, within the limits an analysis reads."""
        ...

    def canonical(self, transcript_id: str, user_id: str) -> dict[str, list[str]]:
        """The transcript's canonical lists as its analysis reads them (the promoted values merged in)."""
        ...
