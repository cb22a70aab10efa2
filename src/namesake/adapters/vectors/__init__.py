"""Vector store port and its two adapters; `open_vector_store` picks one from settings."""

from __future__ import annotations

from namesake.adapters.vectors.base import Filter, Match, MatchAny, Range, ScoredHit, VectorPoint, VectorStore
from namesake.core import Settings

__all__ = ["Filter", "Match", "MatchAny", "Range", "ScoredHit", "VectorPoint", "VectorStore", "open_vector_store"]


def open_vector_store(settings: Settings) -> VectorStore:
    """QDRANT_URL selects a server; otherwise the embedded Edge store in the data dir."""
    if settings.qdrant_url:
        from namesake.adapters.vectors.server import ServerVectorStore

        return ServerVectorStore.connect(settings.qdrant_url, settings.qdrant_api_key)
    from namesake.adapters.vectors.edge import EdgeVectorStore

    return EdgeVectorStore(settings.qdrant_store_dir)
