"""Tenant-scoped API keys through the HTTP API: two tenants with the same ids never see each other."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from namesake.api.app import create_app
from namesake.core.settings import Settings
from tests.conftest import MakeRuntime

# configured exactly as an operator writes NAMESAKE_API_KEYS
KEYS = "root-key,acme-key:tenant-acme,beta-key:tenant-beta"
ROOT, ACME, BETA = ({"Authorization": f"Bearer {k}"} for k in ("root-key", "acme-key", "beta-key"))
ENTITIES = {"persons": ["Rainer Blair"], "orgs": ["Cytiva"]}
TEXT = ["Good morning, this is Reiner Blair with the results.", "Our Cytova unit grew."]


@pytest.fixture
def client(settings: Settings, make_runtime: MakeRuntime, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    monkeypatch.setenv("NAMESAKE_API_KEYS", KEYS)
    s = Settings(database_url=settings.database_url, namesake_data_dir=settings.namesake_data_dir)
    with TestClient(create_app(s, make_runtime(s))) as c:
        yield c


def _analyze(c: TestClient, auth: dict[str, str], tid: str = "t1", user: str = "alice") -> dict[str, Any]:
    r = c.put(f"/v1/transcripts/{tid}/canonical-entities", json={**ENTITIES, "user_id": user}, headers=auth)
    assert r.status_code == 200, r.text
    segments = [{"id": str(i), "text": t} for i, t in enumerate(TEXT)]
    r = c.post("/v1/reliability/analyze", json={"transcript_id": tid, "user_id": user, "segments": segments},
               headers=auth)  # fmt: skip
    assert r.status_code == 200, r.text
    return r.json()


def _reiner(result: dict[str, Any]) -> dict[str, Any]:
    return next(s for s in result["suggestions"] if s["original"] == "Reiner")


def test_two_tenants_with_the_same_ids_never_see_each_other(client: TestClient) -> None:
    acme = _analyze(client, ACME)
    assert acme["transcript_id"] == "t1"  # the ids come back as the tenant named them
    beta = _analyze(client, BETA)  # same transcript id, same user id: no 409, so no oracle either
    a_id, b_id = _reiner(acme)["id"], _reiner(beta)["id"]
    assert a_id != b_id

    # another tenant's suggestion is a 404, exactly like a missing one
    r = client.post(f"/v1/suggestions/{a_id}/accept", json={"transcript_id": "t1"}, headers=BETA)
    assert r.status_code == 404 and "acme" not in r.text
    r = client.post(f"/v1/suggestions/{a_id}/accept", json={"transcript_id": "t1"}, headers=ACME)
    assert r.status_code == 200 and r.json()["memory"] == "new"

    mine = client.get("/v1/users/alice/corrections", headers=ACME).json()
    assert [(c["transcript_id"], c["final"]) for c in mine] == [("t1", "Rainer")]
    assert client.get("/v1/users/alice/corrections", headers=BETA).json() == []
    suggestions = client.get("/v1/transcripts/t1/suggestions", headers=BETA).json()
    assert {s["id"] for s in suggestions} == {s["id"] for s in beta["suggestions"]}

    # acme's memory boosts acme's next transcript, never beta's
    assert _reiner(_analyze(client, ACME, "t2"))["signals"].get("memory_bonus", 0) > 0
    assert _reiner(_analyze(client, BETA, "t2"))["signals"].get("memory_bonus", 0) == 0
    terms = client.get("/v1/users/alice/vocabulary", headers=BETA).json()
    assert "Rainer" not in str(terms)

    # beta erasing its alice leaves acme's alice whole
    receipt = client.delete("/v1/users/alice", headers=BETA).json()
    assert receipt["user_id"] == "alice" and receipt["remaining"] == {"qdrant_points": 0, "rows": 0}
    assert len(client.get("/v1/users/alice/corrections", headers=ACME).json()) == 1

    # an admin names a tenant's user explicitly; the default namespace is another one again
    assert len(client.get("/v1/users/acme~alice/corrections", headers=ROOT).json()) == 1
    assert client.get("/v1/users/alice/corrections", headers=ROOT).json() == []


def test_a_tenant_cannot_forge_a_prefix_or_run_jobs(client: TestClient) -> None:
    r = client.get("/v1/users/acme~alice/corrections", headers=BETA)
    assert r.status_code == 422 and r.json()["error"]["field"] == "user_id"
    r = client.post("/v1/corrections", headers=BETA, json={
        "user_id": "bob", "transcript_id": "acme~t1", "segment_id": "0", "start_char": 0, "end_char": 4,
        "original": "Good", "final": "Gut"})  # fmt: skip
    assert r.status_code == 422 and r.json()["error"]["field"] == "transcript_id"
    for path in ("/v1/jobs/promotion/run", "/v1/jobs/reconciliation/run"):
        assert client.post(path, headers=ACME).status_code == 403
        assert client.post(path, headers=ROOT).status_code == 200
    assert client.get("/metrics", headers=ACME).status_code == 403
    assert client.get("/metrics", headers=ROOT).status_code == 200


def test_keys_never_reach_the_log(client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    _analyze(client, ACME)
    client.get("/v1/users/alice/corrections", headers={"Authorization": "Bearer wrong-key"})
    logged = caplog.text + "".join(str(r.args) for r in caplog.records)
    assert not any(k in logged for k in ("root-key", "acme-key", "beta-key", "wrong-key"))


def test_the_queue_and_the_transcript_view_are_the_tenants_own(client: TestClient) -> None:
    _analyze(client, ACME, "t1")
    _analyze(client, ACME, "t2", user="bob")
    _analyze(client, BETA, "t1")
    queue = client.get("/v1/transcripts", headers=ACME).json()
    assert [(q["transcript_id"], q["user_id"]) for q in queue] == [("t2", "bob"), ("t1", "alice")]  # newest first
    assert queue[1]["counts"]["total"] >= 2
    assert [q["transcript_id"] for q in client.get("/v1/transcripts?user_id=alice", headers=ACME).json()] == ["t1"]
    assert [q["user_id"] for q in client.get("/v1/transcripts", headers=BETA).json()] == ["alice"]
    assert client.get("/v1/transcripts", headers=ROOT).json() == []  # the default namespace has none
    view = client.get("/v1/transcripts/t1", headers=ACME).json()
    assert view["transcript_id"] == "t1" and view["user_id"] == "alice"
    assert [s["text"] for s in view["segments"]] == TEXT and view["suggestions"]
    assert client.get("/v1/transcripts/t2", headers=BETA).status_code == 404  # acme's t2 is not beta's


def test_forgetting_a_correction_is_the_users_own_and_pages_hold(client: TestClient) -> None:
    acme = _analyze(client, ACME)
    for s in acme["suggestions"]:
        assert client.post(f"/v1/suggestions/{s['id']}/accept", json={"transcript_id": "t1"}, headers=ACME).is_success
    everything = client.get("/v1/users/alice/corrections", headers=ACME).json()
    assert len(everything) >= 2
    first = client.get("/v1/users/alice/corrections?limit=1", headers=ACME)
    after = first.headers["X-Next-Before"]
    rest = client.get(f"/v1/users/alice/corrections?limit=100&before={after}", headers=ACME).json()
    assert first.json() + rest == everything and "X-Next-Before" not in client.get(
        "/v1/users/alice/corrections?limit=100", headers=ACME).headers  # fmt: skip

    target = everything[0]["id"]
    assert client.delete(f"/v1/users/alice/corrections/{target}", headers=BETA).status_code == 404
    assert client.delete(f"/v1/users/bob/corrections/{target}", headers=ACME).status_code == 404
    receipt = client.delete(f"/v1/users/alice/corrections/{target}", headers=ACME).json()
    assert receipt["user_id"] == "alice" and receipt["deleted"]["rows"] == 1
    assert receipt["remaining"] == {"rows": 0, "qdrant_points": 0}
    assert [c["id"] for c in client.get("/v1/users/alice/corrections", headers=ACME).json()] == [
        c["id"] for c in everything[1:]
    ]
    assert client.delete(f"/v1/users/alice/corrections/{target}", headers=ACME).status_code == 404


def test_deleting_a_transcript_touches_the_tenants_own_only(client: TestClient) -> None:
    _analyze(client, ACME, "t1")
    assert client.delete("/v1/transcripts/t1", headers=BETA).status_code == 404  # beta has no t1
    assert client.get("/v1/transcripts/t1", headers=ACME).status_code == 200
    receipt = client.delete("/v1/transcripts/t1", headers=ACME).json()
    assert receipt["transcript_id"] == "t1" and receipt["deleted"]["collections"] == 1
    assert client.get("/v1/transcripts/t1", headers=ACME).status_code == 404
    assert client.post("/v1/jobs/retention/run", headers=ACME).status_code == 403
    assert client.post("/v1/jobs/retention/run", headers=ROOT).json()["counts"] == {"expired": 0}


def test_the_queue_pages(client: TestClient) -> None:
    for i in range(3):
        _analyze(client, ACME, f"p{i}")
    first = client.get("/v1/transcripts?limit=2", headers=ACME).json()
    rest = client.get("/v1/transcripts?limit=2&offset=2", headers=ACME).json()
    assert [q["transcript_id"] for q in first + rest] == ["p2", "p1", "p0"]
    assert client.get("/v1/transcripts?offset=-1", headers=ACME).status_code == 422


def test_correction_ids_are_numbered_per_user_and_reveal_no_other_volume(client: TestClient) -> None:
    for i in range(3):  # acme's alice teaches three fixes
        fix = {"user_id": "alice", "transcript_id": f"n{i}", "segment_id": "1", "start_char": 0, "end_char": 7,
               "original": f"Zorbla{i}", "final": f"Zorblax{i}", "entity_type": "org"}  # fmt: skip
        assert client.post("/v1/corrections", json=fix, headers=ACME).status_code == 201
    first = {**fix, "user_id": "carol", "original": "Qorvex", "end_char": 6, "final": "Qorvex Inc"}
    assert client.post("/v1/corrections", json=first, headers=BETA).status_code == 201
    assert [c["id"] for c in client.get("/v1/users/carol/corrections", headers=BETA).json()] == [1]
    assert [c["id"] for c in client.get("/v1/users/alice/corrections", headers=ACME).json()] == [3, 2, 1]
