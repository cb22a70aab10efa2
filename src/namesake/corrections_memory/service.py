"""What a user sees of their memory and may take back: corrections, refusals, and what they taught as an ASR
vocabulary; the routes and the commands call it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from namesake.adapters import Database, VectorStore
from namesake.core import Settings
from namesake.corrections_memory.forget import ForgetReceipt, forget_correction
from namesake.corrections_memory.promotion import promoted_vocabulary
from namesake.corrections_memory.refusals import Refusal, forget_refusal, list_refusals
from namesake.corrections_memory.repository import active_corrections, list_corrections
from namesake.transcripts import CanonicalListReader
from namesake.users import build_terms, export


@dataclass
class CorrectionsMemoryService:
    """A user's corrections memory as they read and change it, over PostgreSQL and the vector store."""

    db: Database
    vectors: VectorStore
    settings: Settings
    lists: CanonicalListReader  # a transcript's canonical lists, for a vocabulary that carries them

    def corrections(
        self, user_id: str, *, include_superseded: bool = False, limit: int | None = None, before: int | None = None
    ) -> list[dict[str, Any]]:
        """The user's corrections as mirrored in PostgreSQL, newest first (a page below id `before`)."""
        return list_corrections(self.db, user_id, include_superseded=include_superseded, limit=limit, before=before)

    def forget_correction(self, user_id: str, correction_id: int) -> ForgetReceipt:
        """Forget one correction (and the history of that original) in both stores."""
        return forget_correction(self.db, self.vectors, user_id, correction_id, self.settings.erasure_grace_seconds)

    def refusals(self, user_id: str) -> list[Refusal]:
        """The pairs the user rejected that still stand (never proposed to them again), last refused first."""
        return list_refusals(self.db, user_id)

    def forget_refusal(self, user_id: str, original: str, final: str) -> Refusal:
        """Take a refusal back: the pair may be proposed to the user again."""
        return forget_refusal(self.db, user_id, original, final)

    def vocabulary(self, user_id: str, fmt: str, transcript_id: str | None = None) -> dict[str, Any]:
        """What the user taught (and, with a transcript, its canonical list with their promoted vocabulary) in an
        ASR engine's request shape."""
        taught = [(c.original, c.final, c.entity_type, c.frequency) for c in active_corrections(self.db, user_id)]
        canonical = None
        if transcript_id is not None:
            canonical = self.lists.fetch_canonical_entities(transcript_id, user_id).lists
        promoted = promoted_vocabulary(self.db, user_id, **self.lists.promoted_limits())
        return export(build_terms(taught, promoted, canonical), fmt, user_id)
