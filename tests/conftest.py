"""Shared fixtures: real PostgreSQL (DATABASE_URL or embedded), real embedded Qdrant, real embedder."""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from namesake.adapters.db import Database, open_database, sqlalchemy_url
from namesake.adapters.embeddings import Embedder
from namesake.adapters.runtime import Runtime
from namesake.adapters.vectors.base import VectorStore
from namesake.adapters.vectors.edge import EdgeVectorStore
from namesake.analysis.service import AnalysisService
from namesake.analysis.stores import SqlAnalysisStores
from namesake.core.settings import Settings
from namesake.corrections_memory.promotion import promoted_vocabulary
from namesake.language_model.local import build_language_model
from namesake.reliability.pipeline import MemoryBooster
from namesake.transcripts.canonical_index import CanonicalListReader
from namesake.transcripts.store import TranscriptStore

# The suite's own cache of rebuilt files (the compiled language model, the encoder's arrays): never the user's
# (~/.cache/namesake), which a test run must leave as it found it. Kept between runs, as the user cache is.
SUITE_CACHE = Path(__file__).resolve().parents[1] / ".test-cache"
os.environ.setdefault("NAMESAKE_CACHE_DIR", str(SUITE_CACHE))

TABLES = "erased_users, job_runs, canonical_vocabulary, correction_mirror, suggestions, transcripts, users"


def _scratch_database(server_url: str) -> tuple[str, str]:
    """Create an empty database beside the one in server_url, so tests never touch real data."""
    name = f"namesake_test_{uuid.uuid4().hex[:10]}"
    admin = create_engine(sqlalchemy_url(server_url), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    base, _, _query = server_url.partition("?")
    prefix = base.rsplit("/", 1)[0]
    return f"{prefix}/{name}" + (f"?{_query}" if _query else ""), name


@pytest.fixture(scope="session")
def pg_server_url() -> Iterator[str]:
    """DATABASE_URL when set (CI: the machine's PostgreSQL), else an embedded pgserver."""
    url = os.environ.get("DATABASE_URL")
    if url:
        yield url
        return
    from namesake.adapters.db import start_embedded_postgres

    # a folder of this run's own, not under pytest's temporary root: every root pytest run on the machine shares
    # that root, and another run resetting its modes would stop this server (it runs as its own user)
    own = Path(tempfile.mkdtemp(prefix="namesake-test-pg-"))
    own.chmod(0o755)
    url, handle = start_embedded_postgres(own / "data")
    yield url
    handle.cleanup()
    shutil.rmtree(own, ignore_errors=True)


@pytest.fixture(scope="session")
def database_url(pg_server_url: str) -> Iterator[str]:
    """A scratch database, created for this test session and dropped after it."""
    url, name = _scratch_database(pg_server_url)
    yield url
    admin = create_engine(sqlalchemy_url(pg_server_url), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture(scope="session")
def _migrated_db(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Database]:
    settings = Settings(database_url=database_url, namesake_data_dir=tmp_path_factory.mktemp("data"))
    db = open_database(settings)
    yield db
    db.close()


@pytest.fixture
def db(_migrated_db: Database) -> Iterator[Database]:
    """The migrated scratch database, emptied before each test (threads in tests need real commits)."""
    with _migrated_db.engine.begin() as conn:
        conn.execute(text(f"TRUNCATE {TABLES} RESTART IDENTITY CASCADE"))
    yield _migrated_db


@pytest.fixture
def settings(tmp_path: Path, database_url: str) -> Settings:
    """Settings for one test: scratch database, a private data dir for the embedded Qdrant store; an app's stages
    run in its own process (the tests of the server's stage process turn it on)."""
    return Settings(database_url=database_url, namesake_data_dir=tmp_path / "data", analysis_stage_process=False)


def tuned(settings: Settings, **update: object) -> Settings:
    """The settings with some values changed, through the validators (model_copy(update=…) skips them)."""
    return Settings.model_validate({**settings.model_dump(), **update})


def retuned(rt: Runtime, **update: object) -> Runtime:
    """The same stores under settings with some values changed (through the validators)."""
    return dataclasses.replace(rt, settings=tuned(rt.settings, **update))


def analysis_service(rt: Runtime, booster: MemoryBooster | None = None) -> AnalysisService:
    """The analysis service over rt, wired as build_services wires it (the memory's reader only if given)."""
    transcripts = TranscriptStore(rt.db, rt.settings.erasure_grace_seconds)
    enricher = CanonicalListReader(rt.vectors, rt.db, rt.settings, partial(promoted_vocabulary, rt.db))
    stores = SqlAnalysisStores(rt, transcripts, enricher)
    return AnalysisService(rt.settings, stores, booster, rt.llm, lambda: rt.language_model_on_demand)


MakeRuntime = Callable[..., Runtime]


@pytest.fixture
def make_runtime(db: Database, embedder: Embedder) -> Iterator[MakeRuntime]:
    """Runtimes over the test's database and the session's embedder, the bundled language model as the settings
    ask (loaded once per process), no LLM: one embedded Qdrant store per data dir (settings that differ share
    it), every store closed after the test."""
    stores: dict[Path, EdgeVectorStore] = {}

    def make(settings: Settings, *, vectors: VectorStore | None = None) -> Runtime:
        if vectors is None:
            vectors = stores.get(settings.qdrant_store_dir)
            if vectors is None:
                vectors = stores[settings.qdrant_store_dir] = EdgeVectorStore(settings.qdrant_store_dir)
        return Runtime(settings, db, vectors, embedder, None, build_language_model(settings))

    yield make
    for store in stores.values():
        store.close()


@pytest.fixture(scope="session")
def embedder():  # type: ignore[no-untyped-def]
    """The real bundled multilingual USE model (loaded once per session)."""
    from namesake.adapters.embeddings import UniversalSentenceEncoder

    return UniversalSentenceEncoder(threads=2)
