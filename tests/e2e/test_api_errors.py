"""The HTTP API's answers to what it cannot take: each error the JSON envelope naming what is wrong, with a request
id, nothing written; PostgreSQL down answers 503."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from namesake.adapters.db import Database
from namesake.api.app import create_app
from namesake.core.settings import Settings
from tests.conftest import MakeRuntime, tuned
from tests.e2e.conftest import AUTH, KEY


@pytest.fixture
def client(bounded_client: TestClient) -> TestClient:
    """The app with small bounds (50 segments, 200 kB), which the oversized bodies cross."""
    return bounded_client


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("post", "/v1/reliability/analyze", {"segments": []}, "transcript_id"),
        ("post", "/v1/reliability/analyze", {"transcript_id": "t", "segments": [{"id": "1"}]}, "segments.0.text"),
        ("post", "/v1/reliability/analyze", {"transcript_id": "t", "segments": []}, "segments"),
        ("post", "/v1/reliability/analyze", {"transcript_id": "../t", "segments": [{"id": 1, "text": ""}]},
         "transcript_id"),
        ("post", "/v1/reliability/analyze", [1, 2], None),
        ("put", "/v1/transcripts/t/canonical-entities", {"people": ["x"]}, "people"),
        ("put", "/v1/transcripts/t/canonical-entities", {"persons": "x"}, "persons"),
        ("post", "/v1/corrections", {"user_id": "u"}, "transcript_id"),
        ("post", f"/v1/suggestions/{uuid.uuid4()}/edit", {"transcript_id": "t", "final": ""}, "final"),
    ],
)  # fmt: skip
def test_malformed_bodies_are_422_naming_the_field(
    client: TestClient, method: str, path: str, body: object, field: str | None
) -> None:
    r = getattr(client, method)(path, json=body, headers=AUTH)
    assert r.status_code == 422, r.text
    err = r.json()["error"]
    assert err["code"] == "INVALID_INPUT" and (field is None or err["field"] == field)


def test_every_answer_carries_a_request_id_and_the_callers_is_echoed(client: TestClient) -> None:
    mine = client.get("/v1/users/nobody/corrections", headers={**AUTH, "X-Request-ID": "req-42"})
    assert mine.headers["X-Request-ID"] == "req-42"
    a, b = client.get("/healthz"), client.get("/healthz")
    assert len(a.headers["X-Request-ID"]) == 32 and a.headers["X-Request-ID"] != b.headers["X-Request-ID"]


def test_log_lines_are_json_with_the_request_id() -> None:
    import logging

    from namesake.core.logs import JsonFormatter, RequestIdFilter, request_id

    token = request_id.set("req-7")
    try:
        record = logging.LogRecord("namesake.test", logging.WARNING, __file__, 1, "store %s", ("down",), None)
        RequestIdFilter().filter(record)
    finally:
        request_id.reset(token)
    line = json.loads(JsonFormatter().format(record))
    assert line["request_id"] == "req-7" and line["message"] == "store down" and line["level"] == "WARNING"


def test_every_error_is_the_json_envelope_and_a_store_failure_leaks_nothing(client: TestClient) -> None:
    from namesake.core.settings import CORRECTIONS_COLLECTION

    missing = client.get("/v1/nothing-here", headers=AUTH)
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "NOT_FOUND"
    wrong = client.delete("/v1/corrections", headers=AUTH)
    assert wrong.status_code == 405 and wrong.json()["error"]["code"] == "METHOD_NOT_ALLOWED"
    for raw in (b'{"transcript_id": "\xff\xfe"}', b"[" * 5000 + b"]" * 5000, b'{"transcript_id": '):
        bad = client.post("/v1/reliability/analyze", content=raw, headers={**AUTH, "Content-Type": "application/json"})
        assert bad.status_code == 422 and bad.json()["error"]["code"] == "INVALID_INPUT", bad.text
    client.app.state.services.runtime.vectors.drop_collection(CORRECTIONS_COLLECTION)  # type: ignore[attr-defined]
    fix = {"user_id": "dave", "transcript_id": "d-1", "segment_id": "1", "start_char": 0, "end_char": 6,
           "original": "Cytova", "final": "Cytiva", "segment_text": "Cytova grew"}  # fmt: skip
    r = client.post("/v1/corrections", json=fix, headers={**AUTH, "X-Request-ID": "leak-check"})
    body = r.json()["error"]
    assert r.status_code == 503 and r.headers["X-Request-ID"] == "leak-check"
    assert CORRECTIONS_COLLECTION not in body["message"] and "Qdrant" not in body["message"]
    assert "SELECT" not in body["message"] and "X-Request-ID" in body["message"]


def test_bad_bytes_and_oversized_bodies_are_refused_before_anything_is_written(client: TestClient) -> None:
    nul = {"transcript_id": "nul-1", "user_id": "erin", "segments": [{"id": "1", "text": "Reiner\u0000 spoke"}]}
    r = client.post("/v1/reliability/analyze", json=nul, headers=AUTH)
    assert r.status_code == 422 and r.json()["error"]["field"] == "segments[0].text"
    fix = {"user_id": "erin", "transcript_id": "e-1", "segment_id": "1", "start_char": 0, "end_char": 3_000_000_000,
           "original": "abc", "final": "Abc"}  # fmt: skip
    r = client.post("/v1/corrections", json=fix, headers=AUTH)
    assert r.status_code == 422 and r.json()["error"]["field"] == "end_char"

    def chunks() -> Iterator[bytes]:
        yield b'{"transcript_id": "big", "segments": [{"id": "1", "text": "'
        for _ in range(64):
            yield b"x" * (1 << 20)
        yield b'"}]}'

    r = client.post("/v1/reliability/analyze", content=chunks(), headers={**AUTH, "Content-Type": "application/json"})
    assert r.status_code == 413 and r.json()["error"]["code"] == "TOO_LARGE"
    assert client.get("/v1/users/erin/corrections", headers=AUTH).json() == []
    assert client.get("/v1/transcripts/nul-1/suggestions", headers=AUTH).json() == []


def test_with_postgresql_down_every_route_answers_the_json_503(
    settings: Settings, db: Database, make_runtime: MakeRuntime
) -> None:
    from sqlalchemy import create_engine
    from sqlalchemy.orm import sessionmaker

    s = tuned(settings, namesake_api_keys=[KEY])
    with TestClient(create_app(s, make_runtime(s))) as c:
        dead = create_engine("postgresql+psycopg://postgres@127.0.0.1:1/none", pool_pre_ping=False)
        alive = db.sessions
        db.sessions = sessionmaker(dead)  # the runtime's database, as the routes reach it
        try:
            for method, path in (("get", "/v1/users/alice/corrections"), ("get", "/v1/transcripts/t/suggestions"),
                                 ("delete", "/v1/users/alice")):  # fmt: skip
                r = c.request(method, path, headers=AUTH)
                assert r.status_code == 503 and r.headers["content-type"] == "application/json", (path, r.text)
                assert r.json()["error"]["code"] == "STORE_UNAVAILABLE" and "127.0.0.1:1" not in r.text
            engine = db.engine
            db.engine = dead  # a job's advisory lock takes a connection of its own
            try:
                r = c.post("/v1/jobs/promotion/run", headers=AUTH)
                assert r.status_code == 503 and r.json()["error"]["code"] == "STORE_UNAVAILABLE", r.text
            finally:
                db.engine = engine
        finally:
            db.sessions = alive


def test_a_boolean_is_no_offset_and_broken_json_names_the_body(client: TestClient) -> None:
    fix = {"user_id": "erin", "transcript_id": "e-1", "segment_id": "1", "start_char": False, "end_char": 3,
           "original": "abc", "final": "Abc"}  # fmt: skip
    r = client.post("/v1/corrections", json=fix, headers=AUTH)
    assert r.status_code == 422 and r.json()["error"]["field"] == "start_char"
    words = {"transcript_id": "e-2", "segments": [{"id": "1", "text": "abc", "words": [
        {"text": "abc", "confidence": 0.9, "start_char": False}]}]}  # fmt: skip
    assert client.post("/v1/reliability/analyze", json=words, headers=AUTH).status_code == 422
    broken = b'{"transcript_id": "x", "segments": [}'
    r = client.post("/v1/reliability/analyze", content=broken, headers={**AUTH, "Content-Type": "application/json"})
    assert r.status_code == 422 and r.json()["error"]["field"] == "body"
    assert "not valid JSON at character" in r.json()["error"]["message"]
    assert client.get("/v1/users/erin/corrections", headers=AUTH).json() == []


def test_a_method_not_allowed_names_every_method_of_the_path(client: TestClient) -> None:
    r = client.request("PATCH", "/v1/transcripts/t1", headers=AUTH)
    assert r.status_code == 405 and {"GET", "DELETE"} <= set(r.headers["allow"].split(", "))
