"""What the browser tests share: Debian's Chromium driven by Playwright, a live server, an analysed call."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from namesake.api.app import create_app
from namesake.core.settings import Settings
from tests.conftest import MakeRuntime, tuned
from tests.live import live_server

try:
    from playwright import sync_api as playwright_api
except ImportError:  # the test extra not installed: the browser tests skip (CI installs it)
    playwright_api = None  # type: ignore[assignment]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def require_browser() -> None:
    """Skip without Playwright or Debian's Chromium, except in CI, where that is a failure."""
    if playwright_api is not None and CHROMIUM is not None:
        return
    if os.environ.get("CI"):
        pytest.fail("CI needs Playwright and Debian's chromium for the browser tests (.ci/run installs them)")
    pytest.skip("no chromium or playwright on this machine: apt-get install chromium")


KEY = "reviewer-key"
AUTH = {"Authorization": f"Bearer {KEY}"}
ENTITIES = {"persons": ["Rainer Blair"], "orgs": ["Cytiva", "Beckman Coulter"], "acronyms": ["IDT"]}
TEXT = [
    "Good morning, this is Reiner Blair with the results for the quarter.",
    "Our Cytova unit grew, and Backman Coulter too, said Reiner.",
    "Zorblax joined the call about IDT and the Cytova numbers.",
]
# UPDATE_SCREENSHOTS=1 writes the README's pictures of the current page
SHOTS = Path(__file__).resolve().parents[2] / "docs" / "img"


@pytest.fixture
def server(request: pytest.FixtureRequest, settings: Settings, make_runtime: MakeRuntime) -> Iterator[str]:
    """A real uvicorn server on a free port, on the test database and an embedded vector store.

    Nothing auto-applied unless a test says otherwise (@pytest.mark.server(...)): every suggestion waits for
    the reviewer, the page's main case.
    """
    marker = request.node.get_closest_marker("server")
    update = {"reliability_auto_apply_threshold": 0.99, **(marker.kwargs if marker else {})}
    s = tuned(settings, namesake_api_keys=[f"{KEY}:tenant-acme"], **update)
    with live_server(create_app(s, make_runtime(s))) as base:
        yield base


def analyze(base: str, tid: str, user: str = "alice") -> dict[str, Any]:
    r = httpx.put(f"{base}/v1/transcripts/{tid}/canonical-entities", json={**ENTITIES, "user_id": user}, headers=AUTH)
    assert r.status_code == 200, r.text
    segments = [{"id": str(i), "text": t} for i, t in enumerate(TEXT)]
    r = httpx.post(f"{base}/v1/reliability/analyze", headers=AUTH, timeout=60,
                   json={"transcript_id": tid, "user_id": user, "segments": segments})  # fmt: skip
    assert r.status_code == 200, r.text
    return r.json()


def suggestions(base: str, tid: str) -> list[dict[str, Any]]:
    return httpx.get(f"{base}/v1/transcripts/{tid}/suggestions", headers=AUTH).json()  # type: ignore[no-any-return]


def shot(page: Any, name: str) -> None:
    if os.environ.get("UPDATE_SCREENSHOTS"):
        page.screenshot(path=str(SHOTS / f"{name}.png"))


def sign_in(page: Any, server: str) -> None:
    """Open the page and sign in with the reviewer's key."""
    page.goto(f"{server}/review")
    page.fill("#key", KEY)
    page.keyboard.press("Enter")


@pytest.fixture
def page(server: str) -> Iterator[Any]:
    require_browser()
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        pg = browser.new_page(viewport={"width": 1440, "height": 860})
        hosts: list[str] = []
        pg.on("request", lambda req: hosts.append(urlsplit(req.url).netloc))
        errors: list[str] = []
        pg.on("pageerror", lambda exc: errors.append(str(exc)))
        yield pg
        browser.close()
    assert set(hosts) <= {urlsplit(server).netloc}, hosts  # no request to another host, ever
    assert errors == []
