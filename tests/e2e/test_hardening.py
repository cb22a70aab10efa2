"""Input checked at the edge: text every store can hold, entries bounded by what they cost, strict numbers."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from namesake.adapters.db import Database
from namesake.api.app import create_app
from namesake.core.settings import Settings
from tests.conftest import MakeRuntime, tuned

KEY = "test-key"
AUTH = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
LONE = "\\ud800"  # a lone UTF-16 surrogate, as JSON writes it: no UTF-8 encoding exists for it


@pytest.fixture
def client(settings: Settings, make_runtime: MakeRuntime) -> Iterator[TestClient]:
    s = tuned(settings, namesake_api_keys=[KEY])
    with TestClient(create_app(s, make_runtime(s))) as c:
        yield c


def _rows(db: Database) -> tuple[int, int]:
    with db.engine.connect() as conn:
        users = conn.exec_driver_sql("SELECT count(*) FROM users").scalar()
        transcripts = conn.exec_driver_sql("SELECT count(*) FROM transcripts").scalar()
    return int(users or 0), int(transcripts or 0)


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("POST", "/v1/reliability/analyze",
         '{"transcript_id": "t1", "user_id": "ana", "segments": [{"id": "1", "text": "we met jon' + LONE + ' smith"}]}',
         "segments[0].text"),
        ("POST", "/v1/reliability/analyze",
         '{"transcript_id": "t1", "segments": [{"id": "1", "text": "x"}], "canonical_entities": {"orgs": ["Cy' + LONE
         + '"]}}', "canonical_entities.orgs[0]"),
        ("PUT", "/v1/transcripts/t1/canonical-entities", '{"orgs": ["Cy' + LONE + 'tiva"]}', "orgs[0]"),
        ("POST", "/v1/corrections",
         '{"user_id": "ana", "transcript_id": "t1", "segment_id": "1", "start_char": 0, "end_char": 3, '
         '"original": "Cyt", "final": "Cyt", "segment_text": "Cyt' + LONE + 'ova"}', "segment_text"),
    ],
)  # fmt: skip
def test_a_lone_surrogate_in_any_text_is_422_naming_its_field_and_nothing_is_written(
    client: TestClient, db: Database, method: str, path: str, body: str, field: str
) -> None:
    r = client.request(method, path, content=body, headers=AUTH)
    assert r.status_code == 422, r.text
    assert r.json()["error"]["field"] == field and "not valid Unicode" in r.json()["error"]["message"]
    assert _rows(db) == (0, 0)


@pytest.mark.parametrize("length", [10_000, 1_000_000])
def test_a_canonical_entry_over_the_limit_is_refused_at_once_naming_it(
    client: TestClient, db: Database, length: int
) -> None:
    body: dict[str, Any] = {
        "transcript_id": "t-long", "segments": [{"id": "1", "text": "Thanks to the Cytova team."}],
        "canonical_entities": {"orgs": ["Cytiva", "x" * length]},
    }  # fmt: skip
    t0 = time.perf_counter()
    r = client.post("/v1/reliability/analyze", json=body, headers=AUTH)
    assert time.perf_counter() - t0 < 5
    assert r.status_code == 413 and r.json()["error"]["field"] == "canonical_entities.orgs[1]"
    assert "MAX_CANONICAL_ENTRY_CHARS" in r.json()["error"]["message"]
    r = client.put("/v1/transcripts/t-long/canonical-entities", json={"orgs": ["x" * length]}, headers=AUTH)
    assert r.status_code == 413 and r.json()["error"]["field"] == "orgs[0]"
    assert _rows(db) == (0, 0)


def test_more_canonical_entities_than_the_limit_is_413_as_documented(client: TestClient) -> None:
    body = {"transcript_id": "t-many", "segments": [{"id": "1", "text": "x"}],
            "canonical_entities": {"keywords": [f"w{i}" for i in range(20_001)]}}  # fmt: skip
    r = client.post("/v1/reliability/analyze", json=body, headers=AUTH)
    assert r.status_code == 413 and "the limit is 20000" in r.json()["error"]["message"]


def test_a_word_confidence_is_a_number_not_a_boolean(client: TestClient) -> None:
    words = [{"text": "Cytova", "confidence": True, "start_char": 0, "end_char": 6}]
    body = {"transcript_id": "t-conf", "segments": [{"id": "1", "text": "Cytova grew.", "words": words}]}
    r = client.post("/v1/reliability/analyze", json=body, headers=AUTH)
    assert r.status_code == 422 and r.json()["error"]["field"] == "segments.0.words.0.confidence"


@pytest.mark.parametrize("body", ["null", "[1, 2]", '"a transcript"'])
def test_a_body_that_is_not_an_object_is_named_as_such(client: TestClient, body: str) -> None:
    r = client.post("/v1/reliability/analyze", content=body, headers=AUTH)
    assert r.status_code == 422
    assert r.json()["error"] == {"code": "INVALID_INPUT", "message": "the body must be a JSON object", "field": "body"}


@pytest.mark.parametrize("entry_chars", [30, 200])
def test_an_analysis_at_the_limits_finishes_within_its_budget(settings: Settings, entry_chars: int) -> None:
    """20,000 entries (the limit) of made-up words, each `entry_chars` long (200: the limit), against 20,000
    characters of text (a segment's limit): the spotter's cost grows with what it reads, not with its square."""
    import random
    import string

    from namesake.domain.types import CanonicalDictionary, Segment
    from namesake.reliability.pipeline import PipelineInputs, run_stages

    rng = random.Random(0)

    def words(chars: int) -> str:
        out = ""
        while len(out) < chars:
            out += "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 12))).capitalize() + " "
        return out[:chars].strip()

    assert settings.max_canonical_entry_chars == 200 and settings.max_segment_chars == 20_000
    lists = CanonicalDictionary({"orgs": [words(entry_chars) for _ in range(20_000)]})
    segment = Segment("1", words(settings.max_segment_chars).lower())
    t0 = time.perf_counter()
    run_stages(PipelineInputs([segment], lists), settings)
    # 13 s and 4.5 s on a busy 2-core machine; quadratic in an entry's words it took minutes
    assert time.perf_counter() - t0 < 30


def test_past_the_analysis_queue_limit_a_request_is_told_busy_at_once_and_when_to_retry(
    settings: Settings, make_runtime: MakeRuntime
) -> None:
    s = tuned(settings, analysis_queue_limit=1)
    body = {"transcript_id": "busy-1", "segments": [{"id": "1", "text": "Thanks to Reiner Blair."}],
            "canonical_entities": {"persons": ["Rainer Blair"]}}  # fmt: skip
    with TestClient(create_app(s, make_runtime(s))) as client:
        admission = client.app.state.services.admission  # type: ignore[attr-defined]
        with admission.admitted():  # one analysis in progress: the queue is full
            r = client.post("/v1/reliability/analyze", json=body)
        assert r.status_code == 503 and r.json()["error"]["code"] == "BUSY"
        assert int(r.headers["Retry-After"]) >= 1 and "ANALYSIS_QUEUE_LIMIT=1" in r.json()["error"]["message"]
        assert client.get("/v1/transcripts").json() == []  # nothing was started
        assert client.post("/v1/reliability/analyze", json=body).status_code == 200  # room again


def test_an_analysis_past_its_cost_budget_is_refused_at_once_naming_the_budget_and_nothing_is_written(
    settings: Settings, make_runtime: MakeRuntime, db: Database
) -> None:
    """Every size within its limit, the product not: words × list words past MAX_ANALYSIS_PAIRS is a 413."""
    s = tuned(settings, namesake_api_keys=[KEY], max_analysis_pairs=150_000, max_list_words=1_000)
    words = " ".join(f"word{i}" for i in range(500))
    entities = {"persons": [f"Person{i} Name{i}" for i in range(200)]}  # 500 words × 400 list words: 200,000 pairs
    with TestClient(create_app(s, make_runtime(s))) as c:
        t0 = time.monotonic()
        r = c.post("/v1/reliability/analyze", headers=AUTH, json={
            "transcript_id": "big", "user_id": "u", "segments": [{"id": "1", "text": words}],
            "canonical_entities": entities})  # fmt: skip
        assert r.status_code == 413 and time.monotonic() - t0 < 1.0
        error = r.json()["error"]
        assert error["code"] == "TOO_LARGE" and error["field"] == "canonical_entities"
        assert "200,000 pairs" in error["message"] and "150,000 (MAX_ANALYSIS_PAIRS)" in error["message"]
        assert _rows(db) == (0, 0)
        # a list stored before: the same budget, read with it, and the analysis leaves nothing behind
        r = c.put("/v1/transcripts/big/canonical-entities", headers=AUTH, json={**entities, "user_id": "u"})
        assert r.status_code == 200, r.text
        r = c.post("/v1/reliability/analyze", headers=AUTH,
                   json={"transcript_id": "big", "user_id": "u", "segments": [{"id": "1", "text": words}]})  # fmt: skip
        assert r.status_code == 413 and "200,000 pairs" in r.json()["error"]["message"]
        with db.engine.connect() as conn:
            assert conn.exec_driver_sql("SELECT count(*) FROM suggestions").scalar() == 0
        small = c.post("/v1/reliability/analyze", headers=AUTH, json={
            "transcript_id": "small", "user_id": "u", "segments": [{"id": "1", "text": "word1 word2 and Person3"}],
            "canonical_entities": entities})  # fmt: skip
        assert small.status_code == 200, small.text  # 4 words × 400 list words: within the budget
        long_list = {"persons": [f"Person{i} Name{i} Surname" for i in range(400)]}  # 1,200 words: past 1,000
        r = c.post("/v1/reliability/analyze", headers=AUTH, json={
            "transcript_id": "list", "user_id": "u", "segments": [{"id": "1", "text": "hello"}],
            "canonical_entities": long_list})  # fmt: skip
        assert r.status_code == 413 and "1,200 words" in r.json()["error"]["message"]
        assert "MAX_LIST_WORDS" in r.json()["error"]["message"]
