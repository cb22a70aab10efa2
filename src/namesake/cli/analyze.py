"""`namesake analyze` and `namesake demo`: transcripts in, suggestions (or corrected transcripts) out."""

from __future__ import annotations

import json
import os
import sys
from contextlib import nullcontext
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.table import Table

from namesake.analysis import Engine, fixes_of, write_back
from namesake.core import NamesakeError, show_progress

if TYPE_CHECKING:
    from namesake.analysis import AnalysisFailure, AnalysisResult, InputLine
    from namesake.domain import Suggestion


from namesake.cli.base import _check_id, _checked_models, _fail, _open_services, _settings, _stage_pool, app, err, out
from namesake.cli.forward import Answered, Refused, analyse_remotely, client_key, running_server

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
            help="Print the input transcripts with their applied suggestions written in, in the input's own JSON "
            "shape (an engine's too: times and words kept), one per line, instead of the suggestions.",
        ),
    ] = False,
    engine: Annotated[
        Engine | None,
        typer.Option(
            "--from",
            help="The JSON's writer: namesake, whisper, deepgram, assemblyai, speechmatics or gladia "
            "(default: recognised by its shape).",
        ),
    ] = None,
    local: Annotated[
        bool,
        typer.Option(
            "--local",
            help="Analyse in this process, not on the running server (by default the work is sent to it, and the "
            "output is the same). It opens the stores itself: refused, exit 1, while `namesake serve` holds this data "
            "dir's embedded store; with NAMESAKE_URL's server elsewhere, or Qdrant and PostgreSQL servers, it runs.",
        ),
    ] = False,
) -> None:
    """Analyse transcripts and print their suggestions (the benchmark's predictions format), or --apply them.

    A bad transcript of a batch is named (file:line and why) on stderr and as an error object in its place in
    the output; the others are analysed, and the exit status is 2 at the end."""
    from namesake.analysis import read_batch

    settings = _settings()
    _check_id(user, "--user")
    try:
        lines = read_batch(path, settings, engine=engine)
    except NamesakeError as exc:
        err.print(f"error: {exc.message}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2) from exc
    good = [x.checked for x in lines if x.checked is not None]
    url = None if local or not good else running_server(settings)
    if url is not None:
        failed = _forwarded(lines, url, client_key(settings), user, apply, fmt)
        if failed:
            err.print(f"error: {_failed(failed, len(lines))}", markup=False)
            raise typer.Exit(2)
        return
    from namesake.analysis import AnalysisFailure  # the stores' modules: only for a run in this process

    if workers == 0:
        workers = (os.cpu_count() or 1) if len(good) >= PARALLEL_FROM else 1
    failed = 0
    # the workers start (and load what they read) while this process checks the models and opens the stores
    with (
        _stage_pool(settings, workers if good else 1) as pool,
        _checked_models(settings),
        _open_services(settings, early=good if pool is None else None) if good else nullcontext() as services,
        show_progress(err, "analysing", len(lines), quiet=len(lines) < 2) as bar,
    ):
        try:
            results = iter(services.analysis.analyze_many(good, user_id=user, pool=pool) if services else ())
            for line in lines:
                outcome = line.error if line.checked is None else next(results)
                if outcome is None or isinstance(outcome, (NamesakeError, AnalysisFailure)):
                    failed += 1
                    _report_failure(line.given.where, outcome, fmt)
                else:
                    _print_result(line, outcome, apply, fmt)
                bar.advance()
        except NamesakeError as exc:
            raise _fail(exc) from exc
    if failed:
        err.print(f"error: {_failed(failed, len(lines))}", markup=False, highlight=False)
        raise typer.Exit(2)


def _failed(failed: int, total: int) -> str:
    """ "1 of 1 transcript could not be analysed", "2 of 5 transcripts could not be analysed"."""
    return f"{failed} of {total} transcript{'' if total == 1 else 's'} could not be analysed"


def _print_result(line: InputLine, result: AnalysisResult | Answered, apply: bool, fmt: OutputFormat) -> None:
    """One transcript's result as asked: the input with its fixes written in, a JSON line, or a table."""
    if apply:
        _write(_applied(line, result))
    elif fmt is OutputFormat.jsonl:
        _write(result.as_json())
    else:
        out.print(_suggestion_table(result.transcript_id, result.mode, result.suggestions))


def _forwarded(
    lines: list[InputLine], url: str, key: str | None, user: str | None, apply: bool, fmt: OutputFormat
) -> int:
    """Send each checked transcript to the server and print its answer as a local run would; how many failed."""
    send = analyse_remotely(url, key)
    err.print(f"analysing with the server at {url} (--local analyses here)", markup=False, highlight=False)
    failed = 0
    with show_progress(err, "analysing", len(lines), quiet=len(lines) < 2) as bar:
        for line in lines:
            if line.checked is None:
                failed += 1
                _report_failure(line.given.where, line.error, fmt)
            else:
                body = line.checked.transcript.model_dump(mode="json", exclude_none=True)
                if user is not None:
                    body["user_id"] = user
                try:
                    _print_result(line, send(body), apply, fmt)
                except Refused as exc:
                    failed += 1
                    _report_failure(line.given.where, exc, fmt)
                except NamesakeError as exc:
                    raise _fail(exc) from exc
            bar.advance()
    return failed


def _write(body: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(body, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def _report_failure(where: str, outcome: NamesakeError | AnalysisFailure | None, fmt: OutputFormat) -> None:
    """One failed transcript: a line on stderr, and an error object in its place in the output."""
    exc = outcome if outcome is None or isinstance(outcome, NamesakeError) else outcome.error
    if exc is None:  # pragma: no cover - a line is read or refused
        return
    message = exc.message if exc.message.startswith(where) else f"{where}: {exc.message}"
    err.print(f"error: {message}", markup=False, highlight=False, soft_wrap=True)
    if fmt is OutputFormat.jsonl:
        body: dict[str, Any] = {"error": {"code": exc.code, "message": message, "field": exc.field}, "where": where}
        if outcome is not None and not isinstance(outcome, NamesakeError):
            body["transcript_id"] = outcome.transcript_id
        _write(body)


def _applied(line: InputLine, result: AnalysisResult | Answered) -> dict[str, Any]:
    """The transcript as it was given, its applied and decided fixes written in: ready for the next step of a
    pipeline (an engine's document keeps its shape, its times and its words, re-cut under a fix)."""
    if line.given.document is not None:
        fixes = fixes_of(result.corrected_segments, result.suggestions)
        return write_back(line.given.document, line.given.engine, fixes)
    texts = {s["id"]: s["text"] for s in result.corrected_segments}
    assert line.checked is not None
    body = line.checked.transcript.model_dump(mode="json", exclude_none=True)
    for seg in body["segments"]:
        seg["text"] = texts.get(seg["id"], seg["text"])
    return body


def _suggestion_table(transcript_id: str, mode: str, suggestions: list[Suggestion]) -> Table:
    """The suggestions as a table that fits an 80-column terminal: short headers, no words folded in two."""
    count = f"{len(suggestions)} suggestion{'' if len(suggestions) == 1 else 's'}"
    table = Table(title=f"{transcript_id} ({mode}): {count}", box=box.SIMPLE_HEAD)
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


SAMPLES = ("meeting_en.json", "meeting_fr.json")


@app.command()
def demo() -> None:
    """Analyse the bundled sample meetings (English and French) on the embedded stack and print the suggestions."""
    from importlib import resources

    from namesake.analysis import parse_transcript

    settings = _settings()
    with _open_services(settings) as services:
        runtime, reliability = services.runtime, services.analysis
        err.print(
            f"embedded stack: PostgreSQL {'(pgserver)' if runtime.db.embedded else '(DATABASE_URL)'}, "
            f"{type(runtime.vectors).__name__} in {settings.qdrant_store_dir}, "
            f"embedder {runtime.embedder.name} {runtime.embedder.version}, "
            f"remote LLM for uncertain spans {runtime.llm.name if runtime.llm else 'off (LLM_PROVIDER)'}, "
            f"local language model reading sentences {_language_model_label(runtime.language_model)}"
        )
        for name in SAMPLES:
            raw = resources.files("namesake.samples").joinpath(name).read_text(encoding="utf-8")
            try:
                result = reliability.analyze(parse_transcript(raw, settings, name)[1])
            except NamesakeError as exc:
                raise _fail(exc) from exc
            out.print(_suggestion_table(result.transcript_id, result.mode, result.suggestions))
    out.print("Next: `namesake serve`, then open http://127.0.0.1:8000/review to review them (API: /docs).")
