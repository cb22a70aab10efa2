"""The opened stores and models one process works with; built from settings, closed once."""

from __future__ import annotations

from dataclasses import dataclass, field

from namesake.adapters.db import Database, open_database
from namesake.adapters.embeddings import CachedEmbedder, Embedder, build_embedder
from namesake.adapters.remote_llm import LLMProvider, build_llm
from namesake.adapters.vectors import VectorStore, open_vector_store
from namesake.core.settings import Settings
from namesake.language_model.scorer import build_language_model
from namesake.reliability.ports import LanguageModel

# what `Runtime.preloaded_context_model` holds until the language model is first asked for
NOT_LOADED = object()


@dataclass
class Runtime:
    """PostgreSQL, the vector store, the embedder, the optional LLM and the language model, opened together."""

    settings: Settings
    db: Database
    vectors: VectorStore
    embedder: Embedder
    llm: LLMProvider | None
    # loaded on first use: a process that hands the stages to workers (`analyze --workers`) never pays for it
    preloaded_context_model: LanguageModel | object | None = field(default=None, repr=False)

    @property
    def language_model(self) -> LanguageModel | None:
        """The language model (None: off, or it cannot load), loaded once per process when first asked for."""
        if self.preloaded_context_model is NOT_LOADED:
            self.preloaded_context_model = build_language_model(self.settings)
        model = self.preloaded_context_model
        return model if isinstance(model, LanguageModel) else None

    def close(self) -> None:
        """Release the vector store first (Edge flushes), then the database pool."""
        self.vectors.close()
        self.db.close()


def open_runtime(settings: Settings) -> Runtime:
    """Open everything; on a failure part-way, close what was opened before re-raising."""
    embedder = build_embedder(settings)
    if isinstance(embedder, CachedEmbedder):
        embedder.load_in_background()  # ~1.5 s of weights, while PostgreSQL starts
    db = open_database(settings)
    try:
        vectors = open_vector_store(settings)
    except BaseException:
        db.close()
        raise
    try:
        return Runtime(settings, db, vectors, embedder, build_llm(settings), NOT_LOADED)
    except BaseException:
        vectors.close()
        db.close()
        raise
