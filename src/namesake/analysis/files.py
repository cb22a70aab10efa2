"""Reading transcripts from `.json`, `.jsonl` and `.jsonl.gz` files (namesake's shape or an ASR engine's JSON),
with errors naming file, line and field. A batch is read line by line: a bad line is that line's error, not the
batch's."""

from __future__ import annotations

import gzip
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError

from namesake.analysis.engines import Engine, detect, to_transcript
from namesake.analysis.inputs import CheckedTranscript, TranscriptIn, check_limits, find_unwritable
from namesake.core import InvalidInputError, NamesakeError, Settings

NOT_AN_ID = re.compile(r"[^A-Za-z0-9_.\-]+")


@dataclass(frozen=True)
class Given:
    """One transcript of the input: where it is (file:line), and the engine's own document when one wrote it."""

    where: str
    engine: Engine = Engine.NAMESAKE
    document: dict[str, Any] | None = None


@dataclass(frozen=True)
class InputLine:
    """One transcript of a batch as read: checked, or the error that names what is wrong with it."""

    given: Given
    checked: CheckedTranscript | None = None
    error: NamesakeError | None = None


def field_of(exc: ValidationError) -> str:
    """The first error of a validation as `field: message`."""
    err = exc.errors()[0]
    loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"]).lstrip(".")
    return f"{loc or '(root)'}: {err['msg']}"


def _document(raw: str, where: str) -> Any:
    try:
        data = json.loads(raw)
        bad = find_unwritable(data)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"{where}: not JSON ({exc.msg} at column {exc.colno})") from exc
    except RecursionError as exc:  # "[[[[…]]]]": no transcript nests that deep
        raise InvalidInputError(f"{where}: not a transcript (JSON nested too deeply)") from exc
    if bad is not None:
        field, why = bad
        raise InvalidInputError(f"{where}: {field}: {why}", field=field)
    return data


def as_namesake(data: Any, engine: Engine | None, *, name: str | None = None) -> tuple[Engine, dict[str, Any]]:
    """The document in namesake's shape, and which engine wrote it (`engine`, or recognised by its shape).

    An engine's document carries no namesake id: its own id is used, else `name` (a file's), and a
    `transcript_id`, `user_id` or `canonical_entities` set beside the engine's keys are kept.
    """
    found = engine or detect(data)
    if found is Engine.NAMESAKE:
        return found, data
    if not isinstance(data, dict):
        raise InvalidInputError(f"not {found.value} JSON: a transcript must be a JSON object")
    fallback = NOT_AN_ID.sub("-", name).strip("-.") if name else None
    body = to_transcript(data, found, data.get("transcript_id") or fallback)
    body.update({k: data[k] for k in ("user_id", "canonical_entities", "language") if k in data})
    return found, body


def parse_transcript(
    raw: str, settings: Settings, where: str, engine: Engine | None = None, name: str | None = None
) -> tuple[Given, CheckedTranscript]:
    """One JSON document → a checked transcript; any problem is an InvalidInputError naming `where` and the field."""
    data = _document(raw, where)
    try:
        found, body = as_namesake(data, engine, name=name)
    except NamesakeError as exc:
        raise InvalidInputError(f"{where}: {exc.message}", field=exc.field) from exc
    try:
        transcript = TranscriptIn.model_validate(body)
    except ValidationError as exc:
        raise InvalidInputError(f"{where}: {field_of(exc)}") from exc
    try:
        checked = check_limits(transcript, settings)
    except NamesakeError as exc:
        raise InvalidInputError(f"{where}: {exc.message}", field=exc.field) from exc
    return Given(where, found, None if found is Engine.NAMESAKE else data), checked


def _line(raw: str, settings: Settings, where: str, engine: Engine | None) -> InputLine:
    """One line of a batch, read or refused (the refusal is the line's, the batch goes on)."""
    try:
        given, checked = parse_transcript(raw, settings, where, engine)
    except InvalidInputError as exc:
        return InputLine(Given(where), error=exc)
    return InputLine(given, checked)


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
                yield n, line.rstrip("\r\n")  # a truncated line's error sits at its end, not on a next line


def read_batch(
    path: Path, settings: Settings, stdin: TextIO | None = None, engine: Engine | None = None
) -> list[InputLine]:
    """Every transcript of a file (or JSON lines on stdin for `-`), each read or refused on its own.

    A `.json` file is one transcript: refused whole (InvalidInputError). A file that cannot be read, holds
    none, or names a transcript twice is refused whole too.
    """
    if str(path) == "-":
        try:
            lines = enumerate((sys.stdin if stdin is None else stdin).read().splitlines(), start=1)
            out = [_line(line, settings, f"stdin:{n}", engine) for n, line in lines if line.strip()]
        except UnicodeDecodeError as exc:
            raise InvalidInputError(f"stdin: cannot be read ({exc})") from exc
        return _checked_set("stdin", out)
    if not path.exists():
        raise InvalidInputError(f"{path}: no such file")
    try:
        if path.suffix == ".json":
            given, checked = parse_transcript(path.read_text(encoding="utf-8"), settings, str(path), engine, path.stem)
            return [InputLine(given, checked)]
        if not (path.name.endswith(".jsonl") or path.name.endswith(".jsonl.gz")):
            raise InvalidInputError(f"{path}: expected a .json, .jsonl or .jsonl.gz file")
        out = [_line(line, settings, f"{path}:{n}", engine) for n, line in _lines(path)]
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise InvalidInputError(f"{path}: cannot be read ({exc})") from exc
    return _checked_set(str(path), out)


def _checked_set(where: str, out: list[InputLine]) -> list[InputLine]:
    """A batch's transcripts: at least one line, each id once among those read."""
    ids = [x.checked.transcript.transcript_id for x in out if x.checked is not None]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise InvalidInputError(f"{where}: transcript_id {dup!r} appears more than once")
    if not out:
        raise InvalidInputError(f"{where}: no transcript in the input")
    return out
