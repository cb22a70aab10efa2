"""The canonical-entity collections: a transcript's lists indexed, read back with the promoted vocabulary."""

from __future__ import annotations

import hashlib
import re
from typing import Any, Protocol

from namesake.adapters import Database, Embedder, Filter, Match, PointId, VectorPoint, VectorStore
from namesake.core import CORRECTIONS_COLLECTION, SHARED_CANONICAL_COLLECTION, CollectionNotFoundError, Settings
from namesake.domain import CanonicalDictionary
from namesake.reliability import aggregate_payloads, chunk_payloads, chunk_point_id

SCROLL_PAGE = 256


# Collections of namesake itself: never a transcript's, whatever its id.
SYSTEM_COLLECTIONS = frozenset({CORRECTIONS_COLLECTION, SHARED_CANONICAL_COLLECTION})
# Every per-transcript collection name starts with this: no transcript id can name a system collection.
TRANSCRIPT_PREFIX = "transcript--"
# A transcript id a collection name cannot hold as is (a tenant's `~`, or too long) is hashed under this
# prefix instead: no plain id can produce it, so two transcripts never share a collection.
HASHED_PREFIX = "transcript_h_"
_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,187}$")


def collection_for(transcript_id: str, settings: Settings) -> str:
    """The shared collection keyed by transcript_id, or the transcript's own, under a prefix no system name has.

    A transcript id such as `reliability_corrections_memory` would otherwise write its chunks into the
    corrections collection, and erasing its owner would drop every user's memory.
    """
    if settings.canonical_layout == "shared":
        return SHARED_CANONICAL_COLLECTION
    if _PLAIN.match(transcript_id):
        return TRANSCRIPT_PREFIX + transcript_id
    return HASHED_PREFIX + hashlib.sha256(transcript_id.encode()).hexdigest()


def legacy_collection(transcript_id: str, settings: Settings) -> str | None:
    """Where a transcript's entities lived before the prefix (its bare id), unless that is a system name.

    Read when the prefixed collection does not exist yet, and dropped with the transcript: deployments
    indexed before the prefix keep working without re-sending their lists. An id that starts like a
    prefixed name has no legacy collection: the collection of that name belongs to another transcript.
    """
    if settings.canonical_layout == "shared" or transcript_id in SYSTEM_COLLECTIONS or not _PLAIN.match(transcript_id):
        return None
    if transcript_id.startswith((TRANSCRIPT_PREFIX, HASHED_PREFIX)):
        return None  # that name is another transcript's collection ("transcript--t1" is t1's), never this one's
    return transcript_id


def is_transcript_collection(name: str) -> bool:
    """Whether a collection name is one `collection_for` makes for a single transcript."""
    return name.startswith((TRANSCRIPT_PREFIX, HASHED_PREFIX))


def is_shared(name: str) -> bool:
    """Whether a canonical collection holds many transcripts (points are then filtered by transcript_id)."""
    return name == SHARED_CANONICAL_COLLECTION


def index_canonical_entities(
    store: VectorStore, embedder: Embedder, settings: Settings, transcript_id: str, entities: dict[str, list[str]]
) -> int:
    """Replace the transcript's canonical entities in its collection; returns the number of chunks written."""
    name = collection_for(transcript_id, settings)
    made = store.ensure_collection(name, embedder.dim)
    if settings.canonical_layout == "shared":
        store.ensure_payload_index(name, "transcript_id", "keyword", tenant=True)
    if not made:  # a collection just made holds nothing to replace (and each write to it is flushed: ~10 ms)
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


def drop_transcript_entities(store: VectorStore, settings: Settings, transcript_id: str) -> int:
    """Remove a transcript's canonical entities (its collections, or its points of the shared one)."""
    name = collection_for(transcript_id, settings)
    if is_shared(name):
        if store.collection_exists(name):
            store.delete_by_filter(name, Filter(must=(Match("transcript_id", transcript_id),)))
        return 0
    dropped = int(store.drop_collection(name))
    legacy = legacy_collection(transcript_id, settings)
    if legacy is not None:
        dropped += int(store.drop_collection(legacy))
    return dropped


class PromotedReader(Protocol):
    """Reads the promoted vocabulary a user's analysis merges (corrections_memory.promotion.promoted_vocabulary)."""

    def __call__(self, user_id: str | None, *, max_user: int, max_global: int) -> dict[str, list[str]]: ...


class CanonicalListReader:
    """Reads the canonical dictionary of a transcript: its collection plus promoted vocabulary."""

    def __init__(
        self, store: VectorStore, db: Database, settings: Settings, read_promoted: PromotedReader | None = None
    ) -> None:
        self.store, self.db, self.settings = store, db, settings
        # the promoted vocabulary is the corrections memory's: read through it, and none without a reader
        self.read_promoted = read_promoted

    def fetch_canonical_entities(
        self,
        transcript_id: str,
        user_id: str | None = None,
        sent: dict[str, list[str]] | None = None,
        promoted: dict[str, list[str]] | None = None,
    ) -> CanonicalDictionary:
        """The transcript's lists merged with the promoted vocabulary.

        Lists the request just sent (and indexed) are read as given, through the same chunking and merge
        the stored chunks go through: the collection is scrolled only when the request sent none.
        """
        if sent is not None:
            dictionary = aggregate_payloads(chunk_payloads(transcript_id, sent))
        else:
            dictionary = aggregate_payloads(self._stored_payloads(transcript_id))
        if promoted is None and self.read_promoted is not None:  # not read with the caller's other reads
            promoted = self.read_promoted(user_id, **self.promoted_limits())
        for name_, values in (promoted or {}).items():
            current = dictionary.lists.setdefault(name_, [])
            current.extend(v for v in values if v not in current)
        return dictionary

    def promoted_limits(self) -> dict[str, int]:
        """How many promoted values of the user's, and of everyone's, an analysis reads."""
        s = self.settings
        return {"max_user": s.reliability_promoted_max_per_user, "max_global": s.reliability_promoted_max_global}

    def _stored_payloads(self, transcript_id: str) -> list[Any]:
        """Every chunk of the transcript's collection, in point order (most frequent first)."""
        name = collection_for(transcript_id, self.settings)
        legacy = legacy_collection(transcript_id, self.settings)
        if not self.store.collection_exists(name) and legacy is not None and self.store.collection_exists(legacy):
            name = legacy
        payloads: list[Any] = []
        if not self.store.collection_exists(name):
            return payloads
        flt = Filter(must=(Match("transcript_id", transcript_id),)) if is_shared(name) else None
        offset: PointId | None = None
        try:
            while True:  # every chunk of the transcript (bounded by MAX_CANONICAL_ENTITIES at indexing)
                points, offset = self.store.scroll(name, limit=SCROLL_PAGE, offset=offset, flt=flt)
                payloads.extend(p.payload for p in points)
                if offset is None:
                    return payloads
        except CollectionNotFoundError:  # the transcript was deleted meanwhile: it has no list now
            return []
