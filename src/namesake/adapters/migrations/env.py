"""Alembic environment: runs over the connection `namesake.adapters.db` hands in."""

from __future__ import annotations

from alembic import context

from namesake.adapters.models import Base

config = context.config
target_metadata = Base.metadata


def run_migrations_online() -> None:
    """Migrate over the connection `namesake.adapters.db` hands in: the database is touched through `db.py` only."""
    connection = config.attributes.get("connection")
    if connection is None:
        raise RuntimeError("run migrations through `namesake db upgrade` (it hands alembic its connection)")
    context.configure(connection=connection, target_metadata=target_metadata)
    with context.begin_transaction():
        context.run_migrations()


run_migrations_online()
