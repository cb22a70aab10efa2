"""The HTTP API end to end on real PostgreSQL, the embedded Qdrant store and the bundled embedder."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.e2e.conftest import AUTH

ENTITIES = {"persons": ["Rainer Blair"], "orgs": ["Cytiva", "Beckman Coulter"], "acronyms": ["IDT"]}
TEXT = [
    "Good morning, this is Reiner Blair with the results.",
    "Our Cytova unit grew, and Backman Coulter too.",
    "Zorblax joined the call about IDT.",
]


@pytest.fixture
def client(bounded_client: TestClient) -> TestClient:
    """The app with small bounds (50 segments, 200 kB), which the limits tests cross."""
    return bounded_client


def _transcript(tid: str, user: str = "alice") -> dict[str, Any]:
    return {"transcript_id": tid, "user_id": user, "segments": [{"id": str(i), "text": t} for i, t in enumerate(TEXT)]}


def _analyze(client: TestClient, tid: str, user: str = "alice") -> dict[str, Any]:
    r = client.put(f"/v1/transcripts/{tid}/canonical-entities", json={**ENTITIES, "user_id": user}, headers=AUTH)
    assert r.status_code == 200, r.text
    r = client.post("/v1/reliability/analyze", json=_transcript(tid, user), headers=AUTH)
    assert r.status_code == 200, r.text
    return r.json()


def _by_original(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["original"]: s for s in result["suggestions"]}


def test_the_reviewers_loop_teaches_the_next_analysis(client: TestClient) -> None:
    first = _by_original(_analyze(client, "meeting-1"))
    assert {"Reiner", "Cytova", "Backman"} <= set(first)
    post = lambda path, body: client.post(path, json=body, headers=AUTH)  # noqa: E731
    r = post(f"/v1/suggestions/{first['Reiner']['id']}/accept", {"transcript_id": "meeting-1"})
    assert r.status_code == 200 and r.json()["memory"] == "new" and r.json()["suggestion"]["status"] == "validated"
    r = post(f"/v1/suggestions/{first['Cytova']['id']}/edit", {"transcript_id": "meeting-1", "final": "Cytiva Ltd"})
    assert r.status_code == 200 and r.json()["suggestion"]["final"] == "Cytiva Ltd"
    r = post(f"/v1/suggestions/{first['Backman']['id']}/reject", {"transcript_id": "meeting-1"})
    assert r.status_code == 200 and r.json()["suggestion"]["status"] == "rejected" and r.json()["memory"] is None
    manual = {"user_id": "alice", "transcript_id": "meeting-1", "segment_id": "2", "start_char": 0, "end_char": 7,
              "original": "Zorblax", "final": "Zorblax Inc", "entity_type": "ORG", "segment_text": TEXT[2]}  # fmt: skip
    r = post("/v1/corrections", manual)
    assert r.status_code == 201 and r.json()["suggestion"]["source"] == "manual"

    corrections = client.get("/v1/users/alice/corrections", headers=AUTH).json()
    assert {(c["original"], c["final"], c["action"]) for c in corrections} == {
        ("Reiner", "Rainer", "accept"), ("Cytova", "Cytiva Ltd", "edit"), ("Zorblax", "Zorblax Inc", "manual")
    }  # fmt: skip
    contexts = {c["original"]: c["context_phrase"] for c in corrections}
    assert contexts["Reiner"] == TEXT[0] and contexts["Cytova"] == TEXT[1]  # every write keeps the words around it

    second = _by_original(_analyze(client, "meeting-2"))
    assert second["Reiner"]["signals"]["memory_bonus"] > 0
    assert second["Reiner"]["confidence"] > first["Reiner"]["confidence"]
    assert second["Cytova"]["final"] == "Cytiva Ltd"  # the edit is what comes back
    assert "Backman" not in second  # refused once, never again
    assert second["Zorblax"]["final"] == "Zorblax Inc"  # the manual fix is now suggested
    # another user learns nothing from alice
    other = _by_original(_analyze(client, "meeting-3", user="bob"))
    assert "Zorblax" not in other and "memory_bonus" not in other["Reiner"]["signals"]


def test_accepting_twice_is_idempotent_and_impossible_transitions_conflict(client: TestClient) -> None:
    sugg = _by_original(_analyze(client, "m1"))
    accept = f"/v1/suggestions/{sugg['Reiner']['id']}/accept"
    assert client.post(accept, json={"transcript_id": "m1"}, headers=AUTH).status_code == 200
    again = client.post(accept, json={"transcript_id": "m1"}, headers=AUTH)
    assert again.status_code == 200 and again.json()["memory"] is None
    assert [c["frequency"] for c in client.get("/v1/users/alice/corrections", headers=AUTH).json()] == [1]
    r = client.post(f"/v1/suggestions/{sugg['Reiner']['id']}/reject", json={"transcript_id": "m1"}, headers=AUTH)
    assert r.status_code == 409 and r.json()["error"]["code"] == "CONFLICT"
    client.post(f"/v1/suggestions/{sugg['Cytova']['id']}/reject", json={"transcript_id": "m1"}, headers=AUTH)
    r = client.post(f"/v1/suggestions/{sugg['Cytova']['id']}/accept", json={"transcript_id": "m1"}, headers=AUTH)
    assert r.status_code == 409


def test_auth_401_403_and_open_probes_that_reveal_nothing(client: TestClient) -> None:
    assert client.get("/healthz").status_code == 200
    r = client.get("/v1/users/alice/corrections")
    assert r.status_code == 401 and r.json()["error"]["code"] == "UNAUTHORIZED"
    assert client.get("/v1/users/alice/corrections", headers={"Authorization": "Bearer nope"}).status_code == 403
    r = client.get("/readyz")  # an orchestrator's probe has no key (the compose health check)
    assert r.status_code == 200
    assert r.json() == {"status": "ready", "checks": {"postgresql": "ok", "vector_store": "ok"}}


def test_docs_are_served_from_the_package_and_metrics_include_the_process(client: TestClient) -> None:
    page = client.get("/docs").text
    assert "cdn" not in page.casefold() and "/static-offline-docs/swagger-ui-bundle.js" in page
    assert client.get("/static-offline-docs/swagger-ui-bundle.js").status_code == 200
    assert "/static-offline-docs/redoc.standalone.js" in client.get("/redoc").text
    metrics = client.get("/metrics", headers=AUTH).text
    assert "process_resident_memory_bytes" in metrics and "python_gc_collections_total" in metrics


def test_other_transcripts_suggestions_are_404_not_a_leak(client: TestClient) -> None:
    mine = _by_original(_analyze(client, "mine"))
    _analyze(client, "theirs", user="mallory")
    sid = mine["Reiner"]["id"]
    r = client.post(f"/v1/suggestions/{sid}/accept", json={"transcript_id": "theirs"}, headers=AUTH)
    assert r.status_code == 404 and "theirs" in r.json()["error"]["message"]
    for bad in (str(uuid.uuid4()), "not-a-uuid"):
        assert (
            client.post(f"/v1/suggestions/{bad}/accept", json={"transcript_id": "mine"}, headers=AUTH).status_code
            == 404
        )
    r = client.post("/v1/reliability/analyze", json=_transcript("mine", user="mallory"), headers=AUTH)
    assert r.status_code == 409  # a transcript belongs to one user


def test_limits_answer_413_naming_the_field(client: TestClient) -> None:
    many = {"transcript_id": "big", "segments": [{"id": str(i), "text": "x"} for i in range(51)]}
    r = client.post("/v1/reliability/analyze", json=many, headers=AUTH)
    assert r.status_code == 413 and r.json()["error"]["field"] == "segments"
    huge = {"transcript_id": "huge", "segments": [{"id": "1", "text": "y" * 300_000}]}
    assert client.post("/v1/reliability/analyze", json=huge, headers=AUTH).status_code == 413
    sugg = _by_original(_analyze(client, "lim"))
    r = client.post(f"/v1/suggestions/{sugg['Reiner']['id']}/edit", json={"transcript_id": "lim", "final": "z" * 501},
                    headers=AUTH)  # fmt: skip
    assert r.status_code == 413 and r.json()["error"]["field"] == "final"


def test_broken_json_is_422_and_metrics_count_requests(client: TestClient) -> None:
    r = client.post(
        "/v1/reliability/analyze", content=b"{not json", headers={**AUTH, "Content-Type": "application/json"}
    )
    assert r.status_code == 422
    _analyze(client, "metrics")
    text = client.get("/metrics", headers=AUTH).text
    assert 'namesake_http_requests_total{method="POST",route="/v1/reliability/analyze",status="200"} 1.0' in text
    assert "namesake_gate_hits_total" in text and "namesake_candidates_total" in text


def test_a_form_only_manual_fix_comes_back(client: TestClient) -> None:
    text = "we moved the logs to Data Dog last week"
    fix = {"user_id": "alice", "transcript_id": "form-1", "segment_id": "1", "start_char": 21, "end_char": 29,
           "original": "Data Dog", "final": "Datadog", "entity_type": "ORG", "segment_text": text}  # fmt: skip
    assert client.post("/v1/corrections", json=fix, headers=AUTH).status_code == 201
    body = {"transcript_id": "form-2", "user_id": "alice", "segments": [{"id": "1", "text": text}]}
    suggestions = client.post("/v1/reliability/analyze", json=body, headers=AUTH).json()["suggestions"]
    assert [(s["original"], s["final"]) for s in suggestions] == [("Data Dog", "Datadog")]
    assert suggestions[0]["status"] in ("pending", "auto_applied")


def test_a_transcript_named_like_a_system_collection_never_touches_it(client: TestClient) -> None:
    from namesake.core.settings import CORRECTIONS_COLLECTION

    fix = {"user_id": "bob", "transcript_id": "b-1", "segment_id": "1", "start_char": 0, "end_char": 6,
           "original": "Cytova", "final": "Cytiva", "entity_type": "ORG", "segment_text": "Cytova grew"}  # fmt: skip
    assert client.post("/v1/corrections", json=fix, headers=AUTH).status_code == 201
    body = {"user_id": "mallory", "orgs": ["Acme"]}
    r = client.put(f"/v1/transcripts/{CORRECTIONS_COLLECTION}/canonical-entities", json=body, headers=AUTH)
    assert r.status_code == 200
    assert client.delete("/v1/users/mallory", headers=AUTH).json()["remaining"] == {"qdrant_points": 0, "rows": 0}
    again = {**fix, "transcript_id": "b-2", "original": "Beckmann", "end_char": 8, "segment_text": "Beckmann grew"}
    assert client.post("/v1/corrections", json=again, headers=AUTH).status_code == 201  # the collection still exists
    assert len(client.get("/v1/users/bob/corrections", headers=AUTH).json()) == 2


def test_a_manual_fix_is_checked_once_where_it_is_made_and_nothing_is_written(client: TestClient) -> None:
    fix = {"user_id": "carol", "transcript_id": "c-1", "segment_id": "1", "start_char": 0, "end_char": 50,
           "original": "abc", "final": "Abc Corp", "segment_text": "abc def"}  # fmt: skip
    for bad, field in (({}, "end_char"), ({"end_char": 3, "original": "abd"}, "original"), ({"extra": 1}, "extra")):
        r = client.post("/v1/corrections", json={**fix, **bad}, headers=AUTH)
        assert r.status_code == 422 and r.json()["error"]["field"] == field
    assert client.get("/v1/users/carol/corrections", headers=AUTH).json() == []


def test_a_manual_fix_sent_twice_counts_once_and_a_failed_one_leaves_nothing(client: TestClient) -> None:
    from namesake.core.settings import CORRECTIONS_COLLECTION

    fix = {"user_id": "fred", "transcript_id": "f-1", "segment_id": "1", "start_char": 0, "end_char": 6,
           "original": "Cytova", "final": "Cytiva", "segment_text": "Cytova grew"}  # fmt: skip
    first = client.post("/v1/corrections", json=fix, headers=AUTH)
    again = client.post("/v1/corrections", json=fix, headers=AUTH)  # a client retrying after a timeout
    assert first.status_code == again.status_code == 201 and again.json()["memory"] == "replay"
    assert first.json()["suggestion"]["id"] == again.json()["suggestion"]["id"]
    assert [c["frequency"] for c in client.get("/v1/users/fred/corrections", headers=AUTH).json()] == [1]
    client.app.state.services.runtime.vectors.drop_collection(CORRECTIONS_COLLECTION)  # type: ignore[attr-defined]
    other = {**fix, "user_id": "gina", "transcript_id": "f-2"}
    assert client.post("/v1/corrections", json=other, headers=AUTH).status_code == 503
    assert client.get("/v1/transcripts/f-2/suggestions", headers=AUTH).json() == []  # no row left behind
    assert client.get("/v1/transcripts/f-2", headers=AUTH).status_code == 404  # nor the transcript it named
    assert client.get("/v1/transcripts?user_id=gina", headers=AUTH).json() == []


def test_what_a_reviewer_taught_is_exported_in_every_engines_shape(client: TestClient) -> None:
    first = _by_original(_analyze(client, "vocab-1"))
    post = lambda path, body: client.post(path, json=body, headers=AUTH)  # noqa: E731
    assert post(f"/v1/suggestions/{first['Reiner']['id']}/accept", {"transcript_id": "vocab-1"}).status_code == 200
    manual = {"user_id": "alice", "transcript_id": "vocab-1", "segment_id": "2", "start_char": 0, "end_char": 7,
              "original": "Zorblax", "final": "Zorblax Inc", "entity_type": "ORG", "segment_text": TEXT[2]}  # fmt: skip
    assert post("/v1/corrections", manual).status_code == 201
    get = lambda fmt: client.get(f"/v1/users/alice/vocabulary?format={fmt}", headers=AUTH)  # noqa: E731
    assert "Rainer" in get("deepgram").json()["keyterm"] and "Zorblax:Zorblax Inc" in get("deepgram").json()["replace"]
    assert {"from": ["Zorblax"], "to": "Zorblax Inc"} in get("assemblyai").json()["custom_spelling"]
    assert {"content": "Rainer", "sounds_like": ["Reiner"]} in get("speechmatics").json()["additional_vocab"]
    assert get("gladia").json()["custom_spelling_config"]["spelling_dictionary"]["Rainer"] == ["Reiner"]
    assert "Zorblax Inc" in get("whisper").json()["prompt"]
    terms = {t["term"]: t for t in get("json").json()["terms"]}
    assert terms["Rainer"]["spellings"] == ["Reiner"] and terms["Zorblax Inc"]["sources"] == ["correction"]
    with_list = client.get("/v1/users/alice/vocabulary?format=json&transcript_id=vocab-1", headers=AUTH).json()
    assert "Cytiva" in {t["term"] for t in with_list["terms"]}  # the transcript's canonical list added
    bad = get("siri")
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "format"


def test_a_decision_that_fails_teaches_nothing(client: TestClient) -> None:
    """The suggestion's status and the correction it teaches commit together: a refused UPDATE leaves no memory."""
    from sqlalchemy import text

    from namesake.core.settings import CORRECTIONS_COLLECTION

    runtime = client.app.state.services.runtime  # type: ignore[attr-defined]
    first = _by_original(_analyze(client, "fail-1"))
    with runtime.db.engine.begin() as conn:
        conn.execute(text("""
            CREATE OR REPLACE FUNCTION refuse_cytova() RETURNS trigger AS $$
            BEGIN IF NEW.original = 'Cytova' THEN RAISE EXCEPTION 'decision refused'; END IF; RETURN NEW; END
            $$ LANGUAGE plpgsql;
            CREATE TRIGGER refuse_cytova BEFORE UPDATE ON suggestions FOR EACH ROW EXECUTE FUNCTION refuse_cytova();
        """))  # fmt: skip
    try:
        points = runtime.vectors.count(CORRECTIONS_COLLECTION)
        r = client.post(
            f"/v1/suggestions/{first['Cytova']['id']}/accept", json={"transcript_id": "fail-1"}, headers=AUTH
        )
        assert r.status_code == 503
        assert client.get("/v1/users/alice/corrections", headers=AUTH).json() == []
        assert runtime.vectors.count(CORRECTIONS_COLLECTION) == points
        assert _by_original({"suggestions": client.get("/v1/transcripts/fail-1/suggestions", headers=AUTH).json()})[
            "Cytova"]["status"] == first["Cytova"]["status"]  # fmt: skip
    finally:
        with runtime.db.engine.begin() as conn:
            conn.execute(text("DROP TRIGGER refuse_cytova ON suggestions"))
    r = client.post(f"/v1/suggestions/{first['Cytova']['id']}/accept", json={"transcript_id": "fail-1"}, headers=AUTH)
    assert r.status_code == 200 and r.json()["memory"] == "new"  # the retry teaches it, once


def test_entity_types_as_the_spec_writes_them_are_stored_in_one_form(client: TestClient) -> None:
    fix = {"user_id": "dana", "transcript_id": "d-1", "segment_id": "1", "start_char": 0, "end_char": 6,
           "original": "Reiner", "final": "Rainer", "entity_type": "person",
           "segment_text": "Reiner spoke"}  # fmt: skip
    r = client.post("/v1/corrections", json=fix, headers=AUTH)
    assert r.status_code == 201, r.text
    assert r.json()["suggestion"]["entity_type"] == "PERSON"
    assert [c["entity_type"] for c in client.get("/v1/users/dana/corrections", headers=AUTH).json()] == ["PERSON"]
    r = client.post("/v1/corrections", json={**fix, "entity_type": "people", "transcript_id": "d-2"}, headers=AUTH)
    assert r.status_code == 422 and r.json()["error"]["field"] == "entity_type"
    assert "person, org, location" in r.json()["error"]["message"]


def test_accepting_an_edge_word_teaches_nothing_and_editing_it_does(client: TestClient) -> None:
    body = {"transcript_id": "edge-1", "user_id": "alice", "canonical_entities": {"orgs": ["NextEra Energy Partners"]},
            "segments": [{"id": "1", "text": "Turning to extra energy partners, liquidity was strong."}]}  # fmt: skip
    found = _by_original(client.post("/v1/reliability/analyze", json=body, headers=AUTH).json())
    assert found["energy"]["final"] == "Energy" and found["energy"]["signals"]["edge_form"] == 1.0
    r = client.post(f"/v1/suggestions/{found['energy']['id']}/accept", json={"transcript_id": "edge-1"}, headers=AUTH)
    assert r.status_code == 200 and r.json()["suggestion"]["status"] == "validated" and r.json()["memory"] is None
    assert client.get("/v1/users/alice/corrections", headers=AUTH).json() == []
    later = {**body, "transcript_id": "edge-2", "segments": [{"id": "1", "text": "Our energy costs fell."}]}
    assert client.post("/v1/reliability/analyze", json=later, headers=AUTH).json()["suggestions"] == []
    edit = {"transcript_id": "edge-1", "final": "PARTNERS"}
    r = client.post(f"/v1/suggestions/{found['partners']['id']}/edit", json=edit, headers=AUTH)
    assert r.status_code == 200 and r.json()["memory"] == "new"  # the reviewer's own form is a correction
