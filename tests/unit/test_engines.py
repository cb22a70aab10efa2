"""ASR engines' JSON read as transcripts and written back with fixes, times and the rest intact."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from namesake.analysis.engines import Engine, detect, language_code, segments, to_transcript, write_back
from namesake.core.errors import InvalidInputError

DATA = Path(__file__).resolve().parents[1] / "data" / "engines"
ENGINES = [Engine.WHISPER, Engine.DEEPGRAM, Engine.ASSEMBLYAI, Engine.SPEECHMATICS, Engine.GLADIA]
FIRST = "Thanks to Reiner Blair and the Cytova team."


def _doc(engine: Engine) -> dict[str, Any]:
    return json.loads((DATA / f"{engine.value}.json").read_text())


@pytest.mark.parametrize("engine", ENGINES)
def test_each_engines_example_is_recognised_by_its_shape(engine: Engine) -> None:
    assert detect(_doc(engine)) is engine


@pytest.mark.parametrize("engine", ENGINES)
def test_each_engines_segments_carry_their_text_times_and_speaker(engine: Engine) -> None:
    body = to_transcript(_doc(engine), engine, "call-1")
    first, second = body["segments"]
    assert first["text"] == FIRST and second["text"] == "The results are in."
    assert 0.0 <= first["start"] < first["end"] <= second["start"] < second["end"] == pytest.approx(5.0)
    if engine is not Engine.WHISPER:
        assert first["speaker"] != second["speaker"]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_fix_is_written_back_where_the_engine_keeps_its_text_and_its_words_re_cut(engine: Engine) -> None:
    doc = _doc(engine)
    start = FIRST.index("Cytova")
    fixed = FIRST.replace("Cytova", "Cytiva")
    out = write_back(doc, engine, {"0": (fixed, [(start, start + len("Cytova"), "Cytiva")])})
    again = segments(out, engine)
    assert [s.text for s in again] == [fixed, "The results are in."]
    assert "Cytova" not in json.dumps(out) and "cytova" not in json.dumps(out)
    words = [again[0].word_of(w).strip() for w in again[0].words]
    assert "Cytiva" in words and len(words) == len(segments(doc, engine)[0].words)
    assert _times(out) == _times(doc)  # every time as it was
    assert doc == _doc(engine)  # the input is left as given


def test_a_fix_over_several_words_becomes_one_word_timed_from_the_first_to_the_last() -> None:
    doc = _doc(Engine.ASSEMBLYAI)
    start = FIRST.index("Reiner")
    out = write_back(doc, Engine.ASSEMBLYAI, {"0": (FIRST.replace("Reiner Blair", "Rainer-Blair"),
                                                    [(start, start + 12, "Rainer-Blair")])})  # fmt: skip
    words = out["utterances"][0]["words"]
    merged = next(w for w in words if w["text"] == "Rainer-Blair")
    assert (merged["start"], merged["end"]) == (500, 1300) and len(words) == 7
    assert out["text"].startswith("Thanks to Rainer-Blair and the Cytova team.")


def test_a_document_no_engine_writes_is_refused_naming_what_is_taken() -> None:
    with pytest.raises(InvalidInputError, match="Whisper, Deepgram, AssemblyAI, Speechmatics or Gladia"):
        detect({"hello": "world"})


def test_a_document_named_as_another_engine_is_refused_naming_it() -> None:
    with pytest.raises(InvalidInputError, match="not deepgram JSON"):
        segments(_doc(Engine.WHISPER), Engine.DEEPGRAM)


def _times(doc: Any) -> list[float]:
    """Every start and end time in a document, except those a merged word took over."""
    found: list[float] = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k in ("start", "end", "start_time", "end_time") and isinstance(v, int | float):
                found.append(v)
            else:
                found += _times(v)
    elif isinstance(doc, list):
        for v in doc:
            found += _times(v)
    return sorted(set(found))


def test_an_engines_json_with_namesakes_keys_added_is_still_that_engines() -> None:
    # docs/transcripts.md: add transcript_id and canonical_entities beside the engine's keys
    doc = {**_doc(Engine.WHISPER), "transcript_id": "call-7", "canonical_entities": {"orgs": ["Cytiva"]}}
    assert detect(doc) is Engine.WHISPER
    doc["language"] = "english"  # as Whisper names what it heard
    assert to_transcript(doc, Engine.WHISPER, "call-7")["language"] == "en"
    assert detect({"transcript_id": "t", "segments": [{"id": "1", "text": "x", "start": 0.0, "end": 1.0}]}) is (
        Engine.NAMESAKE  # namesake's own shape with times stays namesake's
    )


@pytest.mark.parametrize(("given", "code"), [("english", "en"), ("French", "fr"), ("en_US", "en"), ("pt-BR", "pt")])
def test_a_language_is_carried_as_its_code(given: str, code: str) -> None:
    assert language_code(given) == code
