"""The reviewed transcript: what the pipeline applied and the reviewer decided, written into the text (pure).

Written in: auto-applied suggestions and validated ones (accepted, edited, fixed by hand). Not written in:
rejected ones, and pending ones, which are still open. A reopened decision is back to what the pipeline
proposed, so it is written in exactly when the pipeline had applied it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from namesake.core import InvalidInputError
from namesake.domain import Suggestion, SuggestionStatus
from namesake.reliability import WRITTEN_IN, corrected_text


class ReviewState(StrEnum):
    """Whether a reviewer still has something to decide in a transcript."""

    IN_REVIEW = "in_review"
    DONE = "done"


class TextFormat(StrEnum):
    """The shapes the reviewed transcript is handed on in."""

    JSON = "json"
    TXT = "txt"
    VTT = "vtt"
    SRT = "srt"


@dataclass(frozen=True)
class TimedSegment:
    """A segment as analysed, with what the ASR said of it: its times (seconds) and its speaker, when known."""

    id: str
    text: str
    start: float | None = None
    end: float | None = None
    speaker: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, stored: dict[str, Any]) -> TimedSegment:
        """A segment as the transcripts store keeps it."""
        rest = {k: v for k, v in stored.items() if k not in ("id", "text", "start", "end", "speaker")}
        speaker = stored.get("speaker")
        return cls(str(stored["id"]), str(stored["text"]), stored.get("start"), stored.get("end"),
                   None if speaker is None else str(speaker), rest)  # fmt: skip


@dataclass(frozen=True)
class ReviewedTranscript:
    """The segments with every applied and decided fix written in, and what is still open."""

    transcript_id: str
    segments: list[TimedSegment]
    applied: int
    open: int

    @property
    def state(self) -> ReviewState:
        """Done when nothing is left to decide."""
        return ReviewState.DONE if self.open == 0 else ReviewState.IN_REVIEW

    def as_json(self) -> dict[str, Any]:
        """The JSON body of the reviewed text."""
        segments = []
        for s in self.segments:
            seg: dict[str, Any] = {"id": s.id, "text": s.text}
            seg.update({k: v for k, v in (("start", s.start), ("end", s.end), ("speaker", s.speaker)) if v is not None})
            segments.append(seg)
        return {"transcript_id": self.transcript_id, "state": self.state.value, "applied": self.applied,
                "open": self.open, "segments": segments}  # fmt: skip


def as_reviewed(
    transcript_id: str, segments: Sequence[TimedSegment], suggestions: Sequence[Suggestion]
) -> ReviewedTranscript:
    """The transcript with what stands written in, segment by segment (offsets are those of the analysed text)."""
    edits: dict[str, list[tuple[int, int, str]]] = {}
    for s in suggestions:
        if s.status in WRITTEN_IN:
            edits.setdefault(s.segment_id, []).append((s.start_char, s.end_char, s.final))
    out = [
        TimedSegment(
            seg.id, corrected_text(seg.text, edits.get(seg.id, ())), seg.start, seg.end, seg.speaker, seg.extra
        )
        for seg in segments
    ]
    applied = sum(len(v) for v in edits.values())
    pending = sum(s.status is SuggestionStatus.PENDING for s in suggestions)
    return ReviewedTranscript(transcript_id, out, applied, pending)


def as_text(t: ReviewedTranscript) -> str:
    """Plain text: one segment a line, its speaker first when known."""
    return "".join(f"{s.speaker}: {s.text}\n" if s.speaker else f"{s.text}\n" for s in t.segments)


def _clock(seconds: float, separator: str) -> str:
    millis = round(max(seconds, 0.0) * 1000)
    h, rest = divmod(millis, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, ms = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}{separator}{ms:03d}"


def timed(t: ReviewedTranscript) -> list[TimedSegment]:
    """The segments that carry times (a cue needs both), in order."""
    return [s for s in t.segments if s.start is not None and s.end is not None and s.end >= s.start]


def _cue_text(s: TimedSegment) -> str:
    # a blank line would end the cue, and "-->" inside a cue's text is not allowed by WebVTT
    text = " ".join(s.text.split()).replace("-->", "→")
    return f"{s.speaker}: {text}" if s.speaker else text


def as_vtt(t: ReviewedTranscript) -> str:
    """WebVTT: a cue per timed segment, identified by the segment's id."""
    cues = [
        f"{s.id.replace('-->', '→')}\n{_clock(s.start or 0, '.')} --> {_clock(s.end or 0, '.')}\n{_cue_text(s)}\n"
        for s in timed(t)
    ]
    return "WEBVTT\n\n" + "\n".join(cues)


def as_srt(t: ReviewedTranscript) -> str:
    """SubRip: a numbered cue per timed segment."""
    cues = [
        f"{i}\n{_clock(s.start or 0, ',')} --> {_clock(s.end or 0, ',')}\n{_cue_text(s)}\n"
        for i, s in enumerate(timed(t), start=1)
    ]
    return "\n".join(cues)


def render(t: ReviewedTranscript, fmt: TextFormat) -> str:
    """The reviewed transcript as text of one format; subtitles need times (InvalidInputError when none has any)."""
    if fmt is TextFormat.JSON:
        return json.dumps(t.as_json(), ensure_ascii=False) + "\n"
    if fmt is TextFormat.TXT:
        return as_text(t)
    if not timed(t):
        raise InvalidInputError(
            f"{fmt.value} needs segment times and no segment of {t.transcript_id!r} has start and end: ask for txt "
            "or json, or send the segments with their start and end (seconds)",
            field="format",
        )
    return as_vtt(t) if fmt is TextFormat.VTT else as_srt(t)
