"""The memory service's records over PostgreSQL and the vector store: `ports.MemoryRecords` for real."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from namesake.adapters import Database, VectorStore
from namesake.corrections_memory.forget import ForgetReceipt, forget_correction
from namesake.corrections_memory.ports import Taught
from namesake.corrections_memory.promotion import promoted_vocabulary
from namesake.corrections_memory.refusals import Refusal, forget_refusal, list_refusals
from namesake.corrections_memory.repository import active_corrections, list_corrections
from namesake.transcripts import CanonicalListReader


@dataclass
class SqlMemoryRecords:
    """A user's memory in the mirror, the refusal tables, the promoted vocabulary and the transcripts' lists."""

    db: Database
    vectors: VectorStore
    lists: CanonicalListReader
    grace_seconds: int  # how long an erased or forgotten user's writes are refused

    def corrections(
        self, user_id: str, *, include_superseded: bool, limit: int | None, before: int | None
    ) -> list[dict[str, Any]]:
        return list_corrections(self.db, user_id, include_superseded=include_superseded, limit=limit, before=before)

    def forget(self, user_id: str, correction_id: int) -> ForgetReceipt:
        return forget_correction(self.db, self.vectors, user_id, correction_id, self.grace_seconds)

    def refusals(self, user_id: str) -> list[Refusal]:
        return list_refusals(self.db, user_id)

    def forget_refusal(self, user_id: str, original: str, final: str) -> Refusal:
        return forget_refusal(self.db, user_id, original, final)

    def taught(self, user_id: str) -> list[Taught]:
        return [(c.original, c.final, c.entity_type, c.frequency) for c in active_corrections(self.db, user_id)]

    def promoted(self, user_id: str) -> dict[str, list[str]]:
        return promoted_vocabulary(self.db, user_id, **self.lists.promoted_limits())

    def canonical(self, transcript_id: str, user_id: str) -> dict[str, list[str]]:
        return self.lists.fetch_canonical_entities(transcript_id, user_id).lists
