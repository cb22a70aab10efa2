"""What the analysis service needs from the stores, as a protocol: register a transcript and read what the stages
need of it and its user, save what they keep, and take a stopped analysis's transcript away again.

`analysis/stores.py: SqlAnalysisStores` is the adapter over PostgreSQL and the vector store; `tests/fakes/analysis.py`
is the in-memory one the service's unit tests use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from namesake.domain import Candidate, CanonicalDictionary, RememberedCorrection, Suggestion


@dataclass(frozen=True)
class StoredInputs:
    """What the stores hold for one analysis: the list (as sent, or as stored) and the user's memory."""

    dictionary: CanonicalDictionary
    remembered: list[RememberedCorrection] = field(default_factory=list)
    refused: dict[tuple[str, str], int] = field(default_factory=dict)  # refusal_policy.refusal_key → times refused
    created: bool = False  # this analysis registered the transcript: a stopped one takes it away again
    refused_around: dict[str, list[str]] = field(default_factory=dict)  # refused final → the words around each refusal
    refused_read: dict[tuple[str, str], float] = field(default_factory=dict)  # refusal_key → best lm_gain where refused


class AnalysisStores(Protocol):
    """The stores an analysis reads and writes."""

    def read(
        self,
        transcript_id: str,
        user_id: str,
        language: str | None,
        entities: dict[str, list[str]] | None,
        check: Callable[[CanonicalDictionary], None],
    ) -> StoredInputs:
        """Register the transcript for its user, index the list it brought and read the list and the user's memory,
        in one unit; `check` may refuse what was read (over budget): then nothing of it is kept."""
        ...

    def index(self, transcript_id: str, user_id: str, entities: dict[str, list[str]]) -> int:
        """Register the transcript and (re)index its canonical entities in one unit; how many chunks."""
        ...

    def save(
        self,
        transcript_id: str,
        kept: list[Candidate],
        contexts: list[str],
        segments: list[dict[str, Any]],
        user_id: str | None,
    ) -> list[Suggestion]:
        """What the run kept saved beside what the reviewer decided: every suggestion of the transcript now."""
        ...

    def renew(self, user_id: str, applied: list[tuple[str, str]]) -> int:
        """The memory's fixes the run applied by themselves apply for longer; how many were renewed."""
        ...

    def discard(self, transcript_id: str) -> None:
        """The transcript, its suggestions and its list gone, as if never sent (an analysis stopped midway)."""
        ...
