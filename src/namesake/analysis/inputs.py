"""The transcript a caller sends (CLI file line or API body), validated before anything is written."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, Strict, StringConstraints, field_validator

from namesake.core import InputTooLargeError, InvalidInputError, Settings
from namesake.domain import NUL, Identifier, Offset, Seconds, Segment, Word
from namesake.reliability import validate_entities


class WordIn(BaseModel):
    """An ASR word with its confidence; offsets into the segment text when known."""

    model_config = ConfigDict(extra="ignore")
    text: str
    confidence: Annotated[float, Strict()] = Field(ge=0.0, le=1.0)
    start_char: Offset | None = None
    end_char: Offset | None = None
    start: Seconds | None = Field(default=None, description="when the word starts in the audio (seconds)")
    end: Seconds | None = Field(default=None, description="when it ends (seconds)")


class SegmentIn(BaseModel):
    """One segment: id, text, optional words; its times and speaker when the ASR gave them (kept and returned)."""

    model_config = ConfigDict(extra="ignore")
    id: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    text: str
    words: list[WordIn] = Field(default_factory=list)
    start: Seconds | None = Field(default=None, description="when the segment starts in the audio (seconds)")
    end: Seconds | None = Field(default=None, description="when it ends (seconds)")
    speaker: Annotated[str, StringConstraints(max_length=200)] | None = None

    @field_validator("speaker", mode="before")
    @classmethod
    def _speaker_as_text(cls, value: object) -> object:
        """Engines number their speakers (0, 1) or letter them ("A"): kept as text."""
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    def stored(self) -> dict[str, Any]:
        """The segment as the transcripts store keeps it: id, text, and its times and speaker when known."""
        out: dict[str, Any] = {"id": self.id, "text": self.text}
        known = (("start", self.start), ("end", self.end), ("speaker", self.speaker))
        out.update({k: v for k, v in known if v is not None})
        return out

    @field_validator("id", mode="before")
    @classmethod
    def _id_as_text(cls, value: object) -> object:
        """Segment ids may arrive as numbers; they are kept as text."""
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


class TranscriptIn(BaseModel):
    """A transcript to analyse; unknown keys (e.g. a benchmark's gold fields) are ignored, never read."""

    model_config = ConfigDict(extra="ignore")
    transcript_id: Identifier
    user_id: Identifier | None = None
    language: Annotated[str, StringConstraints(min_length=2, max_length=16)] = "en"
    segments: list[SegmentIn] = Field(min_length=1)  # in the schema too; check_limits says it in words
    canonical_entities: dict[str, list[str]] | None = None


@dataclass(frozen=True)
class CheckedTranscript:
    """A transcript that passed every check, with its canonical lists cleaned: the one value passed inward."""

    transcript: TranscriptIn
    entities: dict[str, list[str]] | None


def unwritable(text: str) -> str | None:
    """Why a string cannot be stored (PostgreSQL holds UTF-8 text without NUL), or None when it can."""
    if NUL in text:
        return "a NUL character is not accepted"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "not valid Unicode (a lone UTF-16 surrogate has no UTF-8 form)"
    return None


def find_unwritable(value: object, path: str = "") -> tuple[str, str] | None:
    """The path of the first string (key or value) no store can hold (a NUL character, a lone surrogate) and why,
    or None: refused at the boundary, before anything is written."""
    if isinstance(value, str):
        why = unwritable(value)
        return None if why is None else (path or "(root)", why)
    if isinstance(value, dict):
        for k, v in value.items():
            here = f"{path}.{k}" if path else str(k)
            why = unwritable(str(k))
            found = (here, why) if why else find_unwritable(v, here)
            if found:
                return found
    if isinstance(value, list):
        for i, v in enumerate(value):
            found = find_unwritable(v, f"{path}[{i}]")
            if found:
                return found
    return None


def check_limits(t: TranscriptIn, settings: Settings) -> CheckedTranscript:
    """Refuse input beyond the configured limits, naming the field; done once, at the boundary."""
    if not t.segments:
        raise InvalidInputError("segments must not be empty", field="segments")
    if len(t.segments) > settings.max_segments:
        raise InputTooLargeError(
            f"segments has {len(t.segments)} items, the limit is {settings.max_segments}", field="segments"
        )
    seen: set[str] = set()
    for i, s in enumerate(t.segments):
        if len(s.text) > settings.max_segment_chars:
            raise InputTooLargeError(
                f"segments[{i}].text has {len(s.text)} characters, the limit is {settings.max_segment_chars}",
                field=f"segments[{i}].text",
            )
        if s.id in seen:
            raise InvalidInputError(f"segments[{i}].id {s.id!r} is repeated", field=f"segments[{i}].id")
        seen.add(s.id)
    entities = None
    if t.canonical_entities is not None:
        entities = validate_entities(
            t.canonical_entities,
            max_items=settings.max_canonical_entities,
            max_chars=settings.max_canonical_entry_chars,
        )
        check_cost(t, entities, settings)
    return CheckedTranscript(t, entities)


def check_cost(t: TranscriptIn, lists: dict[str, list[str]], settings: Settings) -> None:
    """Refuse, before any work, an analysis past its cost budget (413): its list's words past MAX_LIST_WORDS, or the
    transcript's words × those past MAX_ANALYSIS_PAIRS (every size may be within its own limit, the product not)."""
    list_words = sum(len(v.split()) for values in lists.values() for v in values)
    if list_words > settings.max_list_words:
        raise InputTooLargeError(
            f"the list's entries hold {list_words:,} words; the budget is {settings.max_list_words:,}"
            " (MAX_LIST_WORDS): send the names this meeting is about",
            field="canonical_entities",
        )
    words = sum(len(s.text.split()) for s in t.segments)
    pairs = words * list_words
    if pairs > settings.max_analysis_pairs:
        raise InputTooLargeError(
            f"the analysis would compare {words:,} words with {list_words:,} words of list entries ({pairs:,} pairs);"
            f" the budget is {settings.max_analysis_pairs:,} (MAX_ANALYSIS_PAIRS): send fewer segments per request or"
            " a shorter list",
            field="canonical_entities",
        )


def to_segments(t: TranscriptIn) -> list[Segment]:
    """Domain segments (words kept only with offsets, since ASR doubt is located by offsets)."""
    return [
        Segment(s.id, s.text, tuple(Word(w.text, w.confidence, w.start_char, w.end_char) for w in s.words))
        for s in t.segments
    ]
