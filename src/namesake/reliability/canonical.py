"""The canonical lists, pure part: checked, cut into chunk payloads, and merged back into a dictionary."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterable
from typing import Any

from namesake.core import InputTooLargeError, InvalidInputError
from namesake.domain import LIST_TYPES, CanonicalDictionary

CANONICAL_LISTS = tuple(LIST_TYPES)
TYPE_LISTS = {v: k for k, v in LIST_TYPES.items()}
CHUNK_SIZE = 100
CHUNK_TEXT_VALUES = 12


def validate_entities(
    entities: Any, *, max_items: int, max_chars: int, prefix: str = "canonical_entities."
) -> dict[str, list[str]]:
    """Check the `canonical_entities` object: known list names, lists of non-empty strings, within limits.

    An entry's length is bounded (`max_chars`): what the spotter costs grows with it, so one long entry could
    hold the CPU for minutes. Fields are named from `prefix` (the lists of PUT canonical-entities have none)."""
    if not isinstance(entities, dict):
        raise InvalidInputError("canonical_entities must be an object of lists", field="canonical_entities")
    out: dict[str, list[str]] = {}
    for name, values in entities.items():
        if name not in CANONICAL_LISTS:
            raise InvalidInputError(
                f"canonical_entities.{name} is not one of {', '.join(CANONICAL_LISTS)}",
                field=f"canonical_entities.{name}",
            )
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise InvalidInputError(
                f"canonical_entities.{name} must be a list of strings", field=f"canonical_entities.{name}"
            )
        for i, v in enumerate(values):
            if len(v) > max_chars:
                raise InputTooLargeError(
                    f"{prefix}{name}[{i}] has {len(v)} characters, the limit is {max_chars} "
                    "(MAX_CANONICAL_ENTRY_CHARS)",
                    field=f"{prefix}{name}[{i}]",
                )
        out[name] = [v.strip() for v in values if v.strip()]
    total = sum(len(v) for v in out.values())
    if total > max_items:
        raise InputTooLargeError(
            f"canonical_entities has {total} values, the limit is {max_items}", field="canonical_entities"
        )
    return out


def chunk_payloads(transcript_id: str, entities: dict[str, list[str]]) -> list[dict[str, Any]]:
    """Split the lists into chunks of CHUNK_SIZE values each, in the payload layout of the upstream pipeline."""
    payloads = []
    for name in CANONICAL_LISTS:
        values = entities.get(name, [])
        for i in range(0, len(values), CHUNK_SIZE):
            part = values[i : i + CHUNK_SIZE]
            payload: dict[str, Any] = {n: [] for n in CANONICAL_LISTS}
            # the chunk's vector is of its head: embedding cost stays flat however long the lists are
            text = ", ".join(part[:CHUNK_TEXT_VALUES])
            payload.update({name: part, "text": text, "transcript_id": transcript_id, "chunk": i})
            payloads.append(payload)
    return payloads


def chunk_point_id(transcript_id: str, index: int) -> uuid.UUID:
    """Deterministic id whose low bits are the chunk index: a scroll returns chunks most-frequent first."""
    prefix = uuid.uuid5(uuid.NAMESPACE_URL, f"namesake/{transcript_id}").int >> 32
    return uuid.UUID(int=(prefix << 32) | index)


def _by_frequency(counts: Counter[str], first_seen: dict[str, int]) -> list[str]:
    """Values by how many chunks name them, first seen first among equals."""
    return sorted(counts, key=lambda v: (-counts[v], first_seen[v]))


def aggregate_payloads(payloads: Iterable[Any]) -> CanonicalDictionary:
    """Merge chunk payloads into whole lists sorted by frequency (first seen wins ties).

    No per-list cap here: the spotter matches every entry (the scorer sorts weak matches out);
    only what goes into an LLM prompt is capped (LLM_PROMPT_LIST_CAP).
    """
    counts: dict[str, Counter[str]] = {n: Counter() for n in CANONICAL_LISTS}
    first_seen: dict[str, dict[str, int]] = {n: {} for n in CANONICAL_LISTS}
    malformed = 0
    for payload in payloads:
        if not isinstance(payload, dict):
            malformed += 1
            continue
        for name in CANONICAL_LISTS:
            values = payload.get(name, [])
            if not isinstance(values, list):
                malformed += 1
                continue
            for v in values:
                if not isinstance(v, str) or not v.strip():
                    malformed += 1
                    continue
                counts[name][v] += 1
                first_seen[name].setdefault(v, len(first_seen[name]))
    lists = {name: _by_frequency(counts[name], first_seen[name]) for name in CANONICAL_LISTS}
    return CanonicalDictionary({k: v for k, v in lists.items() if v}, malformed)
