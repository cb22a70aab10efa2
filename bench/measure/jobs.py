"""Jobs at scale: promotion of 100k corrections and GDPR erasure of a user holding 10k, on the embedded stack.

Usage: python -m bench.measure.jobs [--corrections 100000] [--user-corrections 10000]
Targets (issue): promotion ≤ 60 s, erasure ≤ 2 s. The per-row baseline promotes the same rows one
statement and one vector-store call at a time, as a first implementation would (on a sample, scaled).
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
from sqlalchemy import insert, text, update

from namesake.adapters.models import CorrectionMirror
from namesake.adapters.runtime import open_runtime
from namesake.adapters.vectors.base import VectorPoint
from namesake.core.settings import CORRECTIONS_COLLECTION, Settings
from namesake.corrections_memory.bootstrap import CorrectionsMemoryBootstrap
from namesake.jobs import Jobs, RuntimeJobWork


def load(runtime, n: int, heavy_user: str, heavy: int) -> list[uuid.UUID]:  # type: ignore[no-untyped-def]
    """n eligible corrections over n/10 users, `heavy` of them for heavy_user; points with random vectors."""
    rng = np.random.default_rng(1)
    past = datetime.now(UTC) - timedelta(days=1)
    users = [heavy_user if i < heavy else f"user{i % max(1, n // 10)}" for i in range(n)]
    with runtime.db.engine.begin() as conn:
        conn.execute(text("INSERT INTO users (id) SELECT DISTINCT unnest(CAST(:u AS text[])) ON CONFLICT DO NOTHING"),
                     {"u": sorted(set(users))})  # fmt: skip
    ids = [uuid.uuid4() for _ in range(n)]
    for start in range(0, n, 5000):
        rows = [
            {"qdrant_point_id": ids[i], "user_id": users[i], "entity_type": "ORG", "original": f"o{i}",
             "original_norm": f"o{i}", "final": f"Value {i % 5000}", "final_norm": f"value {i % 5000}",
             "action": "accept", "frequency": 4, "quarantine_until": past, "status": "active",
             "embedding_model": runtime.embedder.name, "embedding_model_version": runtime.embedder.version}
            for i in range(start, min(n, start + 5000))
        ]  # fmt: skip
        with runtime.db.session() as s:
            s.execute(insert(CorrectionMirror), rows)
        vecs = rng.normal(size=(len(rows), runtime.embedder.dim)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        runtime.vectors.upsert(
            CORRECTIONS_COLLECTION,
            [VectorPoint(r["qdrant_point_id"], v.tolist(), {"user_id": r["user_id"], "entity_type": "ORG",
             "frequency": 4, "promoted_to_canonical": 0}) for r, v in zip(rows, vecs, strict=True)],
        )  # fmt: skip
    return ids


def per_row_baseline(runtime, ids: list[uuid.UUID], sample: int) -> float:  # type: ignore[no-untyped-def]
    """Seconds per correction when promoting one row at a time (measured on `sample` rows)."""
    t0 = time.perf_counter()
    for pid in ids[:sample]:
        with runtime.db.session() as s:
            s.execute(update(CorrectionMirror).where(CorrectionMirror.qdrant_point_id == pid)
                      .values(promoted_to_canonical=False))  # fmt: skip
        runtime.vectors.set_payload(CORRECTIONS_COLLECTION, [pid], {"promoted_to_canonical": False})
    return (time.perf_counter() - t0) / sample


def main() -> None:
    """Load, time the per-row baseline on a sample, promote everything, erase the heavy user; print a table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corrections", type=int, default=100_000)
    ap.add_argument("--user-corrections", type=int, default=10_000)
    a = ap.parse_args()
    settings = Settings(namesake_data_dir=Path(tempfile.mkdtemp(prefix="namesake-jobs-")),
                        reliability_corrections_memory_promo_batch_size=2000,
                        reliability_corrections_memory_promo_alert_threshold=10**9)  # fmt: skip
    runtime = open_runtime(settings)
    CorrectionsMemoryBootstrap(runtime.vectors, runtime.embedder, settings).ensure_collection()
    t0 = time.perf_counter()
    ids = load(runtime, a.corrections, "heavy-user", a.user_corrections)
    load_s = time.perf_counter() - t0
    per_row = per_row_baseline(runtime, ids, 500)
    t0 = time.perf_counter()
    report = Jobs(RuntimeJobWork(runtime)).promote().report
    promo_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    receipt = Jobs(RuntimeJobWork(runtime)).erase_user("heavy-user")
    erase_s = time.perf_counter() - t0
    runtime.close()
    print(f"\n### jobs on the embedded stack ({a.corrections} corrections loaded in {load_s:.1f} s)\n")
    print("| job | size | seconds | target | per-row baseline (est.) | × baseline |\n|---|---|---|---|---|---|")
    est = per_row * a.corrections
    print(f"| promotion | {report.promoted} corrections, {report.pages} pages | {promo_s:.1f} | ≤ 60 | "
          f"{est:.0f} | {est / promo_s:.1f} |")  # fmt: skip
    print(f"| erasure | user with {receipt.deleted['qdrant_points']} points, "
          f"{receipt.deleted['rows']['corrections']} rows | {erase_s:.2f} | ≤ 2 | - | - |")  # fmt: skip
    print(f"\nerasure receipt remaining: {receipt.remaining}; global entries: {report.global_entries}")


if __name__ == "__main__":
    main()
