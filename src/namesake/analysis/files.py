"""Reading transcripts from `.json`, `.jsonl` and `.jsonl.gz` files, with errors naming file, line and field."""

from __future__ import annotations

import gzip
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from pydantic import ValidationError

from namesake.core.errors import InvalidInputError, NamesakeError
from namesake.core.settings import Settings
from namesake.reliability.inputs import CheckedTranscript, TranscriptIn, check_limits, find_nul


def _field_of(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"]).lstrip(".")
    return f"{loc or '(root)'}: {err['msg']}"


def parse_transcript(raw: str, settings: Settings, where: str) -> CheckedTranscript:
    """One JSON document → a checked transcript; any problem is an InvalidInputError naming `where` and the field."""
    try:
        data = json.loads(raw)
        nul = find_nul(data)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"{where}: not JSON ({exc.msg} at column {exc.colno})") from exc
    except RecursionError as exc:  # "[[[[…]]]]": no transcript nests that deep
        raise InvalidInputError(f"{where}: not a transcript (JSON nested too deeply)") from exc
    if nul is not None:
        raise InvalidInputError(f"{where}: {nul}: a NUL character is not accepted", field=nul)
    try:
        transcript = TranscriptIn.model_validate(data)
    except ValidationError as exc:
        raise InvalidInputError(f"{where}: {_field_of(exc)}") from exc
    try:
        return check_limits(transcript, settings)
    except NamesakeError as exc:
        raise InvalidInputError(f"{where}: {exc.message}", field=exc.field) from exc


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """Non-blank lines with their numbers; a line that is not UTF-8 is named by its number."""
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as fh:
        for n, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InvalidInputError(f"{path}:{n}: not UTF-8 (byte {exc.start + 1} of the line)") from exc
            if line.strip():
                yield n, line


def read_transcripts(path: Path, settings: Settings, stdin: TextIO | None = None) -> list[CheckedTranscript]:
    """All transcripts of a file (or JSON lines on stdin for `-`), validated before any is analysed."""
    if str(path) == "-":
        lines = enumerate((sys.stdin if stdin is None else stdin).read().splitlines(), start=1)
        try:
            out = [parse_transcript(line, settings, f"stdin:{n}") for n, line in lines if line.strip()]
        except UnicodeDecodeError as exc:
            raise InvalidInputError(f"stdin: cannot be read ({exc})") from exc
        return _checked_set("stdin", out)
    if not path.exists():
        raise InvalidInputError(f"{path}: no such file")
    try:
        if path.suffix == ".json":
            return [parse_transcript(path.read_text(encoding="utf-8"), settings, str(path))]
        if not (path.name.endswith(".jsonl") or path.name.endswith(".jsonl.gz")):
            raise InvalidInputError(f"{path}: expected a .json, .jsonl or .jsonl.gz file")
        out = [parse_transcript(line, settings, f"{path}:{n}") for n, line in _lines(path)]
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise InvalidInputError(f"{path}: cannot be read ({exc})") from exc
    return _checked_set(str(path), out)


def _checked_set(where: str, out: list[CheckedTranscript]) -> list[CheckedTranscript]:
    """A file's transcripts: at least one, each id once."""
    ids = [t.transcript.transcript_id for t in out]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise InvalidInputError(f"{where}: transcript_id {dup!r} appears more than once")
    if not out:
        raise InvalidInputError(f"{where}: no transcript in the input")
    return out
