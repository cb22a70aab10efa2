"""Integration fixtures: an opened runtime on the scratch database and a private embedded Qdrant store."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from namesake.db import Database
from namesake.embeddings import Embedder
from namesake.runtime import Runtime
from namesake.settings import Settings
from namesake.vectors.edge import EdgeVectorStore


@pytest.fixture
def runtime(settings: Settings, db: Database, embedder: Embedder) -> Iterator[Runtime]:
    """Real PostgreSQL (emptied), a fresh Qdrant Edge store, the bundled embedder, no LLM."""
    store = EdgeVectorStore(settings.qdrant_store_dir)
    rt = Runtime(settings, db, store, embedder, None)
    yield rt
    store.close()
