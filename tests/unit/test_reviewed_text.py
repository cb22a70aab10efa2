"""The reviewed transcript: what stands written in, what is open, and the text in the shapes it is handed on in."""

from __future__ import annotations

import datetime

import pytest
import srt
import webvtt

from namesake.domain.types import CandidateSource, Suggestion, SuggestionStatus
from namesake.review.reviewed import ReviewState, TimedSegment, as_reviewed, as_srt, as_text, as_vtt

TEXT = "Thanks to Reiner Blair and the Cytova team."
SEGMENTS = [
    TimedSegment("0", TEXT, 0.08, 3.2, "A"),
    TimedSegment("1", "The results are in from Backman.", 3.3, 65.25, "B"),
]


def _s(segment: str, original: str, final: str, status: SuggestionStatus, text: str = TEXT) -> Suggestion:
    start = text.index(original)
    return Suggestion(segment, start, start + len(original), original, final, "ORG", f"{segment}-{original}", 0.9,
                      status, CandidateSource.LISTS, {})  # fmt: skip


def test_applied_and_decided_fixes_are_written_in_and_the_open_ones_counted() -> None:
    t = as_reviewed(
        "call-1",
        SEGMENTS,
        [
            _s("0", "Reiner", "Rainer", SuggestionStatus.AUTO_APPLIED),
            _s("0", "Cytova", "Cytiva", SuggestionStatus.VALIDATED),
            _s("1", "Backman", "Beckman", SuggestionStatus.PENDING, SEGMENTS[1].text),
            _s("1", "results", "Results", SuggestionStatus.REJECTED, SEGMENTS[1].text),
        ],
    )
    assert [s.text for s in t.segments] == ["Thanks to Rainer Blair and the Cytiva team.",
                                            "The results are in from Backman."]  # fmt: skip
    assert (t.applied, t.open, t.state) == (2, 1, ReviewState.IN_REVIEW)
    assert t.as_json()["segments"][0] == {"id": "0", "text": t.segments[0].text, "start": 0.08, "end": 3.2,
                                          "speaker": "A"}  # fmt: skip


def test_with_nothing_open_the_transcript_is_done() -> None:
    t = as_reviewed("call-1", SEGMENTS, [_s("0", "Cytova", "Cytiva", SuggestionStatus.REJECTED)])
    assert (t.state, t.applied, t.segments[0].text) == (ReviewState.DONE, 0, TEXT)


def test_webvtt_is_read_back_by_a_webvtt_parser_with_the_input_times() -> None:
    t = as_reviewed("call-1", SEGMENTS, [_s("0", "Cytova", "Cytiva", SuggestionStatus.VALIDATED)])
    captions = webvtt.from_string(as_vtt(t)).captions
    assert [(c.identifier, c.start, c.end) for c in captions] == [("0", "00:00:00.080", "00:00:03.200"),
                                                                  ("1", "00:00:03.300", "00:01:05.250")]  # fmt: skip
    assert captions[0].text == "A: Thanks to Reiner Blair and the Cytiva team."


def test_srt_is_read_back_by_an_srt_parser_with_the_input_times() -> None:
    t = as_reviewed("call-1", SEGMENTS, [_s("0", "Reiner", "Rainer", SuggestionStatus.AUTO_APPLIED)])
    cues = list(srt.parse(as_srt(t)))
    assert [(c.index, c.start, c.end) for c in cues] == [
        (1, datetime.timedelta(seconds=0.08), datetime.timedelta(seconds=3.2)),
        (2, datetime.timedelta(seconds=3.3), datetime.timedelta(seconds=65.25)),
    ]
    assert cues[0].content == "A: Thanks to Rainer Blair and the Cytova team."


def test_plain_text_is_a_line_a_segment_with_its_speaker() -> None:
    t = as_reviewed("call-1", [TimedSegment("0", TEXT), TimedSegment("1", "Bye.", speaker="B")], [])
    assert as_text(t) == f"{TEXT}\nB: Bye.\n"


@pytest.mark.parametrize("text", ["two\n\nparagraphs", "an arrow --> inside"])
def test_a_cue_never_breaks_on_what_its_text_holds(text: str) -> None:
    t = as_reviewed("call-1", [TimedSegment("0", text, 1.0, 2.0)], [])
    assert len(webvtt.from_string(as_vtt(t)).captions) == 1
    assert len(list(srt.parse(as_srt(t)))) == 1
