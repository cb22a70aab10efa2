"""Stage 4 against a local server speaking the OpenAI protocol: valid, malformed, hallucinated, 429."""

from __future__ import annotations

import json
from typing import Any

from namesake.adapters.remote_llm import OpenAICompatibleProvider
from namesake.core.settings import Settings
from namesake.domain.types import CanonicalDictionary, Segment
from namesake.reliability.pipeline import PipelineInputs, run_stages
from tests.fakes.llm_server import ScriptedLLM, serve_llm

DICT = CanonicalDictionary({"persons": ["Rainer Blair"], "orgs": ["Cytiva", "Danaher", "Beckman"]})
SEGMENTS = [
    Segment("1", "Reiner Blair spoke about Cytova and Danaer."),
    Segment("2", "Then Backman joined, with Cytiva."),
]
# every candidate is "uncertain" so the LLM sees all of them; one item per call
SETTINGS = Settings(reliability_llm_uncertain_low=0.0, reliability_llm_uncertain_high=1.0, llm_batch_size=1)


def _items(body: dict[str, Any]) -> list[dict[str, Any]]:
    user = body["messages"][1]["content"]
    return json.loads(user[user.index("{") :])["items"]


def _run(script: ScriptedLLM) -> tuple[dict[tuple[str, str], dict[str, float]], dict[str, Any]]:
    with serve_llm(script) as url:
        llm = OpenAICompatibleProvider(base_url=url, model="m", timeout=5)
        kept, stats = run_stages(PipelineInputs(SEGMENTS, DICT), SETTINGS, llm=llm)
    return {(c.original, c.final): c.signals for c in kept}, stats.llm


def test_valid_verdicts_are_used_and_the_prompt_carries_the_canonical_list() -> None:
    def respond(body: dict[str, Any]) -> tuple[int, str]:
        verdict = "reject" if _items(body)[0]["span"] == "Backman" else "accept"
        return 200, json.dumps({"items": [{"id": 0, "verdict": verdict}]})

    script = ScriptedLLM(respond=respond)
    signals, stats = _run(script)
    assert stats["calls"] == stats["verdicts"] >= 3 and stats["invalid_items"] == 0
    assert signals[("Reiner", "Rainer")]["llm"] == 1.0
    assert ("Backman", "Beckman") not in signals or signals[("Backman", "Beckman")]["llm"] == -1.0
    prompt = script.requests[0]["messages"][1]["content"]
    assert "Cytiva" in prompt and "source of truth" in prompt


def test_malformed_and_hallucinated_items_are_rejected_and_counted() -> None:
    def respond(body: dict[str, Any]) -> tuple[int, str]:
        span = _items(body)[0]["span"]
        if span == "Reiner":
            return 200, "this is not json"
        if span == "Cytova":  # a final outside the canonical list and the candidate: scope never from the model
            return 200, json.dumps({"items": [{"id": 0, "verdict": "accept", "final": "Evil Corp"}]})
        return 200, json.dumps({"items": [{"id": 7, "verdict": "accept"}, {"id": 0, "verdict": "maybe"}]})

    signals, stats = _run(ScriptedLLM(respond=respond))
    assert stats["invalid_items"] >= 3 and stats["verdicts"] == 0
    assert all("llm" not in s for s in signals.values())
    assert all(final != "Evil Corp" for _, final in signals)


def test_a_429_stops_llm_calls_for_the_rest_of_the_run() -> None:
    script = ScriptedLLM(replies=[(429, '{"error": "rate"}')], respond=lambda b: (200, '{"items": []}'))
    signals, stats = _run(script)
    assert stats["rate_limited"] is True and stats["calls"] == 1
    assert stats["skipped_after_rate_limit"] >= 2
    assert len(script.requests) == 1
    assert ("Reiner", "Rainer") in signals  # the run finished on its other signals


def test_context_free_mode_sends_acronym_spans_and_uses_only_accepted_ones() -> None:
    segs = [Segment("1", "We met the I B T team and the NSA people."), Segment("2", "Nothing to see here.")]

    def respond(body: dict[str, Any]) -> tuple[int, str]:
        assert "no list of canonical entities" in body["messages"][1]["content"]
        item = _items(body)[0]
        if item["span"] == "I B T":
            return 200, json.dumps({"items": [{"id": 0, "verdict": "accept", "final": "IDT"}]})
        return 200, json.dumps({"items": [{"id": 0, "verdict": "reject"}]})

    with serve_llm(ScriptedLLM(respond=respond)) as url:
        llm = OpenAICompatibleProvider(base_url=url, model="m", timeout=5)
        kept, stats = run_stages(PipelineInputs(segs, CanonicalDictionary({})), SETTINGS, llm=llm)
    assert stats.mode == "CONTEXT_FREE"
    assert [(c.original, c.final, c.source) for c in kept] == [("I B T", "IDT", "context_free")]
    assert stats.llm["calls"] == 2


def test_a_429_silences_the_provider_across_runs_for_its_retry_after() -> None:
    script = ScriptedLLM(replies=[(429, '{"error": "rate"}')], respond=lambda b: (200, '{"items": []}'),
                         retry_after="120")  # fmt: skip
    now = [1000.0]
    with serve_llm(script) as url:
        llm = OpenAICompatibleProvider(base_url=url, model="m", timeout=5, clock=lambda: now[0])
        runs = [run_stages(PipelineInputs(SEGMENTS, DICT), SETTINGS, llm=llm)[1].llm for _ in range(5)]
        assert len(script.requests) == 1  # five transcripts, one call: the 429 holds for the whole run
        assert all(r["rate_limited"] for r in runs) and all(r["calls"] == 0 for r in runs[1:])
        now[0] += 121  # Retry-After has passed: the provider calls again
        after = run_stages(PipelineInputs(SEGMENTS, DICT), SETTINGS, llm=llm)[1].llm
        assert after["rate_limited"] is False and after["calls"] >= 3 and len(script.requests) == 1 + after["calls"]


def test_retry_after_is_read_as_seconds_or_a_date_and_capped() -> None:
    from datetime import UTC, datetime

    from namesake.adapters.remote_llm import MAX_RETRY_AFTER, retry_after

    now = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
    assert retry_after("17", 30.0) == 17.0 and retry_after(None, 30.0) == 30.0 and retry_after("soon", 30.0) == 30.0
    assert retry_after("Mon, 30 Nov 2026 12:01:00 GMT", 30.0, now) == 60.0
    assert retry_after("Mon, 30 Nov 2026 11:00:00 GMT", 30.0, now) == 0.0
    assert retry_after("999999", 30.0) == MAX_RETRY_AFTER


# beside the sure ones, readings the scorer is unsure of (0.53–0.75): what the default band sends
UNSURE = [*SEGMENTS, Segment("3", "Our cyto vault grew near the Danish bakery.")]


def _prompts(settings: Settings, dictionary: CanonicalDictionary) -> list[dict[str, Any]]:
    """Every prompt's payload a run sends (the server accepts nothing)."""
    script = ScriptedLLM(respond=lambda b: (200, '{"items": []}'))
    with serve_llm(script) as url:
        llm = OpenAICompatibleProvider(base_url=url, model="m", timeout=5)
        run_stages(PipelineInputs(UNSURE, dictionary), settings, llm=llm)
    payloads = []
    for body in script.requests:
        user = body["messages"][1]["content"]
        payloads.append(json.loads(user[user.index("{") :]))
    return payloads


def test_only_the_uncertain_band_reaches_the_llm_and_a_gated_span_never_does() -> None:
    band = Settings(llm_batch_size=50)  # the default band: [0.10, 0.75)
    sent = {(i["span"], i["proposed_final"]) for p in _prompts(band, DICT) for i in p["items"]}
    # the unsure readings of segment 3 (which words of "cyto vault" is the trees' call), not the sure Reiner → Rainer
    assert {final for _, final in sent} == {"Cytiva", "Danaher"}
    assert ("Danish bakery", "Danaher") in sent and {span for span, _ in sent} & {"cyto", "cyto vault"}
    everything = Settings(reliability_llm_uncertain_low=0.0, reliability_llm_uncertain_high=1.0, llm_batch_size=50)
    spans = {i["span"] for p in _prompts(everything, DICT) for i in p["items"]}
    assert "Reiner" in spans and "Cytiva" not in spans  # written right: the S2 gate keeps it out of every prompt


def test_the_prompt_carries_at_most_the_list_cap() -> None:
    many = CanonicalDictionary({"orgs": ["Cytiva", *[f"Org{i:03d}" for i in range(120)]], "persons": ["Rainer Blair"]})
    capped = Settings(reliability_llm_uncertain_low=0.0, reliability_llm_uncertain_high=1.0,
                      llm_prompt_list_cap=7)  # fmt: skip
    payloads = _prompts(capped, many)
    assert payloads and all(len(p["canonical_entities"]) == 7 for p in payloads)
    assert {"Cytiva", "Rainer Blair"} <= set(payloads[0]["canonical_entities"])  # most frequent of each list first
