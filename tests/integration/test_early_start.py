"""A one-process run starts what its transcripts need before its stores are open, and nothing they do not need."""

from __future__ import annotations

import pytest

from namesake.analysis.early import early_inputs, start_early
from namesake.analysis.inputs import CheckedTranscript, TranscriptIn, check_limits
from namesake.core.settings import Settings
from namesake.language_model import local as scorer
from namesake.reliability.pipeline import would_read

ENTITIES = {"persons": ["Christelle Moreau"], "orgs": ["Cytiva", "Mitnou"]}


def _checked(text: str) -> CheckedTranscript:
    given = {"transcript_id": "t", "segments": [{"id": "1", "text": text}], "canonical_entities": ENTITIES}
    return check_limits(TranscriptIn.model_validate(given), Settings())


RARE = "Thanks to the Cytova team and to Meetnu."  # rare words heard for rare names: nothing to read
EVERYDAY = "Thanks, Crystal, and welcome to the call."  # an everyday word heard for a listed name


def test_only_a_transcript_with_an_everyday_word_heard_for_a_name_reads_a_window() -> None:
    assert not would_read(early_inputs(_checked(RARE)), Settings())
    assert would_read(early_inputs(_checked(EVERYDAY)), Settings())
    french = _checked(EVERYDAY)
    french.transcript.language = "fr"
    assert not would_read(early_inputs(french), Settings())  # the model reads English only


def test_the_early_start_loads_the_model_only_for_transcripts_that_read_a_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loaded: dict[tuple[str, str, str], object] = {}
    monkeypatch.setattr(scorer, "_LOADED", loaded)  # as a fresh process has it
    start_early(Settings(), [_checked(RARE), _checked(RARE)]).join(120)
    assert loaded == {}
    start_early(Settings(), [_checked(RARE), _checked(EVERYDAY)]).join(120)
    (model,) = loaded.values()
    assert isinstance(model, scorer.LocalLanguageModel)
    assert len(model._cache) == 1  # its warm-up read: the run's first inference does not pay for setting up
    start_early(Settings(reliability_language_model="none"), [_checked(EVERYDAY)]).join(120)
    assert len(loaded) == 1
