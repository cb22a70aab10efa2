"""Alembic environment: runs against the URL (or connection) the caller hands in."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from namesake.models import Base

config = context.config
target_metadata = Base.metadata


def run_migrations_online() -> None:
    """Migrate over a connection given by `namesake.db.upgrade`, or one opened from the URL."""
    connection = config.attributes.get("connection")
    if connection is not None:
        context.configure(connection=connection, target_metadata=target_metadata)
        with context.begin_transaction():
            context.run_migrations()
        return
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("alembic needs sqlalchemy.url: run migrations through `namesake db upgrade`")
    engine = create_engine(url)
    with engine.connect() as conn:
        context.configure(connection=conn, target_metadata=target_metadata)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


run_migrations_online()
