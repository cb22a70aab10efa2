"""The VectorStore port: what namesake needs from Qdrant, whichever Qdrant it is."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

from namesake.core import InvalidInputError

PointId = str | uuid.UUID
IndexKind = Literal["keyword", "integer"]
_COLLECTION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,199}$")


@dataclass(frozen=True)
class Match:
    """Payload field equals value (booleans are compared as the 0/1 ints they are stored as)."""

    key: str
    value: str | int | bool


@dataclass(frozen=True)
class MatchAny:
    """Payload field equals any of the values."""

    key: str
    values: tuple[str, ...] | tuple[int, ...]


@dataclass(frozen=True)
class Range:
    """Numeric payload field within bounds (None = unbounded)."""

    key: str
    gt: float | None = None
    gte: float | None = None
    lt: float | None = None
    lte: float | None = None


Condition = Match | MatchAny | Range


@dataclass(frozen=True)
class Filter:
    """All `must` conditions hold and no `must_not` condition holds."""

    must: tuple[Condition, ...] = ()
    must_not: tuple[Condition, ...] = ()


@dataclass
class VectorPoint:
    """A point as stored: id, vector (None when not requested) and payload."""

    id: PointId
    vector: list[float] | None
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ScoredHit:
    """A query answer: point id, cosine score, payload."""

    id: PointId
    score: float
    payload: dict[str, Any]


def check_collection_name(name: str) -> str:
    """Collection names become folder names in the embedded store: keep them tame."""
    if not isinstance(name, str) or not _COLLECTION_NAME.match(name):
        raise InvalidInputError(
            f"invalid collection name {name!r}: letters, digits, '_', '-', '.', at most 200 chars",
            field="collection",
        )
    return name


def storable(value: Any) -> Any:
    """Booleans become 0/1 ints (Qdrant Edge's boolean match never matches), recursively."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, dict):
        return {k: storable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [storable(v) for v in value]
    return value


Struct = TypeVar("Struct")


def wire_points(points: list[VectorPoint], make: Callable[[PointId, list[float], Any], Struct]) -> list[Struct]:
    """Each point as its library's struct: a plain float vector and a storable payload, whichever adapter sends it."""
    return [make(p.id, [float(x) for x in p.vector or []], storable(p.payload)) for p in points]


def normalise_id(point_id: Any) -> PointId:
    """Both backends hand back UUID ids in their own type; callers always get uuid.UUID or str."""
    if isinstance(point_id, uuid.UUID):
        return point_id
    try:
        return uuid.UUID(str(point_id))
    except ValueError:
        return str(point_id)


@runtime_checkable
class VectorStore(Protocol):
    """Operations namesake performs on Qdrant; adapters: embedded (Edge) and server (client)."""

    def ensure_collection(self, name: str, dim: int) -> bool:
        """Create with cosine distance if missing (True); raise DimensionMismatchError if dims differ."""
        ...

    def collection_dim(self, name: str) -> int | None:
        """Vector size of an existing collection, None when it does not exist."""
        ...

    def ensure_payload_index(self, name: str, field_name: str, kind: IndexKind, *, tenant: bool = False) -> bool:
        """Create a payload index if missing (True when created)."""
        ...

    def payload_indexes(self, name: str) -> dict[str, str]:
        """Existing payload indexes: field -> kind."""
        ...

    def upsert(self, name: str, points: list[VectorPoint]) -> None:
        """Insert or replace points (payload booleans stored as ints)."""
        ...

    def query(self, name: str, vector: list[float], *, limit: int, flt: Filter | None = None) -> list[ScoredHit]:
        """Top-`limit` nearest points passing the filter: a batch of one, for every adapter."""
        return self.query_batch(name, [vector], limit=limit, filters=[flt])[0]

    def query_batch(
        self, name: str, vectors: Sequence[list[float]], *, limit: int, filters: Sequence[Filter | None]
    ) -> list[list[ScoredHit]]:
        """Several queries in one call, answers in the same order."""
        ...

    def scroll(
        self,
        name: str,
        *,
        limit: int,
        offset: PointId | None = None,
        flt: Filter | None = None,
        with_vectors: bool = False,
    ) -> tuple[list[VectorPoint], PointId | None]:
        """One page of points in id order and the offset of the next page (None at the end)."""
        ...

    def retrieve(self, name: str, ids: Sequence[PointId], *, with_vectors: bool = False) -> list[VectorPoint]:
        """The points among `ids` that exist."""
        ...

    def count(self, name: str, flt: Filter | None = None) -> int:
        """Exact number of points passing the filter."""
        ...

    def set_payload(self, name: str, ids: Sequence[PointId], payload: dict[str, Any]) -> None:
        """Merge payload keys into the given points."""
        ...

    def optimize(self, name: str) -> bool:
        """Compact the collection's segments, blocking (the embedded store never does it by itself); False when
        there was nothing to do or the server does it on its own."""
        ...

    def delete(self, name: str, ids: Sequence[PointId]) -> None:
        """Delete points by id (missing ids are ignored)."""
        ...

    def delete_by_filter(self, name: str, flt: Filter) -> None:
        """Delete every point passing the filter."""
        ...

    def collection_exists(self, name: str) -> bool:
        """Whether the collection exists."""
        ...

    def drop_collection(self, name: str) -> bool:
        """Drop a collection with its points (True when it existed)."""
        ...

    def list_collections(self) -> list[str]:
        """Names of all collections, sorted."""
        ...

    def release_idle(self) -> int:
        """Close what an embedded store holds open and no call is using, so that its mapped files leave the process's
        memory (a server store holds nothing: 0); how many were closed. Reopened on the next call that needs them."""
        return 0

    def close(self) -> None:
        """Flush and release the store."""
        ...
