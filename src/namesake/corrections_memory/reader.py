"""The memory's boost: candidates the user corrected before — one batch embedding, one batched query, fail-soft."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime

from namesake.adapters import Embedder, VectorStore
from namesake.core import CORRECTIONS_COLLECTION, EmbedderError, Settings, VectorStoreError
from namesake.corrections_memory.scope import memory_filter
from namesake.domain import Candidate
from namesake.reliability import BoostParams, BoostStats, boost_for, take_remembered_final

log = logging.getLogger(__name__)


class CorrectionsMemoryReader:
    """Implements the pipeline's MemoryBooster port over the shared corrections collection."""

    def __init__(
        self,
        store: VectorStore,
        embedder: Embedder,
        settings: Settings,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        on_error: Callable[[], None] | None = None,
    ) -> None:
        self.store, self.embedder, self.clock = store, embedder, clock
        self.params = BoostParams.from_settings(settings)
        self.on_error = on_error

    def _embed(self, texts: list[str]) -> list[list[float]]:
        """Vectors of the texts (the embedder keeps the ones it has seen: originals recur across analyses)."""
        return [v.tolist() for v in self.embedder.embed(texts)]

    def boost(self, user_id: str, candidates: list[Candidate], *, exclude: frozenset[str] = frozenset()) -> BoostStats:
        """Add `memory_bonus` to candidates whose original the user corrected; propose that final if it differs.

        Corrections whose original is in `exclude` (scoped to other calls) are not read.
        """
        stats = BoostStats(queried=len(candidates))
        if not candidates:
            return stats
        now = int(self.clock().timestamp())
        # one query per distinct (original, type): a transcript repeats the same mis-heard name
        keys = list(dict.fromkeys((c.original, c.entity_type) for c in candidates))
        by_kind = {
            kind: memory_filter(
                user_id, entity_type=kind, embedding_model=self.embedder.name, quarantine_after=now,
                exclude_promoted=True, exclude_originals=exclude,
            )
            for kind in {kind for _, kind in keys}
        }  # fmt: skip
        filters = [by_kind[kind] for _, kind in keys]
        try:
            vectors = self._embed([original for original, _ in keys])
            found = self.store.query_batch(CORRECTIONS_COLLECTION, vectors, limit=1, filters=filters)
        except (VectorStoreError, EmbedderError) as exc:
            # Fail-soft: the run goes on without the memory; counted and logged once per run.
            stats.errors += 1
            log.warning("corrections memory unavailable for this run: %s", exc.message)
            if self.on_error is not None:
                self.on_error()
            return stats
        by_key = dict(zip(keys, found, strict=True))
        answers = [by_key[(c.original, c.entity_type)] for c in candidates]
        for cand, hits in zip(candidates, answers, strict=True):
            if not hits:
                continue
            hit = hits[0]
            bonus = boost_for(hit.score, int(hit.payload.get("frequency", 1)), self.params)
            if bonus <= 0:
                continue
            take_remembered_final(cand, str(hit.payload.get("final", "")))
            cand.memory_bonus, cand.memory_score = round(bonus, 4), round(hit.score, 4)
            stats.boosted += 1
        return stats
