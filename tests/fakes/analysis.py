"""In-memory stores for the analysis service: transcripts and their owners, each one's list, a user's memory and
refusals, and what each analysis saved.

It keeps the rules the service relies on (a read refused by its check registers nothing; a transcript registered
once is not created again; a discarded one is gone with its list), so that the service's own rules can be tested
without PostgreSQL or a vector store. The same on the real stores: tests/e2e/test_cancel.py, test_hardening.py.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from namesake.analysis.ports import StoredInputs
from namesake.domain.types import Candidate, CanonicalDictionary, RememberedCorrection, Suggestion, SuggestionStatus


@dataclass
class FakeAnalysisStores:
    """The `AnalysisStores` port over dicts."""

    owners: dict[str, str] = field(default_factory=dict)  # transcript → user
    lists: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # transcript → its canonical lists
    remembered: dict[str, list[RememberedCorrection]] = field(default_factory=dict)  # user → what they taught
    refused: dict[str, dict[tuple[str, str], int]] = field(default_factory=dict)  # user → refused pairs
    saved: dict[str, list[Suggestion]] = field(default_factory=dict)  # transcript → its suggestions now
    renewed: list[tuple[str, str, str]] = field(default_factory=list)  # (user, original, final) applied again
    discarded: list[str] = field(default_factory=list)

    def read(
        self,
        transcript_id: str,
        user_id: str,
        language: str | None,
        entities: dict[str, list[str]] | None,
        check: Callable[[CanonicalDictionary], None],
    ) -> StoredInputs:
        lists = entities if entities is not None else self.lists.get(transcript_id, {})
        dictionary = CanonicalDictionary({name: list(values) for name, values in lists.items()})
        check(dictionary)  # before anything is kept: a refused read leaves the stores as they were
        created = transcript_id not in self.owners
        self.owners.setdefault(transcript_id, user_id)
        if entities is not None:
            self.lists[transcript_id] = entities
        return StoredInputs(
            dictionary, list(self.remembered.get(user_id, [])), dict(self.refused.get(user_id, {})), created
        )

    def index(self, transcript_id: str, user_id: str, entities: dict[str, list[str]]) -> int:
        self.owners.setdefault(transcript_id, user_id)
        self.lists[transcript_id] = entities
        return len(entities)

    def save(
        self,
        transcript_id: str,
        kept: list[Candidate],
        contexts: list[str],
        segments: list[dict[str, Any]],
        user_id: str | None,
    ) -> list[Suggestion]:
        self.saved[transcript_id] = [
            Suggestion(
                c.segment_id, c.start_char, c.end_char, c.original, c.final, c.entity_type,
                str(uuid.uuid4()), c.confidence, SuggestionStatus(c.disposition.value), c.source, dict(c.signals),
            )
            for c in kept
        ]  # fmt: skip
        return self.saved[transcript_id]

    def renew(self, user_id: str, applied: list[tuple[str, str]]) -> int:
        self.renewed.extend((user_id, original, final) for original, final in applied)
        return len(applied)

    def discard(self, transcript_id: str) -> None:
        self.owners.pop(transcript_id, None)
        self.lists.pop(transcript_id, None)
        self.saved.pop(transcript_id, None)
        self.discarded.append(transcript_id)
