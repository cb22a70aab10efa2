"""The OpenAPI document describes every answer: each route's success body has a named schema."""

from __future__ import annotations

from typing import Any

from namesake.api.app import create_app
from namesake.core.settings import Settings


def _success_schemas(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for path, operations in doc["paths"].items():
        for method, op in operations.items():
            for code, response in op["responses"].items():
                if code.startswith("2"):
                    found[f"{method.upper()} {path} {code}"] = response.get("content", {})
    return found


def _named(schema: dict[str, Any]) -> bool:
    return "$ref" in schema or (schema.get("type") == "array" and "$ref" in schema.get("items", {}))


def test_every_json_answer_has_a_named_schema() -> None:
    doc = create_app(Settings()).openapi()
    unnamed = [
        where
        for where, content in _success_schemas(doc).items()
        if "text/plain" not in content  # Prometheus' text format
        and "application/json" in content
        and not _named(content["application/json"].get("schema", {}))
    ]
    assert unnamed == []


def test_every_route_says_what_it_answers() -> None:
    doc = create_app(Settings()).openapi()
    silent = [where for where, content in _success_schemas(doc).items() if not content]
    assert silent == []
    assert "GET /v1/transcripts/{transcript_id} 200" in _success_schemas(doc)


def test_a_suggestion_is_answered_with_its_enums() -> None:
    schemas = create_app(Settings()).openapi()["components"]["schemas"]
    suggestion = schemas["Suggestion"]["properties"]
    assert suggestion["status"] == {"$ref": "#/components/schemas/SuggestionStatus"}
    assert set(schemas["SuggestionStatus"]["enum"]) == {"auto_applied", "pending", "validated", "rejected"}
    assert suggestion["source"] == {"$ref": "#/components/schemas/CandidateSource"}


READS_BY_POST = {"/v1/review/reach"}


def test_every_write_for_a_user_documents_the_erased_users_410_and_the_415() -> None:
    doc = create_app(Settings()).openapi()
    writes = [
        (method.upper(), path, set(op["responses"]))
        for path, operations in doc["paths"].items()
        for method, op in operations.items()
        if method in ("post", "put") and not path.startswith("/v1/jobs") and path not in READS_BY_POST
    ]
    assert len(writes) == 11
    # a read that takes a body (the pairs a decision would reach) writes nothing, but refuses a body not JSON
    assert all("415" in doc["paths"][p]["post"]["responses"] for p in READS_BY_POST)
    assert [(m, p) for m, p, codes in writes if not {"410", "415"} <= codes] == []
