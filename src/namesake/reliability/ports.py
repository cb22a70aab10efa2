"""The ports the pure stages call out through, as protocols: adapters live above (`namesake.adapters`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class LLMProvider(Protocol):
    """Answers one prompt with one JSON object; raises the typed LLMError subclasses."""

    name: str

    def complete_json(self, *, system: str, user: str) -> dict[str, Any]:
        """Send the prompt, return the parsed JSON object of the answer."""
        ...


@dataclass(frozen=True)
class Window:
    """A rewrite in its words: the text before it, the original or the final, the text after it."""

    left: str
    original: str
    final: str
    right: str


@runtime_checkable
class LanguageModel(Protocol):
    """A language model's view of a rewrite where it stands (the adapter is `namesake.language_model.local`)."""

    name: str

    def gains(self, windows: Sequence[Window]) -> list[float]:
        """Per window, in nats: log P(words with the final) − log P(words with the original)."""
        ...
