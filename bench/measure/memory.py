"""Memory: write and boost latency of the corrections memory as it grows, on the embedded store.

The store is filled to each size with corrections spread over 1,000 users: the mirror rows in PostgreSQL
(one INSERT … SELECT) and the points in Qdrant Edge (batched upserts; random unit vectors, since
embedding a million texts would measure the embedder, not the memory). Then the store's segments are
optimized, as the daily reconciliation does (Edge never does it by itself), and for a user with a
realistic memory, it times:
- write: one correction recorded through `CorrectionsMemoryWriter.record` (what POST /v1/corrections does);
- boost: the memory stage for 100 candidates, as the pipeline runs it (one batched embedding of the
  originals it has not embedded before, and one batched filtered query), against the same 100 done one by
  one; and the same stage for 100 originals never seen before (the embedder's time included).

Usage: python -m bench.measure.memory [--sizes 10000 100000 1000000] [--runs 30] [--data-dir DIR]
(On a fresh embedded PostgreSQL and Qdrant Edge in a temporary folder: it writes a million rows, ~10 min.
With --data-dir, a folder filled by an earlier run is topped up to each size instead of filled again.)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
from sqlalchemy import text

from namesake.adapters.runtime import Runtime, open_runtime
from namesake.adapters.vectors.base import VectorPoint
from namesake.app.services import build_services
from namesake.core.settings import CORRECTIONS_COLLECTION, Settings
from namesake.corrections_memory.writer import CorrectionInput
from namesake.domain.types import Candidate, CandidateSource, ReviewAction

USERS = 1000
BATCH = 2000
CANDIDATES = 100


def pct(xs: list[float], q: float) -> float:
    """The q-quantile (nearest rank), in milliseconds."""
    xs = sorted(xs)
    return 1000 * xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


def point_payload(i: int, quarantine: int, model: str) -> dict[str, object]:
    """The payload of stored correction i, as the writer lays one out (the fields the reads filter on)."""
    return {
        "user_id": f"user-{i % USERS}", "entity_type": "ORG", "original": f"heard {i}", "final": f"Meant {i}",
        "frequency": 1, "promoted_to_canonical": 0, "quarantine_until": quarantine, "embedding_model": model,
    }  # fmt: skip


def fill(runtime: Runtime, start: int, stop: int) -> None:
    """Corrections start..stop-1 over USERS users, in both stores, the way the writer lays them out."""
    model, version = runtime.embedder.name, runtime.embedder.version
    quarantine = int(time.time()) + 30 * 86400
    with runtime.db.session() as s:
        s.execute(
            text("INSERT INTO users (id) SELECT 'user-' || g FROM generate_series(0, :n - 1) g ON CONFLICT DO NOTHING"),
            {"n": USERS},
        )
    rng = np.random.default_rng(start)
    for lo in range(start, stop, BATCH):
        hi = min(stop, lo + BATCH)
        ids = [uuid.uuid5(uuid.NAMESPACE_URL, f"bench-memory/{i}") for i in range(lo, hi)]
        vectors = rng.normal(size=(hi - lo, runtime.embedder.dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        points = [
            VectorPoint(pid, v.tolist(), point_payload(i, quarantine, model))
            for i, pid, v in zip(range(lo, hi), ids, vectors, strict=True)
        ]
        runtime.vectors.upsert(CORRECTIONS_COLLECTION, points)
        with runtime.db.session() as s:
            s.execute(
                text(
                    "INSERT INTO correction_mirror (qdrant_point_id, user_id, entity_type, original, "
                    "original_norm, final, final_norm, action, quarantine_until, embedding_model, "
                    "embedding_model_version) SELECT (CAST(:ids AS text[]))[g - :lo + 1]::uuid, "
                    "'user-' || (g % :users), 'ORG', 'heard ' || g, 'heard ' || g, 'Meant ' || g, 'meant ' || g, "
                    "'manual', now() + interval '30 days', :model, :version FROM generate_series(:lo, :hi - 1) g"
                ),
                {"ids": [str(i) for i in ids], "lo": lo, "hi": hi, "users": USERS, "model": model, "version": version},
            )
        print(f"\rfilling: {hi:,} corrections", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)


def filled(runtime: Runtime) -> int:
    """How many of the bench's own corrections the store already holds (an earlier run's, with --data-dir)."""
    with runtime.db.session() as s:
        query = "SELECT count(*) FROM correction_mirror WHERE original LIKE 'heard %'"
        return int(s.execute(text(query)).scalar_one())


def measure(runtime: Runtime, size: int, runs: int) -> dict[str, float]:
    """Write, batched boost and one-by-one boost latencies at the current size."""
    services = build_services(runtime)
    reader = services.analysis.booster
    assert reader is not None
    writer = services.writer
    words = ["Cytova", "Reiner", "Backman", "Zorblax", "Mitnou", "Danaher", "Beckman", "Cepheid", "Illumina", "Qiagen"]
    user = "user-7"
    for w in words:  # the user has a memory of their own: the boost finds real neighbours among the noise
        taught = CorrectionInput(
            user_id=user, entity_type="ORG", original=w, final=w.upper(), action=ReviewAction.MANUAL
        )
        writer.record(taught)
    cands = [Candidate("s", 0, 5, f"{words[i % len(words)]}{i // len(words) or ''}", "?", "ORG", CandidateSource.LISTS)
             for i in range(CANDIDATES)]  # fmt: skip
    writes, batched, single, cold = [], [], [], []
    for r in range(runs):
        fix = CorrectionInput(user_id=f"user-{r % USERS}", entity_type="ORG", original=f"bench {size} {r}",
                              final=f"Bench {r}", action=ReviewAction.MANUAL)  # fmt: skip
        t0 = time.perf_counter()
        writer.record(fix)
        writes.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        reader.boost(user, cands)
        batched.append(time.perf_counter() - t0)
        unseen = [Candidate("s", 0, 5, f"{c.original} {size} {r}", "?", "ORG", CandidateSource.LISTS) for c in cands]
        t0 = time.perf_counter()
        reader.boost(user, unseen)  # originals never embedded before: the embedder's time included
        cold.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        for c in cands:
            reader.boost(user, [c])
        single.append(time.perf_counter() - t0)
    return {
        "write_p50": pct(writes, 0.5), "write_p95": pct(writes, 0.95),
        "boost_p50": pct(batched, 0.5), "boost_p95": pct(batched, 0.95),
        "one_by_one_p50": pct(single, 0.5), "one_by_one_p95": pct(single, 0.95),
        "cold_p50": pct(cold, 0.5), "cold_p95": pct(cold, 0.95),
    }  # fmt: skip


def main() -> None:
    """Fill to each size in turn and print one table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--data-dir", type=Path, help="keep the filled store here and reuse it next time")
    a = ap.parse_args()
    folder = a.data_dir or Path(tempfile.mkdtemp(prefix="namesake-memory-"))
    settings = Settings(namesake_data_dir=folder, database_url=None, llm_provider="none")
    runtime = open_runtime(settings)
    rows = []
    optimized: dict[int, float] = {}
    try:
        build_services(runtime)  # bootstrap: the collection and its payload indexes
        have = filled(runtime)
        for size in sorted(a.sizes):
            if size > have:
                fill(runtime, have, size)
                have = size
            t0 = time.perf_counter()  # as the daily reconciliation does: Edge never compacts by itself
            runtime.vectors.optimize(CORRECTIONS_COLLECTION)
            optimized[size] = time.perf_counter() - t0
            rows.append((size, measure(runtime, size, a.runs)))
    finally:
        runtime.close()
    print(f"\n### corrections memory on the embedded store: {USERS:,} users, {CANDIDATES} candidates, {a.runs} runs\n")
    print("| stored | write p50 ms | write p95 ms | boost p50 ms | boost p95 ms | boost, new originals p50 / p95 ms "
          "| one by one p50 ms | one by one p95 ms |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for size, m in rows:
        cold = f"{m['cold_p50']:.1f} / {m['cold_p95']:.1f}"
        timed = [f"{m[k]:.1f}" for k in ("write_p50", "write_p95", "boost_p50", "boost_p95")]
        cells = [f"{size:,}", *timed, cold, f"{m['one_by_one_p50']:.1f}", f"{m['one_by_one_p95']:.1f}"]
        print("| " + " | ".join(cells) + " |")
    print("\nsegments optimized before measuring (what the daily reconciliation runs): "
          + ", ".join(f"{size:,} in {sec:.1f} s" for size, sec in optimized.items()))  # fmt: skip


if __name__ == "__main__":
    main()
