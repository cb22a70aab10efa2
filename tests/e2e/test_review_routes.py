"""The review page's files and the CORS setting, over HTTP."""

from __future__ import annotations

from fastapi.testclient import TestClient

from namesake.api.app import create_app
from namesake.core.settings import Settings
from tests.conftest import MakeRuntime, tuned


def _client(settings: Settings, make_runtime: MakeRuntime, **update: object) -> TestClient:
    s = tuned(settings, namesake_api_keys=["k"], **update)
    return TestClient(create_app(s, make_runtime(s)))


def test_the_page_and_its_files_come_from_the_package_with_a_policy_that_forbids_other_hosts(
    settings: Settings, make_runtime: MakeRuntime
) -> None:
    with _client(settings, make_runtime) as client:
        page = client.get("/review")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert "default-src 'none'" in page.headers["content-security-policy"]
        assert "http" not in page.text.replace("http-equiv", "")  # no absolute URL: nothing from elsewhere
        for name, kind in (("review.js", "text/javascript"), ("review.css", "text/css")):
            r = client.get(f"/review/assets/{name}")
            assert r.status_code == 200 and r.headers["content-type"].startswith(kind) and "//cdn" not in r.text
        names = client.get("/review/assets/names.js")  # the statuses the page compares with, from the server's enum
        assert names.status_code == 200 and names.headers["content-type"].startswith("text/javascript")
        assert '"PENDING": "pending"' in names.text and '"AUTO_APPLIED": "auto_applied"' in names.text
        missing = client.get("/review/assets/..%2Fsettings.py")
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "NOT_FOUND"


def test_cors_answers_only_the_configured_origins(settings: Settings, make_runtime: MakeRuntime) -> None:
    preflight = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization"}
    with _client(settings, make_runtime, namesake_cors_origins=["https://review.example"]) as client:
        ok = client.options("/v1/transcripts", headers={"Origin": "https://review.example", **preflight})
        assert ok.status_code == 200 and ok.headers["access-control-allow-origin"] == "https://review.example"
        other = client.options("/v1/transcripts", headers={"Origin": "https://evil.example", **preflight})
        assert "access-control-allow-origin" not in other.headers
        r = client.get("/v1/transcripts", headers={"Origin": "https://review.example", "Authorization": "Bearer k"})
        assert "X-Next-Before" in r.headers["access-control-expose-headers"]
    with _client(settings, make_runtime) as client:  # the default: no CORS at all
        r = client.options("/v1/transcripts", headers={"Origin": "https://review.example", **preflight})
        assert "access-control-allow-origin" not in r.headers
