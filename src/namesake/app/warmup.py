"""Pay at start-up what the first requests would otherwise pay: weights, word lists, pool, shards."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from namesake.adapters import Runtime
from namesake.analysis import StageProcess
from namesake.core import CORRECTIONS_COLLECTION, NamesakeError
from namesake.corrections_memory import memory_filter
from namesake.language_model import warm_read
from namesake.reliability import warm_stages

log = logging.getLogger(__name__)
# Connections opened ahead: as many as the pool keeps (db.py: pool_size=10).
POOL_CONNECTIONS = 10


def warm_up(rt: Runtime, stages: StageProcess | None = None) -> dict[str, float]:
    """Load the embedder, the word lists and the scorer (or wait for the stage process to have), open the pool and
    the corrections shard.

    Called by the app's lifespan before it serves, so `/readyz` answers only once this is done. A store
    that fails here is logged, not fatal: readiness reports it. Returns the seconds each part took.
    """
    took: dict[str, float] = {}

    def part(name: str, fn: Callable[[], object]) -> None:
        t0 = time.perf_counter()
        try:
            fn()
        except NamesakeError as exc:
            log.warning("warm-up: %s failed: %s", name, exc.message)
        took[name] = round(time.perf_counter() - t0, 3)

    def language_model() -> None:  # compiled, and its first inference's buffers allocated (~0.3 s), before a request
        model = rt.language_model
        if model is not None:
            warm_read(model)

    # the encoder's first product before OpenVINO starts its threads (beside them, OpenBLAS's first call once hung
    # the start); then the model compiles in OpenVINO's threads, mostly outside the interpreter, beside the word lists
    part("embedder", lambda: rt.embedder.embed(["warm up"]))
    if stages is not None:  # the model and the stages' tables are the child's, loading since the app started
        part("stage_process", stages.wait_ready)
    else:
        with ThreadPoolExecutor(1, thread_name_prefix="warm-lm") as beside:
            compiled = beside.submit(part, "language_model", language_model)
            part("pipeline", lambda: warm_stages(rt.settings))
            compiled.result()

    def pool() -> None:
        with ThreadPoolExecutor(POOL_CONNECTIONS) as ex:
            list(ex.map(lambda _: rt.db.ping(hold_seconds=0.05), range(POOL_CONNECTIONS)))

    part("postgresql_pool", pool)

    def shard() -> None:
        if rt.vectors.collection_exists(CORRECTIONS_COLLECTION):
            vector = rt.embedder.embed(["warm up"])[0].tolist()
            rt.vectors.query(CORRECTIONS_COLLECTION, vector, limit=1, flt=memory_filter("warm-up"))

    part("corrections_shard", shard)
    log.info("warm-up done: %s", took)
    return took
