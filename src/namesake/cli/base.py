"""What every `namesake` command shares: the Typer apps, the consoles, settings, errors and the services."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from namesake import __version__
from namesake.core import ConfigurationError, NamesakeError, Settings, describe_invalid, get_settings, show_progress

if TYPE_CHECKING:
    from namesake.analysis import CheckedTranscript, StagePool
    from namesake.app import Services


app = typer.Typer(help="namesake: keep ASR transcripts true to the names people use.", no_args_is_help=True)
db_app = typer.Typer(help="Database schema (alembic migrations).", no_args_is_help=True)
jobs_app = typer.Typer(help="Maintenance jobs, run once (for cron / Kubernetes CronJobs).", no_args_is_help=True)
users_app = typer.Typer(help="User data (GDPR).", no_args_is_help=True)


def _version(value: bool) -> None:
    if value:
        out.print(f"namesake {__version__}", highlight=False)
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """namesake: keep ASR transcripts true to the names people use."""


app.add_typer(db_app, name="db")
app.add_typer(jobs_app, name="jobs")
app.add_typer(users_app, name="users")
vocab_app = typer.Typer(help="A user's learned vocabulary, for ASR engines.", no_args_is_help=True)
app.add_typer(vocab_app, name="vocab")
err = Console(stderr=True)
out = Console()


def _settings() -> Settings:
    """Settings from the environment; an invalid value is a CLI error (exit 2), not a traceback."""
    try:
        return get_settings()
    except ValueError as exc:
        detail = describe_invalid(exc) if isinstance(exc, ValidationError) else str(exc)
        err.print(f"error: invalid configuration: {detail}", markup=False, highlight=False)
        raise typer.Exit(2) from exc


def _check_models(settings: Settings) -> None:
    """The scoring models and the settings they were fitted for, before a store is opened or a row written."""
    from namesake.reliability import Scorer

    try:
        Scorer.from_settings(settings)
    except NamesakeError as exc:
        raise _fail(exc) from exc


@contextmanager
def _checked_models(settings: Settings) -> Iterator[None]:
    """_check_models as a step of a `with`: after the worker pool has started, before a store is opened."""
    _check_models(settings)
    yield


def _fail(exc: NamesakeError, not_found: str | None = None) -> typer.Exit:
    """Exit 2 for a setting that cannot be used as given (bad input, like an invalid value), 1 for the rest; a
    `not_found` hint is said after a NOT_FOUND (how to name what was not found)."""
    hint = f": {not_found}" if not_found and getattr(exc, "code", None) == "NOT_FOUND" else ""
    err.print(f"error: {exc.message}{hint}", markup=False, highlight=False, soft_wrap=True)
    return typer.Exit(2 if isinstance(exc, ConfigurationError) else 1)


def _check_id(value: str | None, option: str) -> None:
    """Refuse, exit 2, an id the API could never address ("../../etc"): the rule every id follows."""
    from pydantic import TypeAdapter, ValidationError

    from namesake.domain import Identifier

    if value is None:
        return
    try:
        TypeAdapter(Identifier).validate_python(value)
    except ValidationError as exc:
        err.print(
            f"error: {option}: {value!r} is not an id (letters, digits, '_', '.', '-'; 200 at most)",
            markup=False, highlight=False, soft_wrap=True,
        )  # fmt: skip
        raise typer.Exit(2) from exc


@contextmanager
def _stage_pool(settings: Settings, workers: int) -> Iterator[StagePool | None]:
    """The worker processes of `analyze`, started now; None for one worker (the stages run in this process)."""
    if workers <= 1:
        yield None
        return
    from namesake.analysis import StagePool

    with StagePool(settings, workers) as pool:
        yield pool


@contextmanager
def _open_services(settings: Settings, *, early: Sequence[CheckedTranscript] | None = None) -> Iterator[Services]:
    """Open the runtime and the services over it (build_services, as the API does); close everything on the way out.

    With `early` (the transcripts a one-process run will analyse), what they need starts on a thread meanwhile
    (analysis.early)."""
    from namesake.adapters import open_runtime
    from namesake.analysis import start_early
    from namesake.app import build_services

    warming = start_early(settings, early) if early is not None else None
    try:
        runtime = open_runtime(settings)
    except NamesakeError as exc:
        raise _fail(exc) from exc
    finally:
        if warming is not None:
            warming.join()
    try:
        yield build_services(runtime)
    except NamesakeError as exc:
        raise _fail(exc) from exc
    finally:
        runtime.close()


def _server(settings: Settings) -> tuple[str, str | None] | None:
    """The running server a command sends its work to (its URL and the key to send), said on stderr; None: none runs.

    `namesake serve` holds the embedded store: a second process cannot open it, so every command that has a route
    asks the server instead (NAMESAKE_URL names one elsewhere)."""
    from namesake.cli.forward import client_key, running_server

    url = running_server(settings)
    if url is None:
        return None
    err.print(f"asking the server at {url}", highlight=False, markup=False)
    return url, client_key(settings)


def _ask(server: tuple[str, str | None], method: str, path: str, not_found: str | None = None) -> str:
    """The server's answer to the route that does a command's work; its refusals exit as a local run's would."""
    from namesake.cli.forward import JobBusy, ask_server

    try:
        return ask_server(server[0], server[1], method, path)
    except JobBusy as exc:
        err.print(f"skipped: {exc.message}", highlight=False, markup=False)
        raise typer.Exit(3) from exc
    except NamesakeError as exc:
        raise _fail(exc, not_found) from exc


def _tenant_id(value: str, tenant: str | None, option: str) -> str:
    """An id as its sender knows it, in the namespace of `tenant` (stored `TENANT~id`) when one is named."""
    _check_id(tenant, "--tenant")
    if tenant is None:
        return value
    if "~" in value or "~" in tenant:
        err.print(f"error: {option}: {value!r} already names a tenant, or --tenant holds '~'", markup=False,
                  highlight=False)  # fmt: skip
        raise typer.Exit(2)
    return f"{tenant}~{value}"


TenantOption = Annotated[
    str | None,
    typer.Option(
        "--tenant",
        help="The tenant whose key sent it (with tenant keys, ids are the tenant's own: --tenant acme q3-review).",
    ),
]
# What a NOT_FOUND says next, for an id given without its tenant
NAME_THE_TENANT = "a transcript sent with a tenant's key is named with --tenant TENANT (or as TENANT~ID)"


def _summary(title: str, counts: dict[str, Any]) -> Table:
    table = Table(title=title)
    table.add_column("count")
    table.add_column("value", justify="right")
    for key, value in counts.items():
        table.add_row(key, json.dumps(value) if isinstance(value, dict | list) else str(value))
    return table


JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as one JSON object (for scripts).")]


def _run_job(
    name: str,
    label: str,
    total: Callable[[Services], int | None],
    run: Callable[[Services, Callable[[int], None]], Any],
    *,
    as_json: bool = False,
) -> None:
    """Run one job with progress on stderr and a summary (table, or JSON); exit 3 when another runner holds it."""
    from namesake.jobs import JobAlreadyRunningError

    settings = _settings()
    server = _server(settings)
    if server is not None:
        done = json.loads(_ask(server, "POST", f"/v1/jobs/{name}/run"))
        run_id, counts = done["run_id"], done["counts"]
    else:
        with _open_services(settings) as services, show_progress(err, label, total(services)) as bar:
            try:
                outcome = run(services, bar.advance)
            except JobAlreadyRunningError as exc:
                err.print(f"skipped: {exc.message}")
                raise typer.Exit(3) from exc
        run_id, counts = outcome.run_id, outcome.counts()
    if as_json:
        sys.stdout.write(json.dumps({"job": name, "run_id": run_id, "counts": counts}) + "\n")
    else:
        out.print(_summary(f"{name} (run {run_id})", counts))
