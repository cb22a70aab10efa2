"""`namesake analyze` through a running server: the same output, its warm models, no second process on the store.

`namesake serve` leaves its address in the data dir (`serve.json`, `app/address.py`) while it serves;
`NAMESAKE_URL` names a server elsewhere. The transcripts go to `POST /v1/reliability/analyze` one by one, as read
and checked here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from namesake.app import announced_url
from namesake.core import NamesakeError, Settings, StoreError, parse_key
from namesake.domain import Suggestion

# How long the CLI waits for one transcript's analysis (a 9,000-word call takes seconds; a queue may be ahead).
ANALYSE_TIMEOUT = 600.0


def running_server(settings: Settings) -> str | None:
    """The server to send work to: NAMESAKE_URL, else the `namesake serve` holding this data dir, if it answers."""
    if settings.namesake_url:
        return settings.namesake_url.rstrip("/")
    url = announced_url(settings)
    try:
        if url is not None and _request(url, "GET", "/healthz", None, {}, 2.0)[0] == 200:
            return url
    except OSError:
        return None
    return None


def _request(
    url: str, method: str, path: str, body: bytes | None, headers: dict[str, str], timeout: float
) -> tuple[int, str, bytes]:
    """One request with the standard library (a one-file run pays no HTTP client's import): status, type, body."""
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = kind(parts.hostname or "127.0.0.1", parts.port, timeout=timeout)
    try:
        conn.request(method, parts.path.rstrip("/") + path, body=body, headers=headers)
        r = conn.getresponse()
        return r.status, r.getheader("content-type") or "", r.read()
    finally:
        conn.close()


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


def refusal(status: int, kind: str, text: str) -> Refused:
    """A server's 4xx as the CLI names it: the error envelope's code, message and field (the body itself otherwise)."""
    error = (json.loads(text) if kind.startswith("application/json") else {}).get("error", {})
    return Refused(str(error.get("code", status)), str(error.get("message", text)), error.get("field"))


def analyse_remotely(
    url: str, key: str | None, timeout: float = ANALYSE_TIMEOUT
) -> Callable[[dict[str, Any]], Answered]:
    """A function that sends one checked transcript to the server; Refused for a 4xx, StoreError when it is down."""
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})}

    def send(body: dict[str, Any]) -> Answered:
        try:
            status, kind, raw = _request(url, "POST", "/v1/reliability/analyze", json.dumps(body).encode(), headers,
                                         timeout)  # fmt: skip
        except OSError as exc:
            raise StoreError(f"the server at {url} did not answer ({exc}); run with --local to analyse here") from exc
        text = raw.decode("utf-8", "replace")
        if 400 <= status < 500:
            raise refusal(status, kind, text)
        if status != 200:
            raise StoreError(f"the server at {url} answered {status}: {text[:300]}")
        return Answered(json.loads(text))

    return send


class JobBusy(NamesakeError):
    """The server's answer 409 to a job run: another runner holds the job (the CLI's exit 3)."""


def ask_server(url: str, key: str | None, method: str, path: str, timeout: float = ANALYSE_TIMEOUT) -> str:
    """One of the CLI's commands as the server's route does it (export, vocabulary, a job, an erasure): the body.

    Refused for a 4xx (as a local run would refuse it), JobBusy for a job already running, StoreError when the server
    does not answer or fails.
    """
    headers = {"Accept": "application/json, text/plain", **({"Authorization": f"Bearer {key}"} if key else {})}
    try:
        status, kind, raw = _request(url, method, path, None, headers, timeout)
    except OSError as exc:
        raise StoreError(f"the server at {url} did not answer ({exc})") from exc
    text = raw.decode("utf-8", "replace")
    if 400 <= status < 500:
        refused = refusal(status, kind, text)
        if status == 409 and path.startswith("/v1/jobs/"):
            raise JobBusy(refused.message)
        raise refused
    if status != 200:
        raise StoreError(f"the server at {url} answered {status}: {text[:300]}")
    return text
