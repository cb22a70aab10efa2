"""A bigger reading of a name that lost its words to a part of it is read by the bundled language model beside the
part, and the pass after the reading chooses (dev-file segments, their calls' whole lists)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from namesake.core.settings import Settings
from namesake.domain.types import CanonicalDictionary, Disposition, Segment
from namesake.language_model.local import LocalLanguageModel
from namesake.reliability.pipeline import PipelineInputs, run_stages

DATA = Path(__file__).parents[1] / "data/bigger_readings.json"
CALLS = {c["segment_id"]: c for c in json.loads(DATA.read_text())["calls"]}


def _kept(segment_id: str, lm: LocalLanguageModel | None) -> dict[str, tuple[str, Disposition]]:
    call = CALLS[segment_id]
    inputs = PipelineInputs([Segment("1", call["text"])], CanonicalDictionary(call["canonical_entities"]))
    kept, _ = run_stages(inputs, Settings(), language_model=lm)
    return {c.final: (c.original, c.disposition) for c in kept}


@pytest.mark.parametrize(
    ("segment_id", "final", "part", "whole"),
    [
        ("0193", "Cytiva", "Teva", "say Teva"),  # "both Paul and say Teva": "say Cytiva" was left
        ("0119", "eTouch", "touch", "He touch"),  # "here is He touch is on track": "He eTouch" was left
    ],
)
def test_the_whole_reading_of_a_name_is_read_beside_the_part_that_rated_higher(
    lm: LocalLanguageModel, segment_id: str, final: str, part: str, whole: str
) -> None:
    assert _kept(segment_id, None)[final][0] == part  # without the reading, the part keeps the words
    original, disposition = _kept(segment_id, lm)[final]
    assert original == whole
    assert disposition is not Disposition.DROPPED
