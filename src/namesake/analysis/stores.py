"""The analysis service's stores over PostgreSQL and the vector store: the transcripts store, the canonical index and
the corrections memory, read in one unit per analysis."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from namesake.adapters import Runtime
from namesake.analysis.ports import StoredInputs
from namesake.corrections_memory import (
    active_corrections_in,
    promoted_vocabulary_in,
    refused_pairs_in,
    with_left_alone,
)
from namesake.domain import Candidate, CanonicalDictionary, Suggestion
from namesake.transcripts import CanonicalListReader, TranscriptStore, delete_transcript, index_canonical_entities


@dataclass
class SqlAnalysisStores:
    """The `AnalysisStores` port over the runtime's stores."""

    runtime: Runtime
    transcripts: TranscriptStore
    lists: CanonicalListReader
    renew_applied: Callable[[str, list[tuple[str, str]]], int] | None = None  # the writer's renew_applied

    def read(
        self,
        transcript_id: str,
        user_id: str,
        language: str | None,
        entities: dict[str, list[str]] | None,
        check: Callable[[CanonicalDictionary], None],
    ) -> StoredInputs:
        """One unit under the user's claim: the collection comes with the row that owns it, and what the stages read
        of the user is read in the same transaction (one round of the pool, not four)."""
        with self.transcripts.registered(transcript_id, user_id, language) as session:
            created = bool(session.info["created"])
            if entities is not None:
                self._index(transcript_id, entities)
            remembered = with_left_alone(session, active_corrections_in(session, user_id))
            refused = refused_pairs_in(session, user_id)
            promoted = promoted_vocabulary_in(session, user_id, **self.lists.promoted_limits())
            dictionary = self.lists.fetch_canonical_entities(transcript_id, user_id, entities, promoted)
            check(dictionary)  # refused here, the unit rolls back: nothing registered, nothing indexed
        return StoredInputs(dictionary, remembered, refused.times, created, refused.around, refused.read)

    def index(self, transcript_id: str, user_id: str, entities: dict[str, list[str]]) -> int:
        """The transcript registered and its list indexed, in one unit."""
        with self.transcripts.registered(transcript_id, user_id):
            return self._index(transcript_id, entities)

    def _index(self, transcript_id: str, entities: dict[str, list[str]]) -> int:
        rt = self.runtime
        return index_canonical_entities(rt.vectors, rt.embedder, rt.settings, transcript_id, entities)

    def save(
        self,
        transcript_id: str,
        kept: list[Candidate],
        contexts: list[str],
        segments: list[dict[str, Any]],
        user_id: str | None,
    ) -> list[Suggestion]:
        """One upsert on the span key (the transcripts store's rules)."""
        return self.transcripts.save_suggestions(transcript_id, kept, contexts, segments, user_id=user_id)

    def renew(self, user_id: str, applied: list[tuple[str, str]]) -> int:
        """Through the memory writer; nothing without one."""
        return self.renew_applied(user_id, applied) if self.renew_applied is not None else 0

    def discard(self, transcript_id: str) -> None:
        """Entities first, then rows (the retention's deletion)."""
        rt = self.runtime
        delete_transcript(rt.db, rt.vectors, rt.settings, transcript_id)
