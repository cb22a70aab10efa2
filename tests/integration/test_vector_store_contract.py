"""One contract, two adapters: the embedded Edge store and qdrant-client (`:memory:` for the server path)."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from namesake.adapters.vectors.base import Filter, Match, MatchAny, Range, VectorPoint, VectorStore
from namesake.adapters.vectors.edge import EdgeVectorStore
from namesake.adapters.vectors.server import ServerVectorStore
from namesake.core.errors import (
    CollectionNotFoundError,
    DimensionMismatchError,
    InvalidInputError,
    VectorStoreError,
)

DIM = 8


class LocalModeStore(ServerVectorStore):
    """The server adapter over qdrant-client's local mode, which accepts and ignores payload indexes.

    It remembers the indexes asked for, so the contract reads the same as on a server.
    """

    def __init__(self) -> None:
        from qdrant_client import QdrantClient

        super().__init__(QdrantClient(location=":memory:"))
        self.indexes: dict[str, dict[str, str]] = {}

    def payload_indexes(self, name: str) -> dict[str, str]:
        """What was asked for; a missing collection raises like the server."""
        self.count(name)
        return dict(self.indexes.get(name, {}))

    def ensure_payload_index(self, name: str, field_name: str, kind: str, *, tenant: bool = False) -> bool:  # type: ignore[override]
        """Remember the index (local mode has none to create)."""
        if field_name in self.payload_indexes(name):
            return False
        self.indexes.setdefault(name, {})[field_name] = kind
        return True

    def drop_collection(self, name: str) -> bool:
        """Forget its indexes too."""
        self.indexes.pop(name, None)
        return super().drop_collection(name)


@pytest.fixture(params=["edge", "server"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorStore]:
    s: VectorStore = EdgeVectorStore(tmp_path / "qdrant") if request.param == "edge" else LocalModeStore()
    yield s
    s.close()


def _unit(seed: int) -> list[float]:
    v = np.random.default_rng(seed).normal(size=DIM)
    return (v / np.linalg.norm(v)).tolist()


def _points(n: int, **payload: object) -> list[VectorPoint]:
    return [VectorPoint(uuid.uuid4(), _unit(i), {"i": i, **payload}) for i in range(n)]


def test_ensure_collection_is_idempotent_and_checks_dimension(store: VectorStore) -> None:
    assert store.ensure_collection("c1", DIM) is True
    assert store.ensure_collection("c1", DIM) is False
    assert store.collection_dim("c1") == DIM
    with pytest.raises(DimensionMismatchError) as err:
        store.ensure_collection("c1", 1024)
    assert "1024" in str(err.value) and str(DIM) in str(err.value)
    assert err.value.code == "DIM_MISMATCH"


def test_unknown_collection_and_bad_name(store: VectorStore) -> None:
    assert store.collection_dim("nope") is None
    with pytest.raises(CollectionNotFoundError):
        store.count("nope")
    with pytest.raises(InvalidInputError):
        store.ensure_collection("../escape", DIM)


def test_upsert_query_returns_nearest_with_payload(store: VectorStore) -> None:
    store.ensure_collection("c", DIM)
    pts = _points(20, user_id="u1")
    store.upsert("c", pts)
    hits = store.query("c", pts[7].vector or [], limit=3)
    assert hits[0].id == pts[7].id
    assert hits[0].score == pytest.approx(1.0, abs=1e-4)
    assert hits[0].payload["i"] == 7
    assert len(hits) == 3


def test_filters_keyword_any_range_and_int_flags(store: VectorStore) -> None:
    store.ensure_collection("c", DIM)
    a = _points(5, user_id="alice", promoted=False, until=100)
    b = _points(5, user_id="bob", promoted=True, until=300)
    store.upsert("c", a + b)
    assert store.count("c") == 10
    assert store.count("c", Filter(must=(Match("user_id", "alice"),))) == 5
    # flags are stored as 0/1 ints; a boolean filter value must match them on both backends
    assert store.count("c", Filter(must=(Match("promoted", False),))) == 5
    assert store.count("c", Filter(must=(Match("promoted", True),))) == 5
    assert store.count("c", Filter(must=(MatchAny("user_id", ("alice", "bob")),))) == 10
    assert store.count("c", Filter(must=(Range("until", gt=200),))) == 5
    assert store.count("c", Filter(must_not=(Match("user_id", "bob"),))) == 5
    hits = store.query("c", b[0].vector or [], limit=10, flt=Filter(must=(Match("user_id", "alice"),)))
    assert {h.payload["user_id"] for h in hits} == {"alice"}
    assert all(h.payload["promoted"] == 0 for h in hits)


def test_query_batch_keeps_order_and_filters(store: VectorStore) -> None:
    store.ensure_collection("c", DIM)
    pts = _points(10, user_id="u")
    store.upsert("c", pts)
    out = store.query_batch(
        "c",
        [pts[1].vector or [], pts[2].vector or []],
        limit=1,
        filters=[None, Filter(must=(Match("user_id", "other"),))],
    )
    assert out[0][0].id == pts[1].id
    assert out[1] == []


def test_scroll_pages_past_a_thousand_points(store: VectorStore) -> None:
    store.ensure_collection("c", DIM)
    pts = _points(1500, user_id="u")
    for i in range(0, len(pts), 500):
        store.upsert("c", pts[i : i + 500])
    seen, offset, pages = set(), None, 0
    while True:
        page, offset = store.scroll("c", limit=400, offset=offset)
        seen.update(p.id for p in page)
        pages += 1
        if offset is None:
            break
    assert len(seen) == 1500 and pages == 4
    page, _ = store.scroll("c", limit=2, with_vectors=True)
    assert page[0].vector is not None and len(page[0].vector) == DIM


def test_set_payload_retrieve_delete_and_delete_by_filter(store: VectorStore) -> None:
    store.ensure_collection("c", DIM)
    a, b = _points(3, user_id="alice"), _points(4, user_id="bob")
    store.upsert("c", a + b)
    store.set_payload("c", [a[0].id], {"frequency": 5, "promoted": True})
    got = store.retrieve("c", [a[0].id, uuid.uuid4()])
    assert len(got) == 1 and got[0].payload["frequency"] == 5 and got[0].payload["promoted"] == 1
    assert got[0].payload["user_id"] == "alice"
    store.delete("c", [a[1].id])
    assert store.count("c", Filter(must=(Match("user_id", "alice"),))) == 2
    store.delete_by_filter("c", Filter(must=(Match("user_id", "bob"),)))
    assert store.count("c") == 2
    with pytest.raises(VectorStoreError):
        store.delete_by_filter("c", Filter())


def test_payload_indexes_list_drop(store: VectorStore) -> None:
    store.ensure_collection("mem", DIM)
    store.ensure_collection("other", DIM)
    assert store.ensure_payload_index("mem", "user_id", "keyword", tenant=True) is True
    assert store.ensure_payload_index("mem", "user_id", "keyword", tenant=True) is False
    assert store.ensure_payload_index("mem", "quarantine_until", "integer") is True
    assert set(store.payload_indexes("mem")) == {"user_id", "quarantine_until"}
    assert store.list_collections() == ["mem", "other"]
    assert store.drop_collection("other") is True
    assert store.drop_collection("other") is False
    assert store.list_collections() == ["mem"]


def test_edge_store_survives_reopen(tmp_path: Path) -> None:
    s = EdgeVectorStore(tmp_path / "q")
    s.ensure_collection("c", DIM)
    pts = _points(3, user_id="u")
    s.upsert("c", pts)
    s.close()
    again = EdgeVectorStore(tmp_path / "q")
    assert again.count("c") == 3
    assert again.ensure_collection("c", DIM) is False
    again.close()


def test_a_write_to_an_embedded_shard_is_kept_by_a_process_that_dies_before_closing(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    from namesake.core.settings import CORRECTIONS_COLLECTION

    script = (
        "import os, pathlib; from namesake.adapters.vectors.edge import EdgeVectorStore; "
        f"s = EdgeVectorStore(pathlib.Path({str(tmp_path / 'q')!r})); "
        f"from namesake.adapters.vectors.base import VectorPoint; v = [1.0] + [0.0] * {DIM - 1}; "
        f"[s.ensure_collection(n, {DIM}) for n in ('transcript--t1', {CORRECTIONS_COLLECTION!r})]; "
        "ids = [f'00000000-0000-0000-0000-00000000000{i}' for i in range(1, 4)]; "
        "[s.upsert(n, [VectorPoint(i, v, {'i': i}) for i in ids]) for n in ('transcript--t1', "
        f"{CORRECTIONS_COLLECTION!r})]; s.delete('transcript--t1', ids[2:]); os._exit(0)"
    )
    subprocess.run([sys.executable, "-c", script], check=True)
    made = json.loads((tmp_path / "q" / "transcript--t1" / "shard" / "edge_config.json").read_text())
    assert made["wal_enabled"] is False  # a transcript's shard: flushed on every write instead
    again = EdgeVectorStore(tmp_path / "q")
    assert again.count("transcript--t1") == 2 and again.count(CORRECTIONS_COLLECTION) == 3
    again.close()


def test_a_transcript_shard_made_with_a_write_ahead_log_still_opens_and_takes_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import namesake.adapters.vectors.edge as edge

    with monkeypatch.context() as m:  # made before transcript shards went without: Edge cannot change it after
        m.setattr(edge, "_has_wal", lambda name: True)
        old = EdgeVectorStore(tmp_path / "q")
        old.ensure_collection("transcript--t1", DIM)
        old.upsert("transcript--t1", _points(2))
        old.close()
    again = EdgeVectorStore(tmp_path / "q")
    again.upsert("transcript--t1", _points(1))
    assert again.count("transcript--t1") == 3
    again.close()


def test_an_embedded_store_held_by_another_process_says_so_at_once(tmp_path: Path) -> None:
    import subprocess
    import sys

    from namesake.core.errors import StoreInUseError

    holder = EdgeVectorStore(tmp_path / "qdrant")
    holder.ensure_collection("held", DIM)
    holder.upsert("held", _points(1))
    holder.close()
    script = (
        "import sys, time; from namesake.adapters.vectors.edge import EdgeVectorStore; "
        f"s = EdgeVectorStore(__import__('pathlib').Path({str(tmp_path / 'qdrant')!r})); s.count('held'); "
        "print('holding', flush=True); time.sleep(30)"
    )
    other = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout is not None and other.stdout.readline().strip() == "holding"
        late = EdgeVectorStore(tmp_path / "qdrant")
        with pytest.raises(StoreInUseError) as err:
            late.count("held")
        assert "namesake serve" in err.value.message and err.value.code == "STORE_IN_USE"
    finally:
        other.kill()
        other.wait()


def test_the_embedded_store_keeps_a_bounded_number_of_collections_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import namesake.adapters.vectors.edge as edge

    monkeypatch.setattr(edge, "MAX_OPEN_SHARDS", 3)
    store = EdgeVectorStore(tmp_path / "qdrant")
    for i in range(8):  # a server that has seen many transcripts
        store.ensure_collection(f"t{i}", DIM)
        store.upsert(f"t{i}", _points(2, t=i))
    assert store.open_collections() == 3
    assert [store.count(f"t{i}") for i in range(8)] == [2] * 8  # closed ones reopen on demand, data intact
    assert store.open_collections() == 3
    store.close()


def test_an_idle_embedded_store_lets_go_of_its_collections_but_the_memorys(tmp_path: Path) -> None:
    from namesake.core import CORRECTIONS_COLLECTION

    store = EdgeVectorStore(tmp_path / "qdrant")
    for name in ("t1", "t2", CORRECTIONS_COLLECTION):
        store.ensure_collection(name, DIM)
        store.upsert(name, _points(2))
    mapped = _mapped_segments(tmp_path)
    assert store.open_collections() == 3 and mapped > 0
    assert store.release_idle() == 2
    assert store.open_collections() == 1 and _mapped_segments(tmp_path) < mapped  # their files left the memory
    assert [store.count(n) for n in ("t1", "t2", CORRECTIONS_COLLECTION)] == [2, 2, 2]  # reopened on demand
    store.close()


def test_a_transcripts_collection_reopened_does_not_load_its_vector_files_into_memory(tmp_path: Path) -> None:
    store = EdgeVectorStore(tmp_path / "qdrant")
    store.ensure_collection("t1", DIM)
    store.upsert("t1", _points(3))
    store.close()
    store = EdgeVectorStore(tmp_path / "qdrant")  # a server that closed it (idle, past the open bound) reads it
    assert store.count("t1") == 3
    assert _resident_kb(tmp_path) < 1024  # in RAM it was a 32 MB chunk, resident on every load, for three points
    store.close()


def _resident_kb(root: Path) -> int:
    """Resident kilobytes of the files under `root` that this process maps."""
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
            inside = str(root) in line
        elif inside and line.startswith("Rss:"):
            total += int(line.split()[1])
    return total


def _mapped_segments(root: Path) -> int:
    """How many files under `root` this process maps."""
    return sum(str(root) in line for line in Path("/proc/self/maps").read_text().splitlines())


def _search_threads() -> int:
    """Threads of this process that Edge named for its shards' search pools (a thread may end while they are read)."""
    names = []
    for task in Path("/proc/self/task").iterdir():
        try:
            names.append((task / "comm").read_text())
        except FileNotFoundError:  # the thread ended between the listing and the read
            continue
    return sum(name.startswith("edge-search") for name in names)


def _settled_search_threads(floor: int, seconds: float = 10.0) -> int:
    """The search threads once those of closed shards have ended (down to `floor`), or as they are after `seconds`."""
    deadline = time.monotonic() + seconds
    while (n := _search_threads()) > floor and time.monotonic() < deadline:
        time.sleep(0.05)
    return n


def test_a_transcript_shard_searches_on_one_thread_made_or_reopened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import namesake.adapters.vectors.edge as edge

    before = _search_threads()
    store = EdgeVectorStore(tmp_path / "q")
    for i in range(3):
        store.ensure_collection(f"t{i}", DIM)
        store.upsert(f"t{i}", _points(5, t=i))
    assert _search_threads() - before <= 3 * edge.TRANSCRIPT_SEARCH_THREADS  # Edge's default: 4 per CPU each
    store.close()
    with monkeypatch.context() as m:  # shards made before the setting existed: Edge's default pool
        m.setattr(edge, "TRANSCRIPT_SEARCH_THREADS", None)
        old = EdgeVectorStore(tmp_path / "old")
        for i in range(3):
            old.ensure_collection(f"t{i}", DIM)
            old.upsert(f"t{i}", _points(5, t=i))
        old.close()
    again = EdgeVectorStore(tmp_path / "old")  # reopened with the setting
    assert [len(again.query(f"t{i}", _unit(i), limit=2)) for i in range(3)] == [2, 2, 2]
    assert _search_threads() - before <= 3 * edge.TRANSCRIPT_SEARCH_THREADS
    again.close()
    from namesake.core.settings import SHARED_CANONICAL_COLLECTION

    shared = EdgeVectorStore(tmp_path / "shared")  # many transcripts' lists, many segments: Edge's own pool
    start = _settled_search_threads(before)  # the closed stores' pools end after close() returns, under load later
    shared.ensure_collection(SHARED_CANONICAL_COLLECTION, DIM)
    assert _search_threads() - start > edge.TRANSCRIPT_SEARCH_THREADS
    shared.close()


def test_the_embedded_memory_has_no_graph_and_answers_the_same_once_optimized(tmp_path: Path) -> None:
    import json

    from namesake.core.settings import CORRECTIONS_COLLECTION

    s = EdgeVectorStore(tmp_path / "q")
    s.ensure_collection(CORRECTIONS_COLLECTION, DIM)
    pts = [VectorPoint(uuid.uuid4(), _unit(i), {"user_id": f"u{i % 7}"}) for i in range(3000)]
    for i in range(0, len(pts), 500):
        s.upsert(CORRECTIONS_COLLECTION, pts[i : i + 500])
    queries = [_unit(10_000 + i) for i in range(20)]
    filters = [Filter(must=(Match("user_id", f"u{i % 7}"),)) for i in range(20)]

    def answers(store: EdgeVectorStore) -> list[list[tuple[object, float]]]:
        found = store.query_batch(CORRECTIONS_COLLECTION, queries, limit=3, filters=filters)
        return [[(h.id, round(h.score, 5)) for h in hits] for hits in found]

    before = answers(s)
    assert isinstance(s.optimize(CORRECTIONS_COLLECTION), bool)
    assert answers(s) == before  # exact either way: every read is one user's points, scored through the index
    s.close()
    config = json.loads((tmp_path / "q" / CORRECTIONS_COLLECTION / "shard" / "edge_config.json").read_text())
    assert config["hnsw_config"]["m"] == 0  # no graph over everyone's points: nothing reads one
    again = EdgeVectorStore(tmp_path / "q")
    assert answers(again) == before and again.count(CORRECTIONS_COLLECTION) == 3000
    again.close()
