"""LLM provider port: none (default) or any OpenAI-compatible chat-completions endpoint."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from namesake.core import LLMCoolingDownError, LLMError, LLMOutputError, LLMRateLimitedError, LLMServerError, Settings
from namesake.reliability import LLMProvider


def parse_json_object(content: str) -> dict[str, Any]:
    """Parse a model's answer; tolerate a ```json fence, refuse anything but one object."""
    text = content.strip()
    if text.startswith("```"):
        text = text.strip("`")
        text = text[4:] if text.lower().startswith("json") else text
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LLMOutputError(f"LLM answer is not JSON: {exc.msg} at char {exc.pos}") from exc
    if not isinstance(value, dict):
        raise LLMOutputError(f"LLM answer is JSON {type(value).__name__}, expected an object")
    return value


# A Retry-After beyond this is read as this: a provider's typo must not silence the LLM for a day.
MAX_RETRY_AFTER = 3600.0


def retry_after(value: str | None, default: float, now: datetime | None = None) -> float:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date), else the default."""
    if value is None or not value.strip():
        return default
    text = value.strip()
    if text.isdigit():
        return min(float(text), MAX_RETRY_AFTER)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return default
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return min(max(0.0, (when - (now or datetime.now(UTC))).total_seconds()), MAX_RETRY_AFTER)


class OpenAICompatibleProvider:
    """Chat completions over httpx with JSON output mode; one client, reused across calls."""

    name = "openai"

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 20.0,
        transport: httpx.BaseTransport | None = None,
        cooldown_seconds: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.model, self.cooldown_seconds, self.clock = model, cooldown_seconds, clock
        # after a 429, no call until then: one provider serves every transcript of a run and every request
        self._quiet_until = 0.0
        self._client = httpx.Client(
            base_url=base_url.rstrip("/"), headers=headers, timeout=timeout, transport=transport
        )

    def complete_json(self, *, system: str, user: str) -> dict[str, Any]:
        """One call; 429 → LLMRateLimitedError, 5xx/transport → LLMServerError, bad body → LLMOutputError."""
        wait = self._quiet_until - self.clock()
        if wait > 0:
            raise LLMCoolingDownError(f"LLM endpoint rate-limited us: cooling down for {wait:.0f} s more")
        body = {
            "model": self.model,
            "temperature": 0,
            "response_format": {"type": "json_object"},
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        }
        try:
            response = self._client.post("/chat/completions", json=body)
        except httpx.HTTPError as exc:
            raise LLMServerError(f"LLM endpoint unreachable: {exc}") from exc
        if response.status_code == 429:
            pause = retry_after(response.headers.get("retry-after"), self.cooldown_seconds)
            self._quiet_until = self.clock() + pause
            raise LLMRateLimitedError(f"LLM endpoint answered 429 (rate limited): no call for {pause:.0f} s")
        if response.status_code >= 500:
            raise LLMServerError(f"LLM endpoint answered {response.status_code}")
        if response.status_code >= 400:
            raise LLMError(f"LLM endpoint refused the request: {response.status_code} {response.text[:200]}")
        try:
            content = response.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise LLMOutputError(f"LLM response is not a chat completion: {exc}") from exc
        if not isinstance(content, str):
            raise LLMOutputError("LLM response content is not text")
        return parse_json_object(content)

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()


def build_llm(settings: Settings) -> LLMProvider | None:
    """The provider LLM_PROVIDER names; None means the pipeline runs on its other signals."""
    if settings.llm_provider == "openai":
        assert settings.llm_base_url is not None  # enforced by Settings
        return OpenAICompatibleProvider(
            base_url=settings.llm_base_url,
            model=settings.llm_model,
            api_key=settings.llm_api_key,
            timeout=settings.llm_timeout_seconds,
            cooldown_seconds=settings.llm_rate_limit_cooldown_seconds,
        )
    return None
