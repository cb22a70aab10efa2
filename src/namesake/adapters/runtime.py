"""The opened stores and models one process works with; built from settings, closed once."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from namesake.adapters.db import Database, open_database
from namesake.adapters.embeddings import CachedEmbedder, Embedder, build_embedder
from namesake.adapters.remote_llm import LLMProvider, build_llm
from namesake.adapters.vectors import VectorStore, open_vector_store
from namesake.core import NamesakeError, Settings
from namesake.language_model import LocalLanguageModel, build_language_model, model_file
from namesake.reliability import LanguageModel, Window

log = logging.getLogger(__name__)

# what `Runtime.preloaded_language_model` holds until the language model is first asked for
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
    preloaded_language_model: LanguageModel | object | None = field(default=None, repr=False)

    @property
    def language_model(self) -> LanguageModel | None:
        """The language model (None: off, or it cannot load), loaded once per process when first asked for."""
        if self.preloaded_language_model is NOT_LOADED:
            self.preloaded_language_model = build_language_model(self.settings)
        model = self.preloaded_language_model
        return model if isinstance(model, LanguageModel) else None

    @property
    def language_model_on_demand(self) -> LanguageModel | None:
        """The language model for one run, loaded only if the run reads a window (None: off, or it cannot load)."""
        if self.preloaded_language_model is NOT_LOADED:
            # off or missing: said, and the run goes on without it, as when it is loaded
            return LanguageModelOnDemand(self) if model_file(self.settings) is not None else self.language_model
        return self.language_model

    def clear_caches(self) -> None:
        """Forget the vectors the embedder kept and what the language model has read (its windows' gains), and give
        the model runtime's working memory back, if it is loaded: memory back at idle."""
        if isinstance(self.embedder, CachedEmbedder):
            self.embedder.clear_cache()
        model = self.preloaded_language_model
        if not isinstance(model, LanguageModel):
            return
        if hasattr(model, "clear_cache"):
            model.clear_cache()
        if hasattr(model, "release_buffers"):
            model.release_buffers()

    def readiness(self) -> dict[str, str]:
        """Each store "ok" or "failed" (the reason goes to the log): what /readyz answers."""
        checks: dict[str, str] = {}
        for name, probe in (("postgresql", self.db.ping), ("vector_store", self.vectors.list_collections)):
            try:
                probe()
                checks[name] = "ok"
            except NamesakeError as exc:
                log.warning("readiness: %s: %s", name, exc.message)
                checks[name] = "failed"
        return checks

    def close(self) -> None:
        """Release the vector store first (Edge flushes), then the database pool; a weights load still running is
        waited for (a process must not exit under it)."""
        try:
            self.vectors.close()
            self.db.close()
        finally:
            _settle(self.embedder)


def open_runtime(settings: Settings) -> Runtime:
    """Open everything; on a failure part-way, close what was opened before re-raising."""
    embedder = build_embedder(settings)
    if isinstance(embedder, CachedEmbedder):
        embedder.load_in_background()  # ~1.5 s of weights, while PostgreSQL starts
    try:
        db = open_database(settings)
    except BaseException:
        _settle(embedder)
        raise
    try:
        vectors = open_vector_store(settings)
    except BaseException:
        db.close()
        _settle(embedder)  # the store is held by a server: the refusal must not abort on the loader
        raise
    try:
        return Runtime(settings, db, vectors, embedder, build_llm(settings), NOT_LOADED)
    except BaseException:
        vectors.close()
        db.close()
        _settle(embedder)
        raise


def _settle(embedder: object) -> None:
    """Wait for the embedder's background load, when it has one."""
    if isinstance(embedder, CachedEmbedder):
        embedder.settle()


class LanguageModelOnDemand:
    """The runtime's language model, loaded at the first windows a run asks it to read: a run that reads none (a short
    transcript of rare names) never pays for loading it (~2 s and ~0.5 GB)."""

    name = LocalLanguageModel.name

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime

    def gains(self, windows: Sequence[Window]) -> list[float]:
        """The model's gains; where it cannot load after all (a corrupt file, said once in the log), no opinion: 0."""
        model = self._runtime.language_model
        return model.gains(windows) if model is not None else [0.0] * len(windows)
