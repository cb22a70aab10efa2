"""The ports the pure stages call out through, as protocols: the adapters live above, in `namesake.llm`."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class LLMProvider(Protocol):
    """Answers one prompt with one JSON object; raises the typed LLMError subclasses."""

    name: str

    def complete_json(self, *, system: str, user: str) -> dict[str, Any]:
        """Send the prompt, return the parsed JSON object of the answer."""
        ...
