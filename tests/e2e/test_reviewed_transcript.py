"""The reviewed transcript over HTTP on the real stores: what the reviewer decided is the text handed on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import srt
import webvtt
from fastapi.testclient import TestClient

from tests.e2e.conftest import AUTH

ENTITIES = {"persons": ["Rainer Blair", "Christelle Dupont"], "orgs": ["Cytiva", "Beckman Coulter", "Radiometer"]}
SEGMENTS = [
    {"id": "1", "text": "Good morning everyone, and thanks Reiner Blair for hosting.", "start": 0.0, "end": 4.5,
     "speaker": "A"},
    {"id": "2", "text": "Our Cytova business grew, and Backman Coulter had a strong quarter.", "start": 4.5,
     "end": 9.25, "speaker": "B"},
    {"id": "3", "text": "Christelle Dupont thanks the Zorblax team and Radiometer.", "start": 9.25, "end": 12.0,
     "speaker": "A"},
]  # fmt: skip


def _analyze(client: TestClient, tid: str, segments: list[dict[str, Any]], user: str = "ana") -> dict[str, Any]:
    body = {"transcript_id": tid, "user_id": user, "segments": segments, "canonical_entities": ENTITIES}
    r = client.post("/v1/reliability/analyze", json=body, headers=AUTH)
    assert r.status_code == 200, r.text
    return dict(r.json())


def _by_original(answer: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["original"]: s for s in answer["suggestions"]}


def _post(client: TestClient, path: str, body: dict[str, Any], status: int = 200) -> dict[str, Any]:
    r = client.post(path, json=body, headers=AUTH)
    assert r.status_code == status, r.text
    return dict(r.json())


def _text(client: TestClient, tid: str, fmt: str = "json") -> Any:
    r = client.get(f"/v1/transcripts/{tid}/text", params={"format": fmt}, headers=AUTH)
    assert r.status_code == 200, r.text
    return r.json() if fmt == "json" else r


def test_the_reviewed_text_holds_exactly_what_was_applied_and_decided_and_a_new_analysis_keeps_it(
    client: TestClient,
) -> None:
    first = _by_original(_analyze(client, "call-1", SEGMENTS))
    assert {"Reiner", "Cytova", "Backman"} <= first.keys()
    decide = {"transcript_id": "call-1"}
    _post(client, f"/v1/suggestions/{first['Reiner']['id']}/accept", decide)
    _post(client, f"/v1/suggestions/{first['Cytova']['id']}/edit", {**decide, "final": "Cytiva Inc"})
    _post(client, f"/v1/suggestions/{first['Backman']['id']}/reject", decide)
    text3 = SEGMENTS[2]["text"]
    start = text3.index("Zorblax")
    fix = {"user_id": "ana", "transcript_id": "call-1", "segment_id": "3", "start_char": start,
           "end_char": start + 7, "original": "Zorblax", "final": "Zorblacks", "entity_type": "ORG"}  # fmt: skip
    _post(client, "/v1/corrections", fix, status=201)
    _post(client, f"/v1/suggestions/{first['Reiner']['id']}/reopen", decide)  # the accept taken back

    reviewed = _text(client, "call-1")
    reiner_written = first["Reiner"]["status"] == "auto_applied"  # reopened: as the pipeline left it
    expected = [
        SEGMENTS[0]["text"].replace("Reiner", "Rainer") if reiner_written else SEGMENTS[0]["text"],
        "Our Cytiva Inc business grew, and Backman Coulter had a strong quarter.",
        text3.replace("Zorblax", "Zorblacks"),
    ]
    assert [s["text"] for s in reviewed["segments"]] == expected
    assert [(s["start"], s["end"], s["speaker"]) for s in reviewed["segments"]] == [
        (s["start"], s["end"], s["speaker"]) for s in SEGMENTS
    ]
    view = client.get("/v1/transcripts/call-1", headers=AUTH).json()
    assert reviewed["open"] == sum(s["status"] == "pending" for s in view["suggestions"])
    assert reviewed["state"] == ("done" if reviewed["open"] == 0 else "in_review")

    again = _analyze(client, "call-1", SEGMENTS)
    assert _text(client, "call-1") == reviewed
    listed = {(s["original"], s["final"], s["status"]) for s in again["suggestions"]}
    assert listed == {(s["original"], s["final"], s["status"]) for s in view["suggestions"]}
    assert again["stats"]["suggestions"] == len(again["suggestions"])
    assert [s["text"] for s in again["corrected_segments"]] == expected
    assert ("Backman", "Beckman", "rejected") in listed or ("Backman Coulter", "Beckman Coulter", "rejected") in listed
    open_pairs = {
        (s["original"], s["final"]) for s in again["suggestions"] if s["status"] in ("pending", "auto_applied")
    }
    assert not {p for p in open_pairs if p[0].startswith("Backman")}


def test_a_forgotten_correction_and_a_refused_pair_leave_the_open_suggestions_on_a_new_analysis(
    client: TestClient,
) -> None:
    text3 = SEGMENTS[2]["text"]
    start = text3.index("Zorblax")
    _analyze(client, "taught-here", SEGMENTS)
    fix = {"user_id": "ana", "transcript_id": "taught-here", "segment_id": "3", "start_char": start,
           "end_char": start + 7, "original": "Zorblax", "final": "Zorblacks", "entity_type": "ORG"}  # fmt: skip
    _post(client, "/v1/corrections", fix, status=201)
    later = [{"id": "1", "text": "The Zorblax numbers are in, said Reiner Blair."}]
    remembered = _by_original(_analyze(client, "next-call", later))
    assert remembered["Zorblax"]["final"] == "Zorblacks"  # the fix comes back in the next call
    _post(client, f"/v1/suggestions/{remembered['Reiner']['id']}/reject", {"transcript_id": "next-call"})
    correction = client.get("/v1/users/ana/corrections", headers=AUTH).json()[0]
    assert client.delete(f"/v1/users/ana/corrections/{correction['id']}", headers=AUTH).status_code == 200

    _analyze(client, "next-call", later)
    view = client.get("/v1/transcripts/next-call", headers=AUTH).json()
    still_open = {
        (s["original"], s["final"]) for s in view["suggestions"] if s["status"] in ("pending", "auto_applied")
    }
    assert ("Zorblax", "Zorblacks") not in still_open
    assert not {p for p in still_open if p[0] == "Reiner"}
    assert [s["original"] for s in view["suggestions"] if s["status"] == "rejected"] == ["Reiner"]


def test_the_reviewed_text_as_subtitles_keeps_the_input_times(client: TestClient) -> None:
    _analyze(client, "call-2", SEGMENTS)
    vtt = _text(client, "call-2", "vtt")
    assert vtt.headers["content-type"].startswith("text/vtt")
    captions = webvtt.from_string(vtt.text).captions
    assert [(c.start, c.end) for c in captions] == [("00:00:00.000", "00:00:04.500"), ("00:00:04.500", "00:00:09.250"),
                                                    ("00:00:09.250", "00:00:12.000")]  # fmt: skip
    cues = list(srt.parse(_text(client, "call-2", "srt").text))
    assert [c.end.total_seconds() for c in cues] == [4.5, 9.25, 12.0]
    assert _text(client, "call-2", "txt").text.splitlines()[1].startswith("B: Our ")


def test_subtitles_of_a_transcript_without_times_are_refused_naming_what_to_ask_for(client: TestClient) -> None:
    _analyze(client, "no-times", [{"id": "1", "text": "Thanks Reiner Blair."}])
    r = client.get("/v1/transcripts/no-times/text", params={"format": "srt"}, headers=AUTH)
    assert r.status_code == 422 and "ask for txt or json" in r.json()["error"]["message"]
    assert client.get("/v1/transcripts/unknown/text", headers=AUTH).status_code == 404


def test_a_json_body_sent_as_curl_d_sends_it_is_read_as_json_and_a_form_is_refused_saying_what_to_send(
    client: TestClient,
) -> None:
    body = {"transcript_id": "curl-d", "segments": [{"id": "1", "text": "Thanks Reiner Blair."}]}
    form = {**AUTH, "Content-Type": "application/x-www-form-urlencoded"}
    r = client.post("/v1/reliability/analyze", content=json.dumps(body), headers=form)
    assert r.status_code == 200, r.text
    r = client.post("/v1/reliability/analyze", content="transcript_id=x", headers=form)
    assert r.status_code == 415
    assert r.json()["error"]["message"].endswith("send JSON with Content-Type: application/json")
    assert r.json()["error"]["field"] == "Content-Type"


@pytest.mark.parametrize(
    ("path", "content_type", "body"),
    [
        ("/v1/reliability/analyze", "application/xml", b"<transcript id='x'/>"),
        ("/v1/reliability/analyze", "multipart/form-data; boundary=x", b"--x\r\n\r\n{}\r\n--x--"),
        ("/v1/corrections", "image/png", b"\x89PNG\r\n\x1a\n"),
        ("/v1/corrections", "application/xml", b'{"user_id": "u"}'),  # JSON bytes, but said to be XML
    ],
)
def test_every_body_that_is_not_json_is_415_naming_its_type_and_what_to_send(
    client: TestClient, path: str, content_type: str, body: bytes
) -> None:
    r = client.post(path, content=body, headers={**AUTH, "Content-Type": content_type})
    assert r.status_code == 415, r.text
    error = r.json()["error"]
    assert error["field"] == "Content-Type" and content_type.split(";")[0] in error["message"]
    assert "ManualFix" not in r.text


def test_a_body_that_is_no_json_object_is_422_on_every_route_naming_the_body(client: TestClient) -> None:
    for path in ("/v1/corrections", "/v1/reliability/analyze"):
        r = client.post(path, content="[]", headers={**AUTH, "Content-Type": "application/json"})
        assert r.status_code == 422 and r.json()["error"] == {
            "code": "INVALID_INPUT", "message": "the body must be a JSON object", "field": "body"}  # fmt: skip


def test_the_analyse_route_takes_an_engines_json_and_answers_it_back_fixed_with_its_times(
    client: TestClient,
) -> None:
    doc = json.loads((Path(__file__).resolve().parents[1] / "data" / "engines" / "gladia.json").read_text())
    body = {**doc, "user_id": "ana", "canonical_entities": ENTITIES}
    r = client.post("/v1/reliability/analyze/gladia", params={"apply": "true"}, json=body, headers=AUTH)
    assert r.status_code == 200, r.text
    answer = r.json()
    assert answer["transcript_id"] == doc["id"] and answer["suggestions"]
    utterance = answer["applied"]["result"]["transcription"]["utterances"][0]
    assert utterance["text"] == "Thanks to Rainer Blair and the Cytiva team."
    assert (utterance["start"], utterance["end"]) == (0.08, 3.2)
    wrong = client.post("/v1/reliability/analyze/deepgram", json=body, headers=AUTH)
    assert wrong.status_code == 422 and "not deepgram JSON" in wrong.json()["error"]["message"]
