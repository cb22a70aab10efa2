"""A fresh database, data folder and `namesake serve` on them, for the benches that drive a real server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import create_engine, text

from namesake.adapters.db import sqlalchemy_url
from namesake.adapters.vectors.edge import EdgeVectorStore
from namesake.core.settings import CORRECTIONS_COLLECTION

ADMIN, ACME, BETA = "bench-admin", "bench-acme", "bench-beta"
KEYS = f"{ADMIN},{ACME}:tenant-acme,{BETA}:tenant-beta"


def auth(key: str) -> dict[str, str]:
    """The bearer header of a key."""
    return {"Authorization": f"Bearer {key}"}


@dataclass
class Stack:
    """A fresh database and data folder, and the server running on them."""

    url: str
    data: Path
    port: int
    server: subprocess.Popen[bytes] | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        return os.environ | {
            "DATABASE_URL": self.url,
            "NAMESAKE_DATA_DIR": str(self.data),
            "NAMESAKE_API_KEYS": KEYS,
            "NAMESAKE_JOBS_ENABLED": "false",
        }

    def start(self) -> None:
        """Start the server; like an orchestrator, start it again if it dies before it is ready."""
        cli = str(Path(sys.executable).parent / "namesake")
        t0 = time.monotonic()
        while time.monotonic() - t0 < 300:
            if self.server is None or self.server.poll() is not None:
                self.server = subprocess.Popen(
                    [cli, "serve", "--port", str(self.port)],
                    env=self.env(),
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            try:
                if httpx.get(f"{self.base}/readyz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise SystemExit("the server did not become ready")

    def kill(self) -> None:
        if self.server is not None and self.server.poll() is None:
            self.server.send_signal(signal.SIGKILL)
            self.server.wait()

    def stop(self) -> None:
        if self.server is not None and self.server.poll() is None:
            self.server.terminate()
            self.server.wait(timeout=60)

    def sql(self, query: str, **params: Any) -> list[Any]:
        engine = create_engine(sqlalchemy_url(self.url))
        try:
            with engine.begin() as conn:
                return list(conn.execute(text(query), params).all())
        finally:
            engine.dispose()

    def points(self) -> dict[str, dict[str, Any]]:
        """Every corrections point (server stopped: the embedded store is this process's then)."""
        store = EdgeVectorStore(self.data / "qdrant")
        out: dict[str, dict[str, Any]] = {}
        try:
            offset = None
            while True:
                page, offset = store.scroll(CORRECTIONS_COLLECTION, limit=1000, offset=offset)
                out.update({str(p.id): p.payload for p in page})
                if offset is None:
                    return out
        finally:
            store.close()


@contextmanager
def stack(server_url: str) -> Iterator[Stack]:
    """A scratch database on the server of DATABASE_URL and a temporary data folder, dropped after."""
    name = f"namesake_bench_{uuid.uuid4().hex[:8]}"
    admin = create_engine(sqlalchemy_url(server_url), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    with tempfile.TemporaryDirectory() as tmp:
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        st = Stack(server_url.rsplit("/", 1)[0] + f"/{name}", Path(tmp) / "data", port)
        try:
            yield st
        finally:
            st.stop()
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            admin.dispose()


def fix(user: str, original: str, transcript: str, final: str | None = None) -> dict[str, Any]:
    """A manual correction body whose span holds `original`."""
    sentence = f"We met {original} about the numbers."
    return {
        "user_id": user,
        "transcript_id": transcript,
        "segment_id": "1",
        "start_char": 7,
        "end_char": 7 + len(original),
        "original": original,
        "final": final or f"{original} Inc",
        "entity_type": "ORG",
        "segment_text": sentence,
    }


def consistency(st: Stack) -> dict[str, int]:
    """Orphan points, active rows without a point, duplicate active rows (server stopped)."""
    rows = st.sql("SELECT qdrant_point_id::text, status FROM correction_mirror")
    points = st.points()
    active = {p for p, s in rows if s == "active"}
    dup = st.sql(
        "SELECT count(*) FROM (SELECT 1 FROM correction_mirror WHERE status = 'active' "
        "GROUP BY user_id, entity_type, original_norm HAVING count(*) > 1) d"
    )[0][0]
    return {
        "orphan_points": len(set(points) - {p for p, _ in rows}),
        "active_rows_without_point": len(active - set(points)),
        "duplicate_active_rows": int(dup),
    }
