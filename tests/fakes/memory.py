"""In-memory records for the corrections memory service: a user's corrections, refusals and promoted values, and
each transcript's list.

It keeps the rules the service relies on (forgetting takes a correction and its earlier rows of the same original
out of the vocabulary; a refusal taken back no longer stands; a pair not refused is NotFound), so that the service's
own rules can be tested without PostgreSQL or a vector store. The same on the real stores:
tests/e2e/test_api.py and test_refusals.py (the users' routes), tests/integration/test_corrections_memory.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from namesake.core.errors import NotFoundError
from namesake.corrections_memory.forget import ForgetReceipt
from namesake.corrections_memory.ports import Taught
from namesake.corrections_memory.refusals import Refusal


@dataclass
class FakeMemoryRecords:
    """The `MemoryRecords` port over dicts; `reads` names what was read, in order."""

    taught_by: dict[str, list[Taught]] = field(default_factory=dict)  # user → active corrections, oldest first
    refused: dict[str, list[Refusal]] = field(default_factory=dict)  # user → standing refusals
    promoted_by: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # user → promoted values by list
    lists: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # transcript → its canonical lists
    reads: list[str] = field(default_factory=list)

    def corrections(
        self, user_id: str, *, include_superseded: bool, limit: int | None, before: int | None
    ) -> list[dict[str, Any]]:
        self.reads.append("corrections")
        rows = [{"id": i + 1, "original": o, "final": f, "entity_type": t, "frequency": n}
                for i, (o, f, t, n) in enumerate(self.taught_by.get(user_id, []))]  # fmt: skip
        newest = [r for r in reversed(rows) if before is None or r["id"] < before]
        return newest[:limit] if limit is not None else newest

    def forget(self, user_id: str, correction_id: int) -> ForgetReceipt:
        rows = self.taught_by.get(user_id, [])
        if not 0 < correction_id <= len(rows):
            raise NotFoundError(f"no correction {correction_id} for this user", field="correction_id")
        original, final, _, _ = rows[correction_id - 1]
        self.taught_by[user_id] = [r for r in rows if r[0] != original]
        return ForgetReceipt(user_id, correction_id, original, final, {"corrections": 1}, {"corrections": 0})

    def refusals(self, user_id: str) -> list[Refusal]:
        self.reads.append("refusals")
        return sorted(self.refused.get(user_id, []), key=lambda r: r.last_refused_at, reverse=True)

    def forget_refusal(self, user_id: str, original: str, final: str) -> Refusal:
        standing = self.refused.get(user_id, [])
        found = [r for r in standing if (r.original, r.final) == (original, final)]
        if not found:
            raise NotFoundError(f"no refusal of {original!r} → {final!r} stands for this user", field="original")
        self.refused[user_id] = [r for r in standing if r not in found]
        return found[0]

    def taught(self, user_id: str) -> list[Taught]:
        self.reads.append("taught")
        return list(self.taught_by.get(user_id, []))

    def promoted(self, user_id: str) -> dict[str, list[str]]:
        self.reads.append("promoted")
        return self.promoted_by.get(user_id, {})

    def canonical(self, transcript_id: str, user_id: str) -> dict[str, list[str]]:
        self.reads.append("canonical")
        return self.lists.get(transcript_id, {})


def refusal(original: str, final: str, times: int = 1, day: int = 1) -> Refusal:
    """A standing refusal, last refused on day `day` of December 2026."""
    return Refusal(original, final, times, datetime(2026, 12, day, tzinfo=UTC))
