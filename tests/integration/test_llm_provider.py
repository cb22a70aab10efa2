"""The OpenAI-compatible provider against a real local HTTP server."""

from __future__ import annotations

import pytest

from namesake.adapters.remote_llm import OpenAICompatibleProvider, parse_json_object
from namesake.core.errors import LLMError, LLMOutputError, LLMRateLimitedError, LLMServerError
from tests.fakes.llm_server import ScriptedLLM, serve_llm


def _provider(url: str) -> OpenAICompatibleProvider:
    return OpenAICompatibleProvider(base_url=url, model="m", api_key="k", timeout=5)


def test_valid_json_answer_is_parsed_and_request_is_chat_completions() -> None:
    script = ScriptedLLM(replies=[(200, '{"items": [{"id": 1}]}')])
    with serve_llm(script) as url:
        assert _provider(url).complete_json(system="s", user="u") == {"items": [{"id": 1}]}
    sent = script.requests[0]
    assert sent["model"] == "m" and sent["response_format"] == {"type": "json_object"}
    assert [m["role"] for m in sent["messages"]] == ["system", "user"]


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        ((429, '{"error": "slow down"}'), LLMRateLimitedError),
        ((503, "oops"), LLMServerError),
        ((400, '{"error": "bad"}'), LLMError),
        ((200, "not json at all"), LLMOutputError),
        ((200, "[1, 2]"), LLMOutputError),
    ],
)
def test_failures_raise_typed_errors(reply: tuple[int, str], error: type[Exception]) -> None:
    with serve_llm(ScriptedLLM(replies=[reply])) as url, pytest.raises(error):
        _provider(url).complete_json(system="s", user="u")


def test_body_that_is_not_a_completion_is_an_output_error() -> None:
    with serve_llm(ScriptedLLM(replies=[(200, '{"nothing": true}')], raw=True)) as url, pytest.raises(LLMOutputError):
        _provider(url).complete_json(system="s", user="u")


def test_unreachable_endpoint_is_a_server_error() -> None:
    with pytest.raises(LLMServerError):
        _provider("http://127.0.0.1:9/v1").complete_json(system="s", user="u")


def test_fenced_json_is_accepted() -> None:
    assert parse_json_object('```json\n{"a": 1}\n```') == {"a": 1}
