"""Integration fixtures: an opened runtime on the scratch database and a private embedded Qdrant store."""

from __future__ import annotations

import pytest

from namesake.adapters.runtime import Runtime
from namesake.core.settings import Settings
from tests.conftest import MakeRuntime


@pytest.fixture
def runtime(settings: Settings, make_runtime: MakeRuntime) -> Runtime:
    """Real PostgreSQL (emptied), a fresh Qdrant Edge store, the bundled embedder, no LLM."""
    return make_runtime(settings)
