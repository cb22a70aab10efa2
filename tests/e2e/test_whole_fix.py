"""A half fix made whole over HTTP on the real stores: the page's offer, the whole pair taught, the half taken back."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from tests.e2e.conftest import AUTH

TEXT = "Cases of COVERT NINETEEN fell this quarter."


def _post(client: TestClient, path: str, body: dict[str, Any]) -> Any:
    return client.post(path, json=body, headers=AUTH)


def _memory(client: TestClient) -> set[str]:
    return {f"{c['original']}→{c['final']}" for c in client.get("/v1/users/ana/corrections", headers=AUTH).json()}


def test_a_half_fixed_by_hand_is_offered_whole_and_completing_it_teaches_the_whole_pair(client: TestClient) -> None:
    r = client.put("/v1/transcripts/t1/canonical-entities", json={"keywords": ["COVID-19"], "user_id": "ana"},
                   headers=AUTH)  # fmt: skip
    assert r.status_code == 200, r.text
    body = {"transcript_id": "t1", "user_id": "ana", "segments": [{"id": "1", "text": TEXT}]}
    assert _post(client, "/v1/reliability/analyze", body).status_code == 200
    start = TEXT.index("COVERT")
    half = _post(client, "/v1/corrections", {"user_id": "ana", "transcript_id": "t1", "segment_id": "1",
                                             "start_char": start, "end_char": start + 6, "original": "COVERT",
                                             "final": "COVID", "segment_text": TEXT})  # fmt: skip
    assert half.status_code == 201, half.text
    half_id = half.json()["suggestion"]["id"]
    assert "COVERT→COVID" in _memory(client)

    view = client.get("/v1/transcripts/t1", headers=AUTH).json()
    assert view["completions"][half_id] == {"start_char": start, "end_char": start + 15,
                                            "original": "COVERT NINETEEN", "final": "COVID-19"}  # fmt: skip

    done = _post(client, f"/v1/suggestions/{half_id}/complete", {"transcript_id": "t1"})
    assert done.status_code == 201, done.text
    whole = done.json()["suggestion"]
    assert (whole["original"], whole["final"], whole["status"]) == ("COVERT NINETEEN", "COVID-19", "validated")
    assert _memory(client) == {"COVERT NINETEEN→COVID-19"}  # the half's lesson taken back with it
    text = client.get("/v1/transcripts/t1/text", headers=AUTH).json()
    assert text["segments"][0]["text"] == "Cases of COVID-19 fell this quarter."
    assert client.get("/v1/transcripts/t1", headers=AUTH).json()["completions"] == {}

    again = _post(client, f"/v1/suggestions/{whole['id']}/complete", {"transcript_id": "t1"})
    assert again.status_code == 422 and again.json()["error"]["field"] == "suggestion_id"
    assert _memory(client) == {"COVERT NINETEEN→COVID-19"}  # nothing written by the refusal
