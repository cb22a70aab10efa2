"""The review page's files and the CORS setting, over HTTP."""

from __future__ import annotations

from fastapi.testclient import TestClient

from namesake.api.app import create_app
from namesake.db import Database
from namesake.embeddings import Embedder
from namesake.runtime import Runtime
from namesake.settings import Settings
from namesake.vectors.edge import EdgeVectorStore


def _client(
    settings: Settings, db: Database, embedder: Embedder, **update: object
) -> tuple[TestClient, EdgeVectorStore]:
    s = settings.model_copy(update={"namesake_api_keys": ["k"], **update})
    store = EdgeVectorStore(s.qdrant_store_dir)
    return TestClient(create_app(s, Runtime(s, db, store, embedder, None))), store


def test_the_page_and_its_files_come_from_the_package_with_a_policy_that_forbids_other_hosts(
    settings: Settings, db: Database, embedder: Embedder
) -> None:
    client, store = _client(settings, db, embedder)
    with client:
        page = client.get("/review")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert "default-src 'none'" in page.headers["content-security-policy"]
        assert "http" not in page.text.replace("http-equiv", "")  # no absolute URL: nothing from elsewhere
        for name, kind in (("review.js", "text/javascript"), ("review.css", "text/css")):
            r = client.get(f"/review/assets/{name}")
            assert r.status_code == 200 and r.headers["content-type"].startswith(kind) and "//cdn" not in r.text
        missing = client.get("/review/assets/..%2Fsettings.py")
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "NOT_FOUND"
    store.close()


def test_cors_answers_only_the_configured_origins(settings: Settings, db: Database, embedder: Embedder) -> None:
    preflight = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization"}
    client, store = _client(settings, db, embedder, namesake_cors_origins=["https://review.example"])
    with client:
        ok = client.options("/v1/transcripts", headers={"Origin": "https://review.example", **preflight})
        assert ok.status_code == 200 and ok.headers["access-control-allow-origin"] == "https://review.example"
        other = client.options("/v1/transcripts", headers={"Origin": "https://evil.example", **preflight})
        assert "access-control-allow-origin" not in other.headers
        r = client.get("/v1/transcripts", headers={"Origin": "https://review.example", "Authorization": "Bearer k"})
        assert "X-Next-Before" in r.headers["access-control-expose-headers"]
    store.close()
    client, store = _client(settings, db, embedder)  # the default: no CORS at all
    with client:
        r = client.options("/v1/transcripts", headers={"Origin": "https://review.example", **preflight})
        assert "access-control-allow-origin" not in r.headers
    store.close()
