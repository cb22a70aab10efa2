"""Embedded vector store on Qdrant Edge: one shard folder per collection under a root dir."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import qdrant_edge as qe

from namesake.adapters.vectors.base import (
    Filter,
    IndexKind,
    PointId,
    ScoredHit,
    VectorPoint,
    VectorStore,
    check_collection_name,
    normalise_id,
    storable,
    wire_points,
)
from namesake.adapters.vectors.edge_support import hold_folder, to_edge_filter, translated
from namesake.core import (
    CORRECTIONS_COLLECTION,
    SHARED_CANONICAL_COLLECTION,
    CollectionNotFoundError,
    DimensionMismatchError,
    VectorStoreError,
)

META_FILE = "namesake-collection.json"
T = TypeVar("T")
_KIND = {"keyword": qe.PayloadSchemaType.Keyword, "integer": qe.PayloadSchemaType.Integer}


def _edge_id(point_id: PointId) -> Any:
    return normalise_id(point_id)


# Shards one process keeps open: a server that has seen thousands of transcripts must not hold them all
# (each open shard keeps its segments and WAL in memory); the least recently used idle ones are closed.
MAX_OPEN_SHARDS = 64
# Never closed for being idle: read on every analysis.
KEEP_OPEN = frozenset({CORRECTIONS_COLLECTION})
# Shards without an HNSW graph: every read of them is filtered to one user (see _config).
GRAPHLESS = frozenset({CORRECTIONS_COLLECTION})
# Search threads of a transcript's shard (its lists: a few hundred points, one segment). Edge's default is four per
# CPU for every open shard: 8 here, 256 on a 64-core host, times MAX_OPEN_SHARDS. Shards of many transcripts or
# users (MANY_SEGMENTS) keep the default: their reads run over many segments.
TRANSCRIPT_SEARCH_THREADS = 1
MANY_SEGMENTS = frozenset({CORRECTIONS_COLLECTION, SHARED_CANONICAL_COLLECTION})
# Edge's settings file in a shard folder: what the shard was made with (its write-ahead log cannot change after).
EDGE_CONFIG = "edge_config.json"


def _has_wal(name: str) -> bool:
    """Whether a new shard keeps a write-ahead log. A transcript's shard is written once per indexing, so it goes
    without and is flushed after each write instead (`_write`): made, filled and flushed in 25 ms rather than 47 (a
    log and a second segment set up for a list written in one go), as durable when the write returns."""
    return name in MANY_SEGMENTS


def _config(name: str, dim: int, *, wal: bool) -> qe.EdgeConfig:
    """A shard's settings. The corrections memory has no HNSW graph (GRAPHLESS): every read is filtered to one
    user, whose points are scored exactly through the payload index, so a graph over everyone would never be
    read — and building one at a million points ran past 25 minutes of CPU here before it was stopped. A transcript's
    own shard searches on TRANSCRIPT_SEARCH_THREADS and keeps its vectors on disk: kept in RAM, every load of it made
    its 32 MB vector chunk resident for a few points (a shard made before keeps the storage it was made with)."""
    vectors = qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine, on_disk=name not in GRAPHLESS)
    threads = None if name in MANY_SEGMENTS else TRANSCRIPT_SEARCH_THREADS
    if name not in GRAPHLESS:
        one_segment = None if wal else qe.EdgeOptimizersConfig(default_segment_number=1)
        return qe.EdgeConfig(vectors=vectors, max_search_threads=threads, wal_enabled=wal, optimizers=one_segment)
    hnsw = qe.HnswIndexConfig(m=0, ef_construct=100, full_scan_threshold=10_000, payload_m=0)
    return qe.EdgeConfig(vectors=vectors, hnsw_config=hnsw)


class EdgeVectorStore(VectorStore):
    """VectorStore on qdrant-edge-py; one process owns the root folder (Edge locks it)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._shards: OrderedDict[str, qe.EdgeShard] = OrderedDict()  # least recently used first
        self._in_use: Counter[str] = Counter()
        self._held: dict[str, int] = {}  # the lock file of each open shard
        self._unlogged: set[str] = set()  # open shards made without a write-ahead log: flushed after every write
        self._lock = threading.RLock()

    # --- collections ------------------------------------------------------------------
    def _dir(self, name: str) -> Path:
        return self.root / check_collection_name(name)

    def _meta(self, name: str) -> dict[str, Any] | None:
        path = self._dir(name) / META_FILE
        if not path.exists():
            return None
        meta: dict[str, Any] = json.loads(path.read_text())
        return meta

    def _shard(self, name: str) -> qe.EdgeShard:
        with self._lock:
            shard = self._shards.get(name)
            if shard is not None:
                self._shards.move_to_end(name)
                return shard
            meta = self._meta(name)
            if meta is None:
                raise CollectionNotFoundError(f"collection {name!r} does not exist")
            # the settings are applied to a shard made before they existed (graph-less memory, search threads)
            wal = self._made_with_wal(name)
            config = _config(name, int(meta["dim"]), wal=wal)
            self._held[name] = hold_folder(self._dir(name))
            try:
                with translated(f"load {name}"):
                    shard = qe.EdgeShard.load(str(self._dir(name) / "shard"), config)
            except VectorStoreError:
                self._release(name)
                raise
            self._shards[name] = shard
            if not wal:
                self._unlogged.add(name)
            self._close_idle()
            return shard

    def _made_with_wal(self, name: str) -> bool:
        """Whether the shard keeps a write-ahead log (every shard made before `_has_wal` did)."""
        try:
            made = json.loads((self._dir(name) / "shard" / EDGE_CONFIG).read_text())
        except (OSError, ValueError):
            return True
        return made.get("wal_enabled") is not False

    def _close_idle(self, keep: int | None = None) -> int:
        """Keep at most `keep` (MAX_OPEN_SHARDS) open: close the least recently used ones no call is using, never those
        read on every analysis; how many were closed."""
        bound = MAX_OPEN_SHARDS if keep is None else keep
        closed = 0
        for name in list(self._shards):
            if len(self._shards) <= bound:
                break
            if self._in_use[name] or name in KEEP_OPEN:
                continue
            self._close(name, flush=True)
            closed += 1
        return closed

    def _close(self, name: str, *, flush: bool) -> None:
        """Close an open shard and let go of its folder; `flush` only where a write-ahead log holds what is unflushed
        (a shard without one was flushed by its every write, `_write`)."""
        shard = self._shards.pop(name, None)
        logged = name not in self._unlogged
        self._unlogged.discard(name)
        try:
            if shard is not None:
                with translated(f"close {name}"):
                    if flush and logged:
                        shard.flush()
                    shard.close()
        finally:
            self._release(name)

    def _release(self, name: str) -> None:
        fd = self._held.pop(name, None)
        if fd is not None:
            os.close(fd)  # the flock goes with it

    def release_idle(self) -> int:
        """Close every open shard no call is using, but those read on every analysis: each keeps its segments' vector
        chunks mapped (up to 32 MB resident a segment after a rewrite), which a server idle for a while gives back."""
        with self._lock:
            return self._close_idle(keep=0)

    def open_collections(self) -> int:
        """How many shards this process holds open (bounded by MAX_OPEN_SHARDS)."""
        return len(self._shards)

    def _write(self, name: str, what: str, op: Any) -> None:
        """Apply an update; durable on return: logged, or flushed where the shard keeps no log (a transcript's)."""

        def write(shard: qe.EdgeShard) -> None:
            shard.update(op)
            if name in self._unlogged:  # set when the shard was opened (`_run` opens it first)
                shard.flush()

        self._run(name, what, write)

    def _run(self, name: str, what: str, fn: Callable[[qe.EdgeShard], T]) -> T:
        with self._lock:
            shard = self._shard(name)
            self._in_use[name] += 1
        try:
            with translated(f"{what} on {name}"):
                return fn(shard)
        finally:
            with self._lock:
                self._in_use[name] -= 1

    def collection_exists(self, name: str) -> bool:
        """Whether the collection's folder and metadata exist."""
        return self._meta(name) is not None

    def collection_dim(self, name: str) -> int | None:
        """Vector size recorded when the collection was created."""
        meta = self._meta(name)
        return None if meta is None else int(meta["dim"])

    def ensure_collection(self, name: str, dim: int) -> bool:
        """Create the shard with cosine distance unless it exists with the same dimension."""
        with self._lock:
            existing = self.collection_dim(name)
            if existing is not None:
                if existing != dim:
                    raise DimensionMismatchError(name, expected=dim, actual=existing)
                return False
            folder = self._dir(name)
            if folder.exists():  # a half-created folder from a crash: start it again
                shutil.rmtree(folder)
            folder.mkdir(parents=True)
            wal = _has_wal(name)
            config = _config(name, dim, wal=wal)
            self._held[name] = hold_folder(folder)
            try:
                with translated(f"create {name}"):
                    self._shards[name] = qe.EdgeShard.create(str(folder / "shard"), config)
            except VectorStoreError:
                self._release(name)
                raise
            if not wal:
                self._unlogged.add(name)
            (folder / META_FILE).write_text(json.dumps({"dim": dim, "distance": "cosine"}))
            self._close_idle()
            return True

    def drop_collection(self, name: str) -> bool:
        """Close the shard and remove its folder."""
        with self._lock:
            self._close(name, flush=False)
            folder = self._dir(name)
            if not folder.exists():
                return False
            shutil.rmtree(folder)
            return True

    def list_collections(self) -> list[str]:
        """Every folder holding a namesake collection."""
        return sorted(p.name for p in self.root.iterdir() if (p / META_FILE).exists())

    # --- payload indexes --------------------------------------------------------------
    def payload_indexes(self, name: str) -> dict[str, str]:
        """Field -> kind for the payload indexes the shard holds."""
        schema = self._run(name, "info", lambda s: s.info().payload_schema)
        names = {v: k for k, v in _KIND.items()}
        return {f: names.get(info.data_type, str(info.data_type)) for f, info in schema.items()}

    def ensure_payload_index(self, name: str, field_name: str, kind: IndexKind, *, tenant: bool = False) -> bool:
        """Create the index unless present; the tenant flag is a server-side layout hint."""
        if field_name in self.payload_indexes(name):
            return False
        schema: Any = qe.KeywordIndexParams(is_tenant=True) if tenant and kind == "keyword" else _KIND[kind]
        op = qe.UpdateOperation.create_field_index(field_name, schema)
        self._write(name, "create index", op)
        return True

    # --- points -----------------------------------------------------------------------
    def upsert(self, name: str, points: list[VectorPoint]) -> None:
        """Insert or replace points, durable on return (`_write`)."""
        if not points:
            return
        edge_points = wire_points(points, lambda i, v, payload: qe.Point(id=_edge_id(i), vector=v, payload=payload))
        self._write(name, "upsert", qe.UpdateOperation.upsert_points(edge_points))

    def query_batch(
        self, name: str, vectors: Sequence[list[float]], *, limit: int, filters: Sequence[Filter | None]
    ) -> list[list[ScoredHit]]:
        """One planned batch: queries share a pass over the segments."""
        if not vectors:
            return []
        edge_filters: dict[int, qe.Filter | None] = {}  # a batch repeats a few filter objects many times
        requests = []
        for v, f in zip(vectors, filters, strict=True):
            if id(f) not in edge_filters:  # by identity: `filters` holds them alive, and hashing one costs more
                edge_filters[id(f)] = to_edge_filter(f)
            query = qe.Query.Nearest(v)  # the binding reads any sequence of numbers: no copy in Python
            requests.append(
                qe.QueryRequest(
                    limit=limit, query=query, filter=edge_filters[id(f)], with_payload=True, with_vector=False
                )
            )
        answers = self._run(name, "query", lambda s: s.query_batch(qe.QueryBatchRequest(requests)))
        return [
            [ScoredHit(normalise_id(h.id), float(h.score), dict(h.payload or {})) for h in hits] for hits in answers
        ]

    def optimize(self, name: str) -> bool:
        """Run Edge's segment optimizers now: appended points are merged into read-optimised segments (the memory
        read at a million points, 100 candidates back to back: 21 → 13–16 ms p50)."""
        return bool(self._run(name, "optimize", lambda s: s.optimize()))

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
        req = qe.ScrollRequest(
            offset=None if offset is None else _edge_id(offset),
            limit=limit,
            filter=to_edge_filter(flt),
            with_payload=True,
            with_vector=with_vectors,
        )
        records, nxt = self._run(name, "scroll", lambda s: s.scroll(req))
        return [self._point(r, with_vectors) for r in records], None if nxt is None else normalise_id(nxt)

    def retrieve(self, name: str, ids: Sequence[PointId], *, with_vectors: bool = False) -> list[VectorPoint]:
        """Existing points among ids."""
        if not ids:
            return []
        edge_ids = [_edge_id(i) for i in ids]
        records = self._run(
            name, "retrieve", lambda s: s.retrieve(edge_ids, with_payload=True, with_vector=with_vectors)
        )
        return [self._point(r, with_vectors) for r in records]

    @staticmethod
    def _point(record: Any, with_vectors: bool) -> VectorPoint:
        vector = record.vector if with_vectors else None
        if isinstance(vector, dict):  # unnamed dense vector comes back keyed by ""
            vector = next(iter(vector.values()), None)
        return VectorPoint(
            normalise_id(record.id), list(vector) if vector is not None else None, dict(record.payload or {})
        )

    def count(self, name: str, flt: Filter | None = None) -> int:
        """Exact count of points passing the filter."""
        req = qe.CountRequest(exact=True, filter=to_edge_filter(flt))
        return int(self._run(name, "count", lambda s: s.count(req)))

    def set_payload(self, name: str, ids: Sequence[PointId], payload: dict[str, Any]) -> None:
        """Merge keys into the points' payloads."""
        if not ids:
            return
        op = qe.UpdateOperation.set_payload([_edge_id(i) for i in ids], storable(payload))
        self._write(name, "set payload", op)

    def delete(self, name: str, ids: Sequence[PointId]) -> None:
        """Delete by id."""
        if not ids:
            return
        op = qe.UpdateOperation.delete_points([_edge_id(i) for i in ids])
        self._write(name, "delete", op)

    def delete_by_filter(self, name: str, flt: Filter) -> None:
        """Delete every point passing a non-empty filter (an empty one would wipe the collection)."""
        edge_filter = to_edge_filter(flt)
        if edge_filter is None:
            raise VectorStoreError("refusing delete_by_filter with an empty filter")
        self._write(name, "delete by filter", qe.UpdateOperation.delete_points_by_filter(edge_filter))

    def close(self) -> None:
        """Flush and close every open shard."""
        with self._lock:
            for name in list(self._shards):
                self._close(name, flush=True)
