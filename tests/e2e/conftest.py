"""The API's tests: one key, its header, and an in-process client of the real app on the real stores."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from namesake.api.app import create_app
from namesake.core.settings import Settings
from tests.conftest import MakeRuntime, tuned

KEY = "test-key"
AUTH = {"Authorization": f"Bearer {KEY}"}


@pytest.fixture
def client(settings: Settings, make_runtime: MakeRuntime) -> Iterator[TestClient]:
    """The app with KEY accepted; a test module may define its own `client` instead."""
    s = tuned(settings, namesake_api_keys=[KEY])
    with TestClient(create_app(s, make_runtime(s))) as c:
        yield c


@pytest.fixture
def bounded_client(settings: Settings, make_runtime: MakeRuntime) -> Iterator[TestClient]:
    """The app with KEY accepted and small bounds (50 segments, 200 kB): what the limits tests cross."""
    s = tuned(settings, namesake_api_keys=[KEY], max_segments=50, max_request_bytes=200_000)
    with TestClient(create_app(s, make_runtime(s))) as c:
        yield c
