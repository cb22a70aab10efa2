"""The `namesake` command: serve, analyze, demo, db, jobs."""

from __future__ import annotations

import logging
import sys
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from namesake.errors import NamesakeError
from namesake.settings import Settings, get_settings

app = typer.Typer(help="namesake: keep ASR transcripts true to the names people use.", no_args_is_help=True)
db_app = typer.Typer(help="Database schema (alembic migrations).", no_args_is_help=True)
app.add_typer(db_app, name="db")
err = Console(stderr=True)
out = Console()


def _settings() -> Settings:
    """Settings from the environment; an invalid value is a CLI error (exit 2), not a traceback."""
    try:
        return get_settings()
    except ValueError as exc:
        err.print(f"[red]error:[/red] invalid configuration: {exc}")
        raise typer.Exit(2) from exc


def _fail(exc: NamesakeError) -> typer.Exit:
    err.print(f"[red]error:[/red] {exc.message}")
    return typer.Exit(1)


@db_app.command("upgrade")
def db_upgrade(revision: Annotated[str, typer.Argument(help="Target revision.")] = "head") -> None:
    """Run migrations up to REVISION on DATABASE_URL (or the embedded PostgreSQL)."""
    from namesake.db import open_database, upgrade

    settings = _settings()
    try:
        database = open_database(settings, migrate=False)
        upgrade(database.url, revision)
        database.close()
    except NamesakeError as exc:
        raise _fail(exc) from exc
    out.print(f"database migrated to {revision}")


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8000,
) -> None:
    """Run the HTTP API with uvicorn (one process owns the embedded store)."""
    import uvicorn

    from namesake.api.app import create_app

    logging.basicConfig(level=logging.INFO)
    uvicorn.run(create_app(_settings()), host=host, port=port)


@app.command()
def demo() -> None:
    """Start the embedded stack (PostgreSQL, Qdrant Edge, bundled embedder) and show what runs."""
    from namesake.runtime import open_runtime

    settings = _settings()
    try:
        runtime = open_runtime(settings)
    except NamesakeError as exc:
        raise _fail(exc) from exc
    try:
        vec = runtime.embedder.embed(["Mitnou"])
        table = Table(title="namesake embedded stack")
        table.add_column("part")
        table.add_column("running")
        table.add_row("PostgreSQL", "embedded pgserver" if runtime.db.embedded else "DATABASE_URL")
        table.add_row("vector store", type(runtime.vectors).__name__ + f" ({settings.qdrant_store_dir})")
        table.add_row("embedder", f"{runtime.embedder.name} {runtime.embedder.version}, dim {vec.shape[1]}")
        table.add_row("LLM", runtime.llm.name if runtime.llm else "none")
        out.print(table)
    finally:
        runtime.close()


def main() -> None:  # pragma: no cover - console entry point
    """Entry point for `python -m namesake.cli`."""
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
