"""`namesake analyze` through a running server: the same output, its warm models, no second process on the store.

`namesake serve` leaves its address in the data dir (`serve.json`) while it runs; `NAMESAKE_URL` names a server
elsewhere. The transcripts go to `POST /v1/reliability/analyze` one by one, as read and checked here.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from namesake.core.errors import NamesakeError, StoreError
from namesake.core.settings import Settings
from namesake.core.tenancy import parse_key
from namesake.reliability.types import Suggestion

SERVE_FILE = "serve.json"
# How long the CLI waits for one transcript's analysis (a 9,000-word call takes seconds; a queue may be ahead).
ANALYSE_TIMEOUT = 600.0


def serve_file(settings: Settings) -> Path:
    """Where a running `namesake serve` says where it listens."""
    return settings.namesake_data_dir / SERVE_FILE


@contextmanager
def announced(settings: Settings, host: str, port: int) -> Iterator[None]:
    """While the server runs, its address is in the data dir (for `namesake analyze` to find); gone when it stops."""
    path = serve_file(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    reach = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    path.write_text(json.dumps({"url": f"http://{reach}:{port}", "pid": os.getpid()}), encoding="utf-8")
    try:
        yield
    finally:
        try:
            if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
                path.unlink()
        except (OSError, ValueError):
            pass


def running_server(settings: Settings) -> str | None:
    """The server to send work to: NAMESAKE_URL, else the `namesake serve` holding this data dir, if it answers."""
    import httpx

    if settings.namesake_url:
        return settings.namesake_url.rstrip("/")
    try:
        said = json.loads(serve_file(settings).read_text(encoding="utf-8"))
        os.kill(int(said["pid"]), 0)  # a file left by a server that died says nothing
        url = str(said["url"])
        if httpx.get(f"{url}/healthz", timeout=2.0).status_code == 200:
            return url
    except (OSError, ValueError, KeyError, TypeError, httpx.HTTPError):
        return None
    return None


def client_key(settings: Settings) -> str | None:
    """The key the CLI sends: NAMESAKE_API_KEY, else the first admin key this environment configures."""
    if settings.namesake_api_key:
        return settings.namesake_api_key
    for item in settings.namesake_api_keys:
        key, scope = parse_key(item)
        if scope.tenant is None:
            return key
    return None


@dataclass
class Answered:
    """A server's answer to one transcript, shaped as the CLI's own result is read (`_applied`, the table)."""

    body: dict[str, Any]

    @property
    def transcript_id(self) -> str:
        return str(self.body["transcript_id"])

    @property
    def mode(self) -> str:
        return str(self.body["mode"])

    @property
    def suggestions(self) -> list[Suggestion]:
        from pydantic import TypeAdapter

        return TypeAdapter(list[Suggestion]).validate_python(self.body["suggestions"])

    @property
    def corrected_segments(self) -> list[dict[str, str]]:
        return list(self.body["corrected_segments"])

    def as_json(self) -> dict[str, Any]:
        """The answer as the server wrote it: what `namesake analyze` prints."""
        return self.body


class Refused(NamesakeError):
    """A transcript the server refused (4xx): its code, message and field, as a local run would name them."""

    def __init__(self, code: str, message: str, field: str | None) -> None:
        super().__init__(message, field=field)
        self.code = code


def analyse_remotely(
    url: str, key: str | None, timeout: float = ANALYSE_TIMEOUT
) -> Callable[[dict[str, Any]], Answered]:
    """A function that sends one checked transcript to the server; Refused for a 4xx, StoreError when it is down."""
    import httpx

    headers = {"Authorization": f"Bearer {key}"} if key else {}
    client = httpx.Client(base_url=url, headers=headers, timeout=timeout)

    def send(body: dict[str, Any]) -> Answered:
        try:
            r = client.post("/v1/reliability/analyze", json=body)
        except httpx.HTTPError as exc:
            raise StoreError(f"the server at {url} did not answer ({exc}); run with --local to analyse here") from exc
        if 400 <= r.status_code < 500:
            error = (r.json() if r.headers.get("content-type", "").startswith("application/json") else {}).get(
                "error", {}
            )
            raise Refused(str(error.get("code", r.status_code)), str(error.get("message", r.text)), error.get("field"))
        if r.status_code != 200:
            raise StoreError(f"the server at {url} answered {r.status_code}: {r.text[:300]}")
        return Answered(r.json())

    return send
