"""Decisions taken together: the occurrences of one original → final pair, decided by one request."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from namesake.core import InvalidInputError
from namesake.domain import MemoryScope, Suggestion

# One request decides at most this many occurrences (a 9,000-word call repeats a pair a few dozen times).
MAX_GROUP = 500


@dataclass
class GroupResult:
    """The suggestions after a group decision, and what the one memory write did (None: none made)."""

    suggestions: list[Suggestion]
    memory: str | None
    scope: MemoryScope | None = None  # where the lesson applies next (None: nothing taught)

    def as_json(self) -> dict[str, Any]:
        """The body of POST /v1/transcripts/{id}/decisions."""
        return {"suggestions": [s.as_json() for s in self.suggestions], "memory": self.memory, "scope": self.scope}


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
