"""The operator's commands: serve, the schema, the maintenance jobs, erasure and the vocabulary export."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated
from urllib.parse import quote, urlencode

import typer

from namesake.core import InvalidInputError, NamesakeError, show_progress
from namesake.users import VocabularyFormat

if TYPE_CHECKING:
    pass


from namesake.cli.base import (
    JsonOption,
    TenantOption,
    _ask,
    _check_id,
    _fail,
    _open_services,
    _run_job,
    _server,
    _settings,
    _tenant_id,
    app,
    db_app,
    err,
    jobs_app,
    out,
    users_app,
    vocab_app,
)


@db_app.command("upgrade")
def db_upgrade(revision: Annotated[str, typer.Argument(help="Target revision.")] = "head") -> None:
    """Run migrations up to REVISION on DATABASE_URL (or the embedded PostgreSQL)."""
    from namesake.adapters import current_revision, open_database, upgrade

    settings = _settings()
    try:
        database = open_database(settings, migrate=False)
        try:
            upgrade(database.url, revision)
            now = current_revision(database.url)
        finally:
            database.close()
    except InvalidInputError as exc:
        err.print(f"error: {exc.message}", markup=False, highlight=False)
        raise typer.Exit(2) from exc
    except NamesakeError as exc:
        raise _fail(exc) from exc
    out.print(f"database at {now}", highlight=False)


@db_app.command("current")
def db_current() -> None:
    """Print the revision the database is at, and the newest one this version ships."""
    from namesake.adapters import current_revision, open_database, revisions

    settings = _settings()
    try:
        database = open_database(settings, migrate=False)
        try:
            at = current_revision(database.url)
        finally:
            database.close()
    except NamesakeError as exc:
        raise _fail(exc) from exc
    head = revisions()[-1]
    out.print(f"{at or 'none'} (head {head}{', up to date' if at == head else ''})", highlight=False)


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8000,
) -> None:
    """Run the HTTP API with uvicorn (one process owns the embedded store).

    SIGTERM stops taking connections, gives what runs SHUTDOWN_GRACE_SECONDS to finish, stops the rest and exits.
    """
    from namesake.core import configure_logging, few_heap_arenas, with_trimmable_allocator

    with_trimmable_allocator()  # (started again on the C library's malloc, unless PYTHONMALLOC says otherwise)
    import uvicorn

    from namesake.api import create_app

    configure_logging()
    # once ready, it says where it listens in the data dir: `namesake analyze` there sends its work to it
    settings = _settings()
    few_heap_arenas()  # before the server's threads: their freed memory pooled, not kept per thread
    # SIGTERM: no new connections; what runs has SHUTDOWN_GRACE_SECONDS to finish, then its work is stopped
    uvicorn.run(
        create_app(settings, address=(host, port)),
        host=host,
        port=port,
        log_config=None,
        timeout_graceful_shutdown=settings.shutdown_grace_seconds,
    )


@jobs_app.command("promote")
def jobs_promote(as_json: JsonOption = False) -> None:
    """Promote frequent corrections whose quarantine ended to canonical vocabulary (exit 3 if already running)."""
    from namesake.corrections_memory import CorrectionsMemoryPromotion

    _run_job(
        "promotion",
        "promoting",
        lambda sv: CorrectionsMemoryPromotion(sv.runtime.db, sv.runtime.vectors, sv.runtime.settings).count_eligible(),
        lambda sv, progress: sv.jobs.promote(progress),
        as_json=as_json,
    )


@jobs_app.command("reconcile")
def jobs_reconcile(as_json: JsonOption = False) -> None:
    """Make the corrections index agree with PostgreSQL (exit 3 if already running)."""
    from namesake.core import CORRECTIONS_COLLECTION

    _run_job(
        "reconciliation",
        "scanning points",
        lambda sv: sv.runtime.vectors.count(CORRECTIONS_COLLECTION),
        lambda sv, progress: sv.jobs.reconcile(progress),
        as_json=as_json,
    )


@jobs_app.command("retention")
def jobs_retention(as_json: JsonOption = False) -> None:
    """Delete transcripts last analysed over TRANSCRIPT_RETENTION_DAYS ago (exit 3 if already running)."""
    _run_job("retention", "expiring transcripts", lambda _sv: None, lambda sv, p: sv.jobs.expire_transcripts(p),
             as_json=as_json)  # fmt: skip


@users_app.command("erase")
def users_erase(
    user_id: Annotated[str, typer.Argument(help="The user whose data is erased.")], as_json: JsonOption = False
) -> None:
    """Erase everything of USER_ID in PostgreSQL and Qdrant; prints the receipt (remaining must be 0).

    The receipt is JSON either way (a pretty one on a terminal); --json prints it on one line.
    """
    settings = _settings()
    _check_id(user_id, "USER_ID")
    server = _server(settings)
    if server is not None:
        body = json.loads(_ask(server, "DELETE", f"/v1/users/{quote(user_id)}"))
    else:
        with _open_services(settings) as services, show_progress(err, f"erasing {user_id}", None) as bar:
            try:
                body = services.jobs.erase_user(user_id, progress=lambda _k, n: bar.advance(n)).as_json()
            except NamesakeError as exc:
                raise _fail(exc) from exc
    if as_json or not sys.stdout.isatty():
        sys.stdout.write(json.dumps(body) + "\n")
    else:
        out.print_json(data=body)
    if any(body["remaining"].values()):
        raise typer.Exit(1)


@vocab_app.command("export")
def vocab_export(
    user: Annotated[str, typer.Option("--user", help="The user whose corrections and vocabulary are exported.")],
    fmt: Annotated[
        VocabularyFormat, typer.Option("--format", help="json, or the request shape of an ASR engine.")
    ] = VocabularyFormat.json,
    transcript: Annotated[
        str | None, typer.Option("--transcript", help="Add this transcript's canonical list.")
    ] = None,
    tenant: TenantOption = None,
) -> None:
    """Print what USER taught as an engine takes it (keyterm / custom_spelling / additional_vocab / prompt)."""
    settings = _settings()
    _check_id(user, "--user")
    _check_id(transcript, "--transcript")
    user = _tenant_id(user, tenant, "--user")
    transcript = None if transcript is None else _tenant_id(transcript, tenant, "--transcript")
    server = _server(settings)
    if server is not None:
        query = urlencode({"format": fmt.value, **({"transcript_id": transcript} if transcript else {})})
        body = json.loads(_ask(server, "GET", f"/v1/users/{quote(user)}/vocabulary?{query}"))
    else:
        with _open_services(settings) as services:
            try:
                body = services.memory.vocabulary(user, fmt.value, transcript)
            except NamesakeError as exc:
                raise _fail(exc) from exc
    sys.stdout.write(json.dumps(body, ensure_ascii=False) + "\n")
