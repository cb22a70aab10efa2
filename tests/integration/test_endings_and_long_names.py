"""Dev-file segments the spotter reached only in part: a value and its -s form on the same words (the ending heard
chooses), a name longer than four words (its window is as long as the name), a value heard in a hyphened word.
Real spotter, bundled scorer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from namesake.core.settings import Settings
from namesake.domain.types import CanonicalDictionary, Disposition, Segment
from namesake.reliability.pipeline import PipelineInputs, RunStats, candidate_signals, run_stages

DATA = Path(__file__).parents[1] / "data/endings_and_long_names.json"
CALLS = {(c["transcript_id"], c["segment_id"]): c for c in json.loads(DATA.read_text())["calls"]}


def _inputs(transcript_id: str, segment_id: str) -> PipelineInputs:
    call = CALLS[(transcript_id, segment_id)]
    return PipelineInputs([Segment("1", call["text"])], CanonicalDictionary(call["canonical_entities"]))


def _readings(transcript_id: str, segment_id: str, heard: str, settings: Settings) -> set[str]:
    """The finals the spotter keeps for exactly these heard words."""
    cands = candidate_signals(_inputs(transcript_id, segment_id), settings, RunStats())
    return {c.final for c in cands if c.original == heard}


@pytest.mark.parametrize(
    ("transcript_id", "segment_id", "heard", "right", "contradicted"),
    [
        ("earnings21-4375653-amazon", "0136", "Illuminate", "Illumina", "Illumina's"),  # no s heard
        ("earnings21-4375653-speechmatics", "0020", "Illuminists", "Illumina's", "Illumina"),  # an s heard
        ("earnings21-4360674-speechmatics", "0055", "FPO", "FPL", "FPL's"),
    ],
)
def test_of_a_value_and_its_s_form_the_ending_heard_keeps_one(
    transcript_id: str, segment_id: str, heard: str, right: str, contradicted: str
) -> None:
    finals = _readings(transcript_id, segment_id, heard, Settings())
    assert right in finals
    assert contradicted not in finals


def test_the_illuminate_segment_is_suggested_as_illumina() -> None:
    kept, _ = run_stages(_inputs("earnings21-4375653-amazon", "0136"), Settings())
    mine = [c for c in kept if c.original == "Illuminate"]
    assert [c.final for c in mine] == ["Illumina"]
    assert mine[0].disposition is not Disposition.DROPPED


def test_a_five_word_name_heard_in_five_words_is_matched_whole() -> None:
    heard = "ministry of energy and minds"
    key = ("earnings21-4361631-rev-espnet", "0056")

    def whole(settings: Settings) -> set[tuple[str, str]]:
        """(words changed, final) of the readings matched on the five heard words (trimmed to what changes)."""
        cands = candidate_signals(_inputs(*key), settings, RunStats())
        return {(c.original, c.final) for c in cands if c.match_original == heard}

    assert whole(Settings(reliability_max_window_tokens=4)) == set()  # four-word windows: only parts of the name
    assert ("minds", "Mines") in whole(Settings())
    kept, _ = run_stages(_inputs(*key), Settings())
    assert any(c.original == "minds" and c.final == "Mines" for c in kept)


def test_the_list_s_covid_heard_as_covid_19_keeps_the_19() -> None:
    """The Danaher call lists COVID and says "covid-19": the reading keeps the hyphened part heard (COVID-19), never
    the bare value that would delete it ("manage covid-19 going" → "manage COVID going")."""
    call = json.loads((DATA.parent / "danaher_covid.json").read_text())
    heard = [s for s in call["segments"] if "covid-19" in s["text"]]
    inputs = PipelineInputs(
        [Segment(s["id"], s["text"]) for s in heard], CanonicalDictionary(call["canonical_entities"])
    )
    finals = {c.final for c in candidate_signals(inputs, Settings(), RunStats()) if c.original == "covid-19"}
    assert finals == {"COVID-19"}
    kept, _ = run_stages(inputs, Settings())
    assert {c.final for c in kept if "covid-19" in c.original} == {"COVID-19"}
