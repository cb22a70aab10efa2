"""Vector store on qdrant-client: a Qdrant server or cluster (QDRANT_URL); the tests run it on local mode."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from qdrant_client import QdrantClient
from qdrant_client import models as qm
from qdrant_client.http.exceptions import UnexpectedResponse

from namesake.adapters.vectors.base import (
    Filter,
    IndexKind,
    Match,
    MatchAny,
    PointId,
    ScoredHit,
    VectorPoint,
    VectorStore,
    check_collection_name,
    normalise_id,
    storable,
    wire_points,
)
from namesake.core import CollectionNotFoundError, DimensionMismatchError, VectorStoreError

T = TypeVar("T")


@contextmanager
def _translate(what: str) -> Iterator[None]:
    """qdrant-client raises transport and API errors of several kinds; we raise one."""
    try:
        yield
    except (VectorStoreError, DimensionMismatchError):
        raise
    except UnexpectedResponse as exc:
        if exc.status_code == 404:
            raise CollectionNotFoundError(f"Qdrant: {what}: collection not found") from exc
        raise VectorStoreError(f"Qdrant: {what} failed: {exc}") from exc
    except ValueError as exc:  # qdrant-client's local mode says a collection is missing this way
        if "not found" in str(exc):
            raise CollectionNotFoundError(f"Qdrant: {what}: {exc}") from exc
        raise VectorStoreError(f"Qdrant: {what} failed: {exc}") from exc
    except Exception as exc:  # grpc, httpx
        raise VectorStoreError(f"Qdrant: {what} failed: {exc}") from exc


def _condition(c: Any) -> qm.FieldCondition:
    if isinstance(c, Match):
        return qm.FieldCondition(key=c.key, match=qm.MatchValue(value=storable(c.value)))
    if isinstance(c, MatchAny):
        return qm.FieldCondition(key=c.key, match=qm.MatchAny(any=list(storable(c.values))))
    return qm.FieldCondition(key=c.key, range=qm.Range(gt=c.gt, gte=c.gte, lt=c.lt, lte=c.lte))


def to_client_filter(flt: Filter | None) -> qm.Filter | None:
    """Translate the port's filter into qdrant-client's."""
    if flt is None or (not flt.must and not flt.must_not):
        return None
    return qm.Filter(
        must=[_condition(c) for c in flt.must] or None,
        must_not=[_condition(c) for c in flt.must_not] or None,
    )


def _id(point_id: PointId) -> str:
    return str(point_id)


class ServerVectorStore(VectorStore):
    """VectorStore on qdrant-client; stateless, safe behind several API replicas."""

    def __init__(self, client: QdrantClient) -> None:
        self.client = client

    @classmethod
    def connect(cls, url: str, api_key: str | None = None, timeout: int = 10) -> ServerVectorStore:
        """Client for a Qdrant server (`http(s)://host:6333`)."""
        return cls(QdrantClient(url=url, api_key=api_key, timeout=timeout))

    def _run(self, what: str, fn: Callable[[], T]) -> T:
        with _translate(what):
            return fn()

    def collection_exists(self, name: str) -> bool:
        """Whether the server knows the collection."""
        check_collection_name(name)
        return bool(self._run("collection_exists", lambda: self.client.collection_exists(name)))

    def collection_dim(self, name: str) -> int | None:
        """Vector size of the collection's unnamed dense vector."""
        if not self.collection_exists(name):
            return None
        info = self._run("get_collection", lambda: self.client.get_collection(name))
        vectors = info.config.params.vectors
        if isinstance(vectors, dict):
            vectors = next(iter(vectors.values()))
        return int(vectors.size)  # type: ignore[union-attr]

    def ensure_collection(self, name: str, dim: int) -> bool:
        """Create with cosine distance if missing; a different dimension is DIM_MISMATCH."""
        existing = self.collection_dim(name)
        if existing is not None:
            if existing != dim:
                raise DimensionMismatchError(name, expected=dim, actual=existing)
            return False
        params = qm.VectorParams(size=dim, distance=qm.Distance.COSINE)
        self._run("create_collection", lambda: self.client.create_collection(name, vectors_config=params))
        return True

    def drop_collection(self, name: str) -> bool:
        """Delete the collection if it exists."""
        if not self.collection_exists(name):
            return False
        self._run("delete_collection", lambda: self.client.delete_collection(name))
        return True

    def list_collections(self) -> list[str]:
        """All collection names on the server."""
        answer = self._run("get_collections", self.client.get_collections)
        return sorted(c.name for c in answer.collections)

    def payload_indexes(self, name: str) -> dict[str, str]:
        """Field -> kind, as the server reports its payload schema."""
        info = self._run("get_collection", lambda: self.client.get_collection(name))
        return {f: str(getattr(s.data_type, "value", s.data_type)) for f, s in (info.payload_schema or {}).items()}

    def ensure_payload_index(self, name: str, field_name: str, kind: IndexKind, *, tenant: bool = False) -> bool:
        """Create the index unless present; `tenant` co-locates a tenant's points on the server."""
        if field_name in self.payload_indexes(name):
            return False
        schema: Any
        if kind == "keyword":
            schema = qm.KeywordIndexParams(type=qm.KeywordIndexType.KEYWORD, is_tenant=tenant or None)
        else:
            schema = qm.IntegerIndexParams(type=qm.IntegerIndexType.INTEGER, lookup=True, range=True)
        self._run(
            "create_payload_index",
            lambda: self.client.create_payload_index(name, field_name=field_name, field_schema=schema),
        )
        return True

    def upsert(self, name: str, points: list[VectorPoint]) -> None:
        """Insert or replace points, waiting for the write to be applied."""
        if not points:
            return
        structs = wire_points(points, lambda i, v, payload: qm.PointStruct(id=_id(i), vector=v, payload=payload))
        self._run("upsert", lambda: self.client.upsert(name, points=structs, wait=True))

    def query_batch(
        self, name: str, vectors: Sequence[list[float]], *, limit: int, filters: Sequence[Filter | None]
    ) -> list[list[ScoredHit]]:
        """One request carrying every query."""
        if not vectors:
            return []
        requests = [
            qm.QueryRequest(query=[float(x) for x in v], filter=to_client_filter(f), limit=limit, with_payload=True)
            for v, f in zip(vectors, filters, strict=True)
        ]
        answers = self._run("query_batch", lambda: self.client.query_batch_points(name, requests=requests))
        return [
            [ScoredHit(normalise_id(p.id), float(p.score), dict(p.payload or {})) for p in a.points] for a in answers
        ]

    def scroll(
        self,
        name: str,
        *,
        limit: int,
        offset: PointId | None = None,
        flt: Filter | None = None,
        with_vectors: bool = False,
    ) -> tuple[list[VectorPoint], PointId | None]:
        """One page in id order, plus the next page's offset."""
        records, nxt = self._run(
            "scroll",
            lambda: self.client.scroll(
                name,
                scroll_filter=to_client_filter(flt),
                limit=limit,
                offset=None if offset is None else _id(offset),
                with_payload=True,
                with_vectors=with_vectors,
            ),
        )
        return [self._point(r, with_vectors) for r in records], None if nxt is None else normalise_id(nxt)

    @staticmethod
    def _point(record: Any, with_vectors: bool) -> VectorPoint:
        vector = record.vector if with_vectors else None
        return VectorPoint(
            normalise_id(record.id), list(vector) if vector is not None else None, dict(record.payload or {})
        )

    def retrieve(self, name: str, ids: Sequence[PointId], *, with_vectors: bool = False) -> list[VectorPoint]:
        """Existing points among ids."""
        if not ids:
            return []
        records = self._run(
            "retrieve",
            lambda: self.client.retrieve(name, ids=[_id(i) for i in ids], with_payload=True, with_vectors=with_vectors),
        )
        return [self._point(r, with_vectors) for r in records]

    def count(self, name: str, flt: Filter | None = None) -> int:
        """Exact count of points passing the filter."""
        answer = self._run("count", lambda: self.client.count(name, count_filter=to_client_filter(flt), exact=True))
        return int(answer.count)

    def optimize(self, name: str) -> bool:
        """Nothing to do: a Qdrant server runs its optimizers by itself."""
        return False

    def set_payload(self, name: str, ids: Sequence[PointId], payload: dict[str, Any]) -> None:
        """Merge keys into the points' payloads."""
        if not ids:
            return
        self._run(
            "set_payload",
            lambda: self.client.set_payload(name, payload=storable(payload), points=[_id(i) for i in ids], wait=True),
        )

    def delete(self, name: str, ids: Sequence[PointId]) -> None:
        """Delete by id."""
        if not ids:
            return
        selector = qm.PointIdsList(points=[_id(i) for i in ids])
        self._run("delete", lambda: self.client.delete(name, points_selector=selector, wait=True))

    def delete_by_filter(self, name: str, flt: Filter) -> None:
        """Delete every point passing a non-empty filter."""
        client_filter = to_client_filter(flt)
        if client_filter is None:
            raise VectorStoreError("refusing delete_by_filter with an empty filter")
        selector = qm.FilterSelector(filter=client_filter)
        self._run("delete by filter", lambda: self.client.delete(name, points_selector=selector, wait=True))

    def close(self) -> None:
        """Close the client's connections."""
        self._run("close", self.client.close)
