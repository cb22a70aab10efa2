"""`namesake transcripts export`: the reviewed transcript, as a pipeline or a reader takes it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated
from urllib.parse import quote

import typer

from namesake.cli.base import (
    NAME_THE_TENANT,
    TenantOption,
    _ask,
    _check_id,
    _fail,
    _open_services,
    _server,
    _settings,
    _tenant_id,
    app,
    err,
)
from namesake.core import NamesakeError
from namesake.review import TextFormat, render

transcripts_app = typer.Typer(help="Transcripts as reviewed: what the pipeline applied and the reviewer decided.")
app.add_typer(transcripts_app, name="transcripts", no_args_is_help=True)


@transcripts_app.command("export")
def transcripts_export(
    transcript: Annotated[str, typer.Argument(help="The transcript's id.")],
    fmt: Annotated[TextFormat, typer.Option("--format", help="json, txt, vtt (WebVTT) or srt (SubRip).")] = (
        TextFormat.JSON
    ),
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")] = None,
    tenant: TenantOption = None,
) -> None:
    """Print the transcript with every applied, accepted, edited and hand-made fix written in (json says what
    is still open: state in_review or done)."""
    settings = _settings()
    _check_id(transcript, "TRANSCRIPT")
    hint = NAME_THE_TENANT if tenant is None and "~" not in transcript else None
    transcript = _tenant_id(transcript, tenant, "TRANSCRIPT")
    server = _server(settings)
    if server is not None:
        body = _ask(server, "GET", f"/v1/transcripts/{quote(transcript)}/text?format={fmt.value}", hint)
        if fmt is TextFormat.JSON:  # as a local run writes it: a segment's missing times and speaker left out
            reviewed = json.loads(body)
            reviewed["segments"] = [{k: v for k, v in seg.items() if v is not None} for seg in reviewed["segments"]]
            body = json.dumps(reviewed, ensure_ascii=False) + "\n"
    else:
        with _open_services(settings) as services:
            try:
                body = render(services.queue.reviewed(transcript), fmt)
            except NamesakeError as exc:
                raise _fail(exc, hint) from exc
    if output is None:
        sys.stdout.write(body)
        return
    try:
        output.write_text(body, encoding="utf-8")
    except OSError as exc:
        err.print(f"error: {output}: cannot be written ({exc.strerror})", markup=False, highlight=False)
        raise typer.Exit(2) from exc
