"""The `namesake` command: serve, analyze, demo, db, jobs."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from pydantic import ValidationError
from rich import box
from rich.console import Console
from rich.table import Table

from namesake import __version__
from namesake.core.errors import ConfigurationError, InvalidInputError, NamesakeError
from namesake.core.progress import progress
from namesake.core.settings import Settings, describe_invalid, get_settings
from namesake.users.vocabulary import VocabularyFormat

if TYPE_CHECKING:
    from namesake.analysis.pool import StagePool
    from namesake.analysis.service import AnalysisResult
    from namesake.app.services import Services
    from namesake.reliability.inputs import TranscriptIn
    from namesake.reliability.types import Suggestion

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
    from namesake.reliability.scorer import Scorer

    try:
        Scorer.from_settings(settings)
    except NamesakeError as exc:
        raise _fail(exc) from exc


@contextmanager
def _checked_models(settings: Settings) -> Iterator[None]:
    """_check_models as a step of a `with`: after the worker pool has started, before a store is opened."""
    _check_models(settings)
    yield


def _fail(exc: NamesakeError) -> typer.Exit:
    """Exit 2 for a setting that cannot be used as given (bad input, like an invalid value), 1 for the rest."""
    err.print(f"error: {exc.message}", markup=False, highlight=False, soft_wrap=True)
    return typer.Exit(2 if isinstance(exc, ConfigurationError) else 1)


@db_app.command("upgrade")
def db_upgrade(revision: Annotated[str, typer.Argument(help="Target revision.")] = "head") -> None:
    """Run migrations up to REVISION on DATABASE_URL (or the embedded PostgreSQL)."""
    from namesake.adapters.db import current_revision, open_database, upgrade

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
    from namesake.adapters.db import current_revision, open_database, revisions

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
    """Run the HTTP API with uvicorn (one process owns the embedded store)."""
    import uvicorn

    from namesake.api.app import create_app
    from namesake.core.logs import configure_logging

    configure_logging()
    uvicorn.run(create_app(_settings()), host=host, port=port, log_config=None)


# Below this many transcripts, starting worker processes costs more than it saves.
PARALLEL_FROM = 8


class OutputFormat(StrEnum):
    """How `analyze` prints its results."""

    jsonl = "jsonl"
    table = "table"


@app.command()
def analyze(
    path: Annotated[
        Path, typer.Argument(help="A .json transcript, a .jsonl / .jsonl.gz (one per line), or - (lines on stdin).")
    ],
    user: Annotated[str | None, typer.Option("--user", help="User id (overrides the file's user_id).")] = None,
    fmt: Annotated[OutputFormat, typer.Option("--format", help="jsonl: one line per transcript; table.")] = (
        OutputFormat.jsonl
    ),
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            min=0,
            help="Processes for the pipeline's pure stages; 0 = one per CPU core for files of "
            f"{PARALLEL_FROM} transcripts or more, else 1. Storage stays in this process; output order is kept.",
        ),
    ] = 0,
    apply: Annotated[
        bool,
        typer.Option(
            "--apply",
            help="Print the input transcripts with their auto-applied suggestions written into the segment "
            "texts (the input's JSON shape, one per line), instead of the suggestions.",
        ),
    ] = False,
) -> None:
    """Analyse transcripts and print their suggestions (the benchmark's predictions format), or --apply them."""
    from namesake.analysis.files import read_transcripts

    settings = _settings()
    _check_id(user, "--user")
    try:
        transcripts = read_transcripts(path, settings)
    except NamesakeError as exc:
        err.print(f"error: {exc.message}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2) from exc
    if workers == 0:
        workers = (os.cpu_count() or 1) if len(transcripts) >= PARALLEL_FROM else 1
    # the workers start (and load what they read) while this process checks the models and opens the stores
    with (
        _stage_pool(settings, workers) as pool,
        _checked_models(settings),
        _open_services(settings) as services,
        progress(err, "analysing", len(transcripts), quiet=len(transcripts) < 2) as bar,
    ):
        try:
            results = services.analysis.analyze_many(transcripts, user_id=user, pool=pool)
            for given, result in zip(transcripts, results, strict=True):
                if apply:
                    sys.stdout.write(json.dumps(_applied(given.transcript, result), ensure_ascii=False) + "\n")
                    sys.stdout.flush()
                elif fmt is OutputFormat.jsonl:
                    sys.stdout.write(json.dumps(result.as_json(), ensure_ascii=False) + "\n")
                    sys.stdout.flush()
                else:
                    out.print(_suggestion_table(result.transcript_id, result.mode, result.suggestions))
                bar.advance()
        except NamesakeError as exc:
            raise _fail(exc) from exc


def _check_id(value: str | None, option: str) -> None:
    """Refuse, exit 2, an id the API could never address ("../../etc"): the rule every id follows."""
    from pydantic import TypeAdapter, ValidationError

    from namesake.reliability.inputs import Identifier

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


def _applied(transcript: TranscriptIn, result: AnalysisResult) -> dict[str, Any]:
    """The transcript as it was given, its segment texts corrected: ready for the next step of a pipeline."""
    texts = {s["id"]: s["text"] for s in result.corrected_segments}
    body = transcript.model_dump(mode="json", exclude_none=True)
    for seg in body["segments"]:
        seg["text"] = texts.get(seg["id"], seg["text"])
    return body


def _suggestion_table(transcript_id: str, mode: str, suggestions: list[Suggestion]) -> Table:
    """The suggestions as a table that fits an 80-column terminal: short headers, no words folded in two."""
    table = Table(title=f"{transcript_id} ({mode}): {len(suggestions)} suggestions", box=box.SIMPLE_HEAD)
    for col in ("seg", "span", "original", "final", "type", "conf", "status"):
        table.add_column(col, no_wrap=col in ("span", "type", "conf", "status"), overflow="fold")
    for s in suggestions:
        table.add_row(
            s.segment_id, f"{s.start_char}-{s.end_char}", s.original, s.final, s.entity_type,
            f"{s.confidence:.2f}", s.status.value,
        )  # fmt: skip
    return table


def _language_model_label(model: object) -> str:
    """What the demo says of the language model: its name and the pass that runs it, or why there is none."""
    if model is None:
        return "none (word-pair counts)"
    return f"{getattr(model, 'name', '?')} ({getattr(model, 'runtime', 'adapter')})"


@contextmanager
def _stage_pool(settings: Settings, workers: int) -> Iterator[StagePool | None]:
    """The worker processes of `analyze`, started now; None for one worker (the stages run in this process)."""
    if workers <= 1:
        yield None
        return
    from namesake.analysis.pool import StagePool

    with StagePool(settings, workers) as pool:
        yield pool


@contextmanager
def _open_services(settings: Settings) -> Iterator[Services]:
    """Open the runtime and the services over it (build_services, as the API does); close everything on the way out."""
    from namesake.adapters.runtime import open_runtime
    from namesake.app.services import build_services

    try:
        runtime = open_runtime(settings)
    except NamesakeError as exc:
        raise _fail(exc) from exc
    try:
        yield build_services(runtime)
    except NamesakeError as exc:
        raise _fail(exc) from exc
    finally:
        runtime.close()


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
    from namesake.jobs.runner import JobAlreadyRunningError

    settings = _settings()
    with _open_services(settings) as services, progress(err, label, total(services)) as bar:
        try:
            outcome = run(services, bar.advance)
        except JobAlreadyRunningError as exc:
            err.print(f"skipped: {exc.message}")
            raise typer.Exit(3) from exc
    if as_json:
        sys.stdout.write(json.dumps({"job": name, "run_id": outcome.run_id, "counts": outcome.counts()}) + "\n")
    else:
        out.print(_summary(f"{name} (run {outcome.run_id})", outcome.counts()))


@jobs_app.command("promote")
def jobs_promote(as_json: JsonOption = False) -> None:
    """Promote frequent corrections whose quarantine ended to canonical vocabulary (exit 3 if already running)."""
    from namesake.corrections_memory.promotion import CorrectionsMemoryPromotion

    _run_job(
        "promotion",
        "promoting",
        lambda sv: CorrectionsMemoryPromotion(sv.runtime.db, sv.runtime.vectors, sv.runtime.settings).count_eligible(),
        lambda sv, progress: sv.promote(progress),
        as_json=as_json,
    )


@jobs_app.command("reconcile")
def jobs_reconcile(as_json: JsonOption = False) -> None:
    """Make the corrections index agree with PostgreSQL (exit 3 if already running)."""
    from namesake.core.settings import CORRECTIONS_COLLECTION

    _run_job(
        "reconciliation",
        "scanning points",
        lambda sv: sv.runtime.vectors.count(CORRECTIONS_COLLECTION),
        lambda sv, progress: sv.reconcile(progress),
        as_json=as_json,
    )


@jobs_app.command("retention")
def jobs_retention(as_json: JsonOption = False) -> None:
    """Delete transcripts last analysed over TRANSCRIPT_RETENTION_DAYS ago (exit 3 if already running)."""
    _run_job("retention", "expiring transcripts", lambda _sv: None, lambda sv, p: sv.expire_transcripts(p),
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
    with _open_services(settings) as services, progress(err, f"erasing {user_id}", None) as bar:
        try:
            receipt = services.erase_user(user_id, progress=lambda _k, n: bar.advance(n))
        except NamesakeError as exc:
            raise _fail(exc) from exc
    if as_json or not sys.stdout.isatty():
        sys.stdout.write(json.dumps(receipt.as_json()) + "\n")
    else:
        out.print_json(data=receipt.as_json())
    if any(receipt.remaining.values()):
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
) -> None:
    """Print what USER taught as an engine takes it (keyterm / custom_spelling / additional_vocab / prompt)."""
    settings = _settings()
    _check_id(user, "--user")
    with _open_services(settings) as services:
        try:
            body = services.vocabulary(user, fmt.value, transcript)
        except NamesakeError as exc:
            raise _fail(exc) from exc
    sys.stdout.write(json.dumps(body, ensure_ascii=False) + "\n")


SAMPLES = ("meeting_en.json", "meeting_fr.json")


@app.command()
def demo() -> None:
    """Analyse the bundled sample meetings (English and French) on the embedded stack and print the suggestions."""
    from importlib import resources

    from namesake.analysis.files import parse_transcript

    settings = _settings()
    with _open_services(settings) as services:
        runtime, reliability = services.runtime, services.analysis
        err.print(
            f"embedded stack: PostgreSQL {'(pgserver)' if runtime.db.embedded else '(DATABASE_URL)'}, "
            f"{type(runtime.vectors).__name__} in {settings.qdrant_store_dir}, "
            f"embedder {runtime.embedder.name} {runtime.embedder.version}, "
            f"LLM {runtime.llm.name if runtime.llm else 'none'}, "
            f"language model {_language_model_label(runtime.language_model)}"
        )
        for name in SAMPLES:
            raw = resources.files("namesake.samples").joinpath(name).read_text(encoding="utf-8")
            try:
                result = reliability.analyze(parse_transcript(raw, settings, name))
            except NamesakeError as exc:
                raise _fail(exc) from exc
            out.print(_suggestion_table(result.transcript_id, result.mode, result.suggestions))
    out.print("Next: `namesake serve`, then open http://127.0.0.1:8000/review to review them (API: /docs).")


def main() -> None:  # pragma: no cover - console entry point
    """Entry point for `python -m namesake.cli`."""
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
