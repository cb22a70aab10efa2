"""What a user sees of their memory and may take back: corrections, refusals, and what they taught as an ASR
vocabulary; the routes and the commands call it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from namesake.corrections_memory.forget import ForgetReceipt
from namesake.corrections_memory.ports import MemoryRecords
from namesake.corrections_memory.refusals import Refusal
from namesake.users import build_terms, export


@dataclass
class CorrectionsMemoryService:
    """A user's corrections memory as they read and change it, over its records (`ports.MemoryRecords`)."""

    records: MemoryRecords

    def corrections(
        self, user_id: str, *, include_superseded: bool = False, limit: int | None = None, before: int | None = None
    ) -> list[dict[str, Any]]:
        """The user's corrections as mirrored in PostgreSQL, newest first (a page below id `before`)."""
        return self.records.corrections(user_id, include_superseded=include_superseded, limit=limit, before=before)

    def forget_correction(self, user_id: str, correction_id: int) -> ForgetReceipt:
        """Forget one correction (and the history of that original) in both stores."""
        return self.records.forget(user_id, correction_id)

    def refusals(self, user_id: str) -> list[Refusal]:
        """The pairs the user rejected that still stand (never proposed to them again), last refused first."""
        return self.records.refusals(user_id)

    def forget_refusal(self, user_id: str, original: str, final: str) -> Refusal:
        """Take a refusal back: the pair may be proposed to the user again."""
        return self.records.forget_refusal(user_id, original, final)

    def vocabulary(self, user_id: str, fmt: str, transcript_id: str | None = None) -> dict[str, Any]:
        """What the user taught and their promoted values (with a transcript, its canonical list too) in an ASR
        engine's request shape: the list is read only when a transcript is named."""
        canonical = self.records.canonical(transcript_id, user_id) if transcript_id is not None else None
        return export(build_terms(self.records.taught(user_id), self.records.promoted(user_id), canonical), fmt,
                      user_id)  # fmt: skip
