"""Stage 0: a transcript's canonical entities — indexed into its collection, read back as a dictionary."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterable
from typing import Any

from sqlalchemy import or_, select

from namesake.db import Database
from namesake.embeddings import Embedder
from namesake.errors import InvalidInputError
from namesake.models import CanonicalVocabulary
from namesake.reliability.types import LIST_TYPES, CanonicalDictionary
from namesake.settings import SHARED_CANONICAL_COLLECTION, Settings
from namesake.vectors.base import Filter, Match, VectorPoint, VectorStore

CANONICAL_LISTS = tuple(LIST_TYPES)
TYPE_LISTS = {v: k for k, v in LIST_TYPES.items()}
CHUNK_SIZE = 100
CHUNK_TEXT_VALUES = 12


def collection_for(transcript_id: str, settings: Settings) -> str:
    """Per-transcript collection (the upstream layout), or the shared one keyed by transcript_id."""
    return SHARED_CANONICAL_COLLECTION if settings.canonical_layout == "shared" else transcript_id


def validate_entities(entities: Any, *, max_items: int) -> dict[str, list[str]]:
    """Check the `canonical_entities` object: known list names, lists of non-empty strings, within limits."""
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
        out[name] = [v.strip() for v in values if v.strip()]
    total = sum(len(v) for v in out.values())
    if total > max_items:
        raise InvalidInputError(
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


def index_canonical_entities(
    store: VectorStore, embedder: Embedder, settings: Settings, transcript_id: str, entities: dict[str, list[str]]
) -> int:
    """Replace the transcript's canonical entities in its collection; returns the number of chunks written."""
    name = collection_for(transcript_id, settings)
    store.ensure_collection(name, embedder.dim)
    if settings.canonical_layout == "shared":
        store.ensure_payload_index(name, "transcript_id", "keyword", tenant=True)
    store.delete_by_filter(name, Filter(must=(Match("transcript_id", transcript_id),)))
    payloads = chunk_payloads(transcript_id, entities)
    if not payloads:
        return 0
    vectors = embedder.embed([p["text"] for p in payloads])
    points = [
        VectorPoint(chunk_point_id(transcript_id, i), v.tolist(), p)
        for i, (p, v) in enumerate(zip(payloads, vectors, strict=True))
    ]
    store.upsert(name, points)
    return len(points)


def aggregate_payloads(payloads: Iterable[Any], max_items: int) -> CanonicalDictionary:
    """Merge chunk payloads into lists sorted by frequency (first seen wins ties), cut at max_items."""
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
    lists = {
        name: sorted(counts[name], key=lambda v, n=name: (-counts[n][v], first_seen[n][v]))[:max_items]
        for name in CANONICAL_LISTS
    }
    return CanonicalDictionary({k: v for k, v in lists.items() if v}, malformed)


def promoted_vocabulary(db: Database, user_id: str | None) -> dict[str, list[str]]:
    """The user's and the global promoted values, by list, most supported first."""
    query = select(CanonicalVocabulary).where(
        or_(CanonicalVocabulary.scope == "global", CanonicalVocabulary.user_id == (user_id or ""))
    )
    out: dict[str, list[str]] = {}
    with db.session() as s:
        rows = s.scalars(query.order_by(CanonicalVocabulary.support_frequency.desc())).all()
    for row in rows:
        out.setdefault(TYPE_LISTS.get(row.entity_type, "keywords"), []).append(row.value)
    return out


class ReliabilityRagEnricher:
    """Reads the canonical dictionary of a transcript: its collection plus promoted vocabulary."""

    def __init__(self, store: VectorStore, db: Database, settings: Settings) -> None:
        self.store, self.db, self.settings = store, db, settings

    def fetch_canonical_entities(self, transcript_id: str, user_id: str | None = None) -> CanonicalDictionary:
        """Scroll the top-K chunks, aggregate, cut per list, then merge the promoted vocabulary."""
        name = collection_for(transcript_id, self.settings)
        payloads: list[Any] = []
        if self.store.collection_exists(name):
            flt = Filter(must=(Match("transcript_id", transcript_id),)) if name != transcript_id else None
            points, _ = self.store.scroll(name, limit=self.settings.reliability_rag_top_k, flt=flt)
            payloads = [p.payload for p in points]
        dictionary = aggregate_payloads(payloads, self.settings.reliability_rag_canonical_max_items)
        for name_, values in promoted_vocabulary(self.db, user_id).items():
            current = dictionary.lists.setdefault(name_, [])
            current.extend(v for v in values if v not in current)
        return dictionary
