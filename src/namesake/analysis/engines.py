"""Transcripts as ASR engines write them: Whisper, Deepgram, AssemblyAI, Speechmatics and Gladia JSON, read into
namesake's transcript shape (segments with times and speakers), and the engine's own JSON given back with the
reviewed text written in, times and everything else intact.

Each engine is a pair of pure functions: `segments(doc)` lists its segments (where their text lives in the
document, their words, times and speaker); `write_back(doc, texts)` puts corrected segment texts back where
they came from. A word list is re-cut where a fix changed it: the words a fix covers become one word holding the
fix, timed from the first one's start to the last one's end.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from namesake.core import InvalidInputError
from namesake.domain import Suggestion
from namesake.reliability import WRITTEN_IN


class Engine(StrEnum):
    """The engines whose JSON `namesake analyze` and the analyse route take as they are."""

    NAMESAKE = "namesake"
    WHISPER = "whisper"
    DEEPGRAM = "deepgram"
    ASSEMBLYAI = "assemblyai"
    SPEECHMATICS = "speechmatics"
    GLADIA = "gladia"


@dataclass
class EngineSegment:
    """One segment of an engine's document: its text, times (seconds), speaker, and its words in the document."""

    id: str
    text: str
    start: float | None
    end: float | None
    speaker: str | None
    words: list[dict[str, Any]]  # the document's own word objects (edited in place by write_back)
    word_text: str  # the key a word's text is under ("word", "text", "punctuated_word", …)

    def word_of(self, w: dict[str, Any]) -> str:
        """A word's text (Speechmatics keeps it in its first alternative)."""
        if self.word_text == "content":
            return str((w.get("alternatives") or [{}])[0].get("content", ""))
        return str(w.get(self.word_text, ""))

    def set_word(self, w: dict[str, Any], text: str) -> None:
        """A word's text replaced where the engine reads it (Deepgram's bare `word` too, lower case)."""
        if self.word_text == "content":
            (w.get("alternatives") or [{}])[0]["content"] = text
            return
        w[self.word_text] = text
        if self.word_text == "punctuated_word" and "word" in w:
            w["word"] = text.strip().lower()


# Keys only Whisper writes on a segment: they tell its JSON even when namesake's keys were added beside its own.
WHISPER_SEGMENT_KEYS = frozenset(
    {"seek", "tokens", "avg_logprob", "compression_ratio", "no_speech_prob", "temperature"}
)
# Whisper names the language it heard ("english"); namesake's transcripts carry codes.
LANGUAGE_CODES = {
    "english": "en", "french": "fr", "german": "de", "spanish": "es", "italian": "it", "portuguese": "pt",
    "dutch": "nl", "swedish": "sv", "danish": "da", "norwegian": "no", "finnish": "fi", "polish": "pl",
    "russian": "ru", "ukrainian": "uk", "turkish": "tr", "greek": "el", "czech": "cs", "romanian": "ro",
    "hungarian": "hu", "arabic": "ar", "hebrew": "he", "hindi": "hi", "japanese": "ja", "korean": "ko",
    "chinese": "zh", "vietnamese": "vi", "thai": "th", "indonesian": "id", "malay": "ms", "catalan": "ca",
}  # fmt: skip


def language_code(value: str) -> str:
    """A language as namesake's transcripts carry it: "english" → en, "en_US" → en; an unknown name as it is."""
    return LANGUAGE_CODES.get(value.strip().casefold(), value.split("_")[0].split("-")[0])


def detect(doc: object) -> Engine:
    """Which engine wrote a document, by its shape (its own keys first: namesake's keys may be added beside them,
    as docs/transcripts.md suggests); InvalidInputError when none does."""
    if not isinstance(doc, dict):
        raise InvalidInputError("a transcript must be a JSON object")
    found = _engine_keys(doc)
    if found is not None:
        return found
    if "transcript_id" in doc:
        return Engine.NAMESAKE
    if isinstance(doc.get("segments"), list) and all(
        isinstance(s, dict) and {"start", "end", "text"} <= s.keys() for s in doc["segments"]
    ):
        return Engine.WHISPER
    raise InvalidInputError(
        "not a transcript namesake knows: send namesake's shape (transcript_id, segments) or the JSON of "
        "Whisper, Deepgram, AssemblyAI, Speechmatics or Gladia (name it with --from when it is not recognised)"
    )


def _engine_keys(doc: dict[str, Any]) -> Engine | None:
    """The engine whose own keys the document carries, or None."""
    segs = doc.get("segments")
    parts = segs if isinstance(segs, list) and all(isinstance(s, dict) for s in segs) else []
    if any(WHISPER_SEGMENT_KEYS & s.keys() for s in parts):
        return Engine.WHISPER
    if isinstance(doc.get("results"), dict) and "channels" in doc["results"]:
        return Engine.DEEPGRAM
    if isinstance(doc.get("results"), list) and ("format" in doc or "job" in doc or "metadata" in doc):
        return Engine.SPEECHMATICS
    if isinstance(doc.get("result"), dict) and "transcription" in doc["result"]:
        return Engine.GLADIA
    if "transcription" in doc and isinstance(doc["transcription"], dict) and "utterances" in doc["transcription"]:
        return Engine.GLADIA
    if "text" in doc and ("words" in doc or "utterances" in doc or "audio_url" in doc or "status" in doc):
        return Engine.ASSEMBLYAI
    return None


def _speaker(value: object) -> str | None:
    return None if value is None else str(value)


def _timed_parts(parts: list[dict[str, Any]]) -> list[EngineSegment]:
    """Segments already cut and timed in seconds, their text under `text` and their words' under `word`."""
    out = []
    for i, p in enumerate(parts):
        speaker = _speaker(p.get("speaker"))
        out.append(EngineSegment(str(i), str(p["text"]).strip(), p.get("start"), p.get("end"), speaker,
                                 p.get("words") or [], "word"))  # fmt: skip
    return out


def _whisper(doc: dict[str, Any]) -> list[EngineSegment]:
    return _timed_parts(doc["segments"])


def _deepgram_parts(doc: dict[str, Any]) -> list[tuple[dict[str, Any], str]]:
    """Where Deepgram's segment texts live: its utterances, else each channel's first alternative."""
    results = doc["results"]
    if results.get("utterances"):
        return [(u, "transcript") for u in results["utterances"]]
    return [(c["alternatives"][0], "transcript") for c in results.get("channels", []) if c.get("alternatives")]


def _deepgram(doc: dict[str, Any]) -> list[EngineSegment]:
    out = []
    for i, (part, key) in enumerate(_deepgram_parts(doc)):
        words = part.get("words") or []
        start = part.get("start", words[0]["start"] if words else None)
        end = part.get("end", words[-1]["end"] if words else None)
        speaker = part.get("speaker", words[0].get("speaker") if words else None)
        text_key = "punctuated_word" if words and "punctuated_word" in words[0] else "word"
        out.append(EngineSegment(str(i), str(part[key]), start, end, _speaker(speaker), words, text_key))
    return out


def _assemblyai_parts(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return doc["utterances"] if doc.get("utterances") else [doc]


def _ms(value: object) -> float | None:
    return None if value is None else float(value) / 1000  # type: ignore[arg-type]


def _assemblyai(doc: dict[str, Any]) -> list[EngineSegment]:
    out = []
    for i, part in enumerate(_assemblyai_parts(doc)):
        words = part.get("words") or []
        start = part.get("start", words[0]["start"] if words else None)
        end = part.get("end", words[-1]["end"] if words else None)
        speaker = _speaker(part.get("speaker"))
        out.append(EngineSegment(str(i), str(part.get("text") or ""), _ms(start), _ms(end), speaker, words, "text"))
    return out


def _gladia_parts(doc: dict[str, Any]) -> list[dict[str, Any]]:
    transcription = doc["result"]["transcription"] if "result" in doc else doc["transcription"]
    return list(transcription.get("utterances") or [])


def _gladia(doc: dict[str, Any]) -> list[EngineSegment]:
    return _timed_parts(_gladia_parts(doc))


def _speechmatics_groups(doc: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """Speechmatics' results cut into sentences: after each end of sentence, and where the speaker changes."""
    groups: list[list[dict[str, Any]]] = [[]]
    speaker = None
    for item in doc["results"]:
        alt = (item.get("alternatives") or [{}])[0]
        if groups[-1] and item.get("type") == "word" and alt.get("speaker") not in (None, speaker):
            groups.append([])
        speaker = alt.get("speaker", speaker)
        groups[-1].append(item)
        if item.get("is_eos"):
            groups.append([])
    return [g for g in groups if g]


def _speechmatics_text(group: list[dict[str, Any]]) -> str:
    text = ""
    for item in group:
        content = str((item.get("alternatives") or [{}])[0].get("content", ""))
        attached = item.get("type") == "punctuation" and item.get("attaches_to", "previous") == "previous"
        text += content if (attached or not text) else f" {content}"
    return text


def _speechmatics(doc: dict[str, Any]) -> list[EngineSegment]:
    out = []
    for i, group in enumerate(_speechmatics_groups(doc)):
        alt = (group[0].get("alternatives") or [{}])[0]
        start, end = group[0].get("start_time"), group[-1].get("end_time")
        speaker = _speaker(alt.get("speaker"))
        out.append(EngineSegment(str(i), _speechmatics_text(group), start, end, speaker, group, "content"))
    return out


READERS: dict[Engine, Callable[[dict[str, Any]], list[EngineSegment]]] = {
    Engine.WHISPER: _whisper,
    Engine.DEEPGRAM: _deepgram,
    Engine.ASSEMBLYAI: _assemblyai,
    Engine.SPEECHMATICS: _speechmatics,
    Engine.GLADIA: _gladia,
}


def segments(doc: dict[str, Any], engine: Engine) -> list[EngineSegment]:
    """The document's segments; InvalidInputError naming the engine when the document is not its shape."""
    try:
        return READERS[engine](doc)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise InvalidInputError(f"not {engine.value} JSON: {type(exc).__name__} {exc}") from exc


def to_transcript(doc: dict[str, Any], engine: Engine, transcript_id: str | None) -> dict[str, Any]:
    """namesake's transcript shape for an engine's document: its segments with their times and speakers."""
    if not transcript_id:
        transcript_id = str(doc.get("id") or doc.get("metadata", {}).get("request_id") or "") or None
    if not transcript_id:
        raise InvalidInputError(f"a {engine.value} document carries no id: name the transcript (transcript_id)")
    segs = []
    for s in segments(doc, engine):
        seg: dict[str, Any] = {"id": s.id, "text": s.text}
        seg.update({k: v for k, v in (("start", s.start), ("end", s.end), ("speaker", s.speaker)) if v is not None})
        segs.append(seg)
    language = doc.get("language") or doc.get("language_code")
    body: dict[str, Any] = {"transcript_id": transcript_id, "segments": segs}
    if isinstance(language, str) and len(language) >= 2:
        body["language"] = language_code(language)
    return body


def _word_spans(seg: EngineSegment) -> list[tuple[int, int]]:
    """Where each word sits in the segment text (found in order; a word not found keeps an empty span)."""
    spans, at, text = [], 0, seg.text
    for w in seg.words:
        token = seg.word_of(w).strip()
        found = text.find(token, at) if token else -1
        spans.append((found, found + len(token)) if found >= 0 else (at, at))
        at = found + len(token) if found >= 0 else at
    return spans


def _recut_words(seg: EngineSegment, new_text: str, edits: list[tuple[int, int, str]]) -> None:
    """The segment's words with each fix's words merged into one word holding the fix, timed first to last."""
    if not seg.words or not edits:
        return
    spans = _word_spans(seg)
    drop: set[int] = set()
    for start, end, final in sorted(edits):
        covered = [i for i, (a, b) in enumerate(spans) if a < end and b > start]
        if not covered:
            continue
        first, last = seg.words[covered[0]], seg.words[covered[-1]]
        a0, b1 = spans[covered[0]][0], spans[covered[-1]][1]
        merged = seg.text[a0:start] + final + seg.text[end:b1]
        lead = seg.word_of(first)
        seg.set_word(first, lead[: len(lead) - len(lead.lstrip())] + merged)
        for end_key in ("end", "end_time"):
            if end_key in last and end_key in first:
                first[end_key] = last[end_key]
        drop.update(covered[1:])
    seg.words[:] = [w for i, w in enumerate(seg.words) if i not in drop]


def write_back(
    doc: dict[str, Any], engine: Engine, fixed: dict[str, tuple[str, list[tuple[int, int, str]]]]
) -> dict[str, Any]:
    """A copy of the engine's document with each segment's text (by id: its new text and the edits made to it)
    written where it came from, its words re-cut, and the whole-text fields the engine keeps rebuilt."""
    out = copy.deepcopy(doc)
    segs = segments(out, engine)
    for seg in segs:
        if seg.id in fixed:
            new_text, edits = fixed[seg.id]
            _recut_words(seg, new_text, edits)
            seg.text = new_text
    _place(out, engine, segs)
    return out


def _place(doc: dict[str, Any], engine: Engine, segs: list[EngineSegment]) -> None:
    """Segment texts back in the document, and the engine's whole-text fields made of them."""
    full = " ".join(s.text for s in segs)
    if engine is Engine.WHISPER:
        for raw, s in zip(doc["segments"], segs, strict=True):
            lead = str(raw["text"])[: len(str(raw["text"])) - len(str(raw["text"]).lstrip())]
            raw["text"] = lead + s.text
        if "text" in doc:
            doc["text"] = "".join(str(r["text"]) for r in doc["segments"])
    elif engine is Engine.DEEPGRAM:
        for (part, key), s in zip(_deepgram_parts(doc), segs, strict=True):
            part[key] = s.text
        utterances = doc["results"].get("utterances") or []
        for c, channel in enumerate(doc["results"].get("channels", []) if utterances else []):
            for alt in channel.get("alternatives", [])[:1]:  # the channel's text and words are its utterances'
                alt["transcript"] = " ".join(u["transcript"] for u in utterances if u.get("channel", 0) == c)
                if "words" in alt:
                    alt["words"] = [
                        copy.deepcopy(w) for u in utterances if u.get("channel", 0) == c for w in u["words"]
                    ]
    elif engine is Engine.ASSEMBLYAI:
        parts = _assemblyai_parts(doc)
        for part, s in zip(parts, segs, strict=True):
            part["text"] = s.text
        doc["text"] = full
        if doc.get("utterances") and "words" in doc:  # the transcript's words are its utterances'
            doc["words"] = [copy.deepcopy(w) for u in doc["utterances"] for w in u.get("words") or []]
    elif engine is Engine.GLADIA:
        for u, s in zip(_gladia_parts(doc), segs, strict=True):
            u["text"] = s.text
        transcription = doc["result"]["transcription"] if "result" in doc else doc["transcription"]
        if "full_transcript" in transcription:
            transcription["full_transcript"] = full
    elif engine is Engine.SPEECHMATICS:
        doc["results"] = [item for s in segs for item in s.words]  # its words are its text


def fixes_of(
    corrected: list[dict[str, str]], suggestions: list[Suggestion]
) -> dict[str, tuple[str, list[tuple[int, int, str]]]]:
    """Each changed segment's corrected text and the edits that made it (what an engine's words are re-cut by)."""
    edits: dict[str, list[tuple[int, int, str]]] = {}
    for s in suggestions:
        if s.status in WRITTEN_IN:
            edits.setdefault(s.segment_id, []).append((s.start_char, s.end_char, s.final))
    return {seg["id"]: (seg["text"], edits[seg["id"]]) for seg in corrected if seg["id"] in edits}
