"""A name heard in pieces is proposed whole: pending pieces side by side whose finals are one list value."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from namesake.core.settings import Settings
from namesake.domain.types import Candidate, CandidateSource, CanonicalDictionary, Disposition, Segment
from namesake.reliability.edge_forms import EDGE_FORM
from namesake.reliability.pieces import PIECES, Piece, merged_pieces, piece_runs, seam_words, written_once
from namesake.reliability.pipeline import PipelineInputs, run_stages

DEV_CALL = Path(__file__).resolve().parent.parent / "data" / "dev_call.json.gz"

TEXT = "Thanks VJ Camara, and Gym Rabbo, over to Marcus."


def _cand(original: str, final: str, decision: Disposition, confidence: float, nth: int = 0) -> Candidate:
    start = TEXT.index(original) if nth == 0 else TEXT.index(original, TEXT.index(original) + 1)
    c = Candidate("1", start, start + len(original), original, final, "PERSON", CandidateSource.LISTS)
    c.disposition, c.confidence, c.signals = decision, confidence, {"edit": confidence}
    return c


def test_pending_pieces_of_one_value_become_one_suggestion_at_the_weakest_confidence() -> None:
    kept = [
        _cand("VJ", "Vijay", Disposition.PENDING, 0.45),
        _cand("Camara", "Kumar", Disposition.PENDING, 0.48),
        _cand("Gym", "Jim", Disposition.AUTO_APPLIED, 0.80),  # applied pieces already write the whole name
        _cand("Rabbo", "Robo", Disposition.AUTO_APPLIED, 0.88),
        _cand("Marcus", "Markus", Disposition.PENDING, 0.30),  # alone: nothing to join
    ]
    out = merged_pieces(kept, {"1": TEXT}, ["Vijay Kumar", "Jim Robo", "Markus Blanka"])
    assert [(c.original, c.final, c.disposition) for c in out] == [
        ("VJ Camara", "Vijay Kumar", Disposition.PENDING),
        ("Gym", "Jim", Disposition.AUTO_APPLIED),
        ("Rabbo", "Robo", Disposition.AUTO_APPLIED),
        ("Marcus", "Markus", Disposition.PENDING),
    ]
    whole = out[0]
    assert whole.confidence == 0.45 and whole.signals[PIECES] == 2.0
    assert TEXT[whole.start_char : whole.end_char] == "VJ Camara"


def test_pieces_apart_or_not_one_value_stay_apart() -> None:
    pieces = [
        Piece("1", 7, 9, "Vijay", True),  # "VJ"
        Piece("1", 10, 16, "Kumar", True),  # "Camara"
        Piece("1", 22, 25, "Jim", True),  # "Gym": a comma and words away from "Camara"
    ]
    assert piece_runs(pieces, {"1": TEXT}, ["Vijay Kumar"]) == [[0, 1]]
    assert piece_runs(pieces, {"1": TEXT}, ["Kumar Jim", "Vijay"]) == []  # joined, they name nothing listed
    across_comma = [Piece("1", 10, 16, "Kumar", True), Piece("1", 22, 25, "Jim", True)]
    assert piece_runs(across_comma, {"1": TEXT}, ["Kumar Jim"]) == []


def test_on_the_dev_call_an_analysts_name_heard_in_pieces_is_one_suggestion() -> None:
    """ "Tyco Pearson" for the analyst Tycho Peterson: "Tyco" → Tycho and "Pearson" → Peterson each alone, one now."""
    with gzip.open(DEV_CALL, "rt") as fh:
        call = json.load(fh)
    segment = next(s for s in call["segments"] if s["text"].startswith("Your next question comes from Tyco Pearson"))
    # every suggestion left for the reviewer (pieces applied by themselves are never merged: they write the name)
    settings = Settings(reliability_language_model="none", reliability_auto_apply_threshold=1.0)
    inputs = PipelineInputs([Segment(segment["id"], segment["text"])], CanonicalDictionary(call["canonical_entities"]))
    kept, _ = run_stages(inputs, settings)
    named = [(c.original, c.final, c.disposition, c.signals.get(PIECES)) for c in kept if "Peterson" in c.final]
    assert named == [("Tyco Pearson", "Tycho Peterson", Disposition.PENDING, 2.0)]


SEAM = "Thanks to next energy partners and next, era of growth."


def _at(original: str, final: str, decision: Disposition, nth: int = 0) -> Candidate:
    start = SEAM.index(original) if nth == 0 else SEAM.index(original, SEAM.index(original) + 1)
    c = Candidate("1", start, start + len(original), original, final, "ORG", CandidateSource.MEMORY)
    c.disposition, c.confidence = decision, 0.9
    return c


def test_two_fixes_side_by_side_never_write_the_same_words_twice() -> None:
    """ "next" → NextEra applied beside "energy" → NextEra Energy (both taught) read "NextEra NextEra Energy": the
    applied final stands and the other keeps only what it adds; one left with nothing to change goes."""
    assert seam_words("NextEra", "NextEra Energy") == 1 and seam_words("NextEra Energy", "Energy Partners") == 1
    assert seam_words("NextEra", "Energy") == 0
    kept = [
        _at("next", "NextEra", Disposition.AUTO_APPLIED),
        _at("energy", "NextEra Energy", Disposition.PENDING),
        _at("next", "NextEra", Disposition.PENDING, nth=1),  # across a comma, before an applied fix it repeats
        _at("era", "NextEra", Disposition.AUTO_APPLIED),
    ]
    out = written_once(kept, {"1": SEAM})
    assert [(c.original, c.final, c.disposition) for c in out] == [
        ("next", "NextEra", Disposition.AUTO_APPLIED),
        ("energy", "Energy", Disposition.PENDING),
        ("era", "NextEra", Disposition.AUTO_APPLIED),
    ]
    assert kept[1].final == "NextEra Energy"  # the stage's input is left as it was
    assert out[1].signals.get(EDGE_FORM) == 1.0  # a change of form left: the rest of a name, accepting teaches nothing


def test_words_heard_at_the_seam_are_not_a_repeat() -> None:
    """Both fixes heard the word they share ("Energy" in each span): nothing is trimmed; nor without an applied one."""
    text = "NextEra Energy Energy Partners"
    a = Candidate("1", 0, 14, "NextEra Energy", "NextEra Energy", "ORG", CandidateSource.LISTS)
    b = Candidate("1", 15, 30, "Energy Partners", "Energy Partners", "ORG", CandidateSource.LISTS)
    a.disposition = b.disposition = Disposition.AUTO_APPLIED
    assert [c.final for c in written_once([a, b], {"1": text})] == ["NextEra Energy", "Energy Partners"]
    pending = [_at("next", "NextEra", Disposition.PENDING), _at("energy", "NextEra Energy", Disposition.PENDING)]
    assert [c.final for c in written_once(pending, {"1": SEAM})] == ["NextEra", "NextEra Energy"]
