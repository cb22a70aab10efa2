"""Warm before ready: what the first requests would pay for is paid by start-up."""

from __future__ import annotations

from namesake.adapters.runtime import Runtime
from namesake.app.warmup import POOL_CONNECTIONS, warm_up
from namesake.corrections_memory.bootstrap import CorrectionsMemoryBootstrap
from namesake.reliability.context import word_pairs


def test_warm_up_loads_the_models_and_opens_the_pool(runtime: Runtime) -> None:
    CorrectionsMemoryBootstrap(runtime.vectors, runtime.embedder, runtime.settings).ensure_collection()
    runtime.db.engine.dispose()  # a fresh pool, as after start-up
    took = warm_up(runtime)
    assert set(took) == {"embedder", "pipeline", "language_model", "postgresql_pool", "corrections_shard"}
    assert runtime.db.engine.pool.checkedin() >= POOL_CONNECTIONS  # type: ignore[attr-defined]
    assert word_pairs.cache_info().currsize >= 1  # the English word lists are in memory
