"""The suite writes its rebuilt files in a folder of its own, never in the user's cache."""

from __future__ import annotations

import os
from pathlib import Path

from namesake.core.settings import Settings, default_cache_dir
from tests.conftest import SUITE_CACHE


def test_the_suite_never_writes_in_the_users_cache() -> None:
    where = Settings().namesake_cache_dir.resolve()
    assert where != default_cache_dir().resolve()
    if os.environ["NAMESAKE_CACHE_DIR"] == str(SUITE_CACHE):  # unless the runner named another folder on purpose
        assert where == SUITE_CACHE and Path(__file__).resolve().parents[2] in where.parents
