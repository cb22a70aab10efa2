"""Ask the LLM about uncertain candidates only; its answer can only pick among what it was shown."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, ValidationError

from namesake.core import LLMCoolingDownError, LLMError, LLMRateLimitedError, compact
from namesake.domain import Candidate, CanonicalDictionary, Mode
from namesake.reliability.ports import LLMProvider
from namesake.reliability.prompts import SYSTEM_PROMPT, build_user_prompt, canonical_list, context_of

log = logging.getLogger(__name__)


class Verdict(StrEnum):
    """What the LLM may answer of a candidate: its own small vocabulary, not a reviewer's action."""

    ACCEPT = "accept"
    REJECT = "reject"


class LLMItem(BaseModel):
    """One verdict as the model must give it."""

    model_config = ConfigDict(extra="ignore")
    id: int
    verdict: Verdict
    final: str | None = None


@dataclass
class LLMStageStats:
    """What the stage did, reported in the run's stats."""

    calls: int = 0
    items_sent: int = 0
    verdicts: int = 0
    invalid_items: int = 0
    errors: int = 0
    rate_limited: bool = False
    skipped_after_rate_limit: int = 0
    messages: list[str] = field(default_factory=list)


def is_uncertain(c: Candidate, low: float, high: float) -> bool:
    """Worth an LLM call: neither clearly right nor clearly noise."""
    return low <= c.confidence < high


def apply_verdicts(batch: list[Candidate], raw: object, allowed_finals: set[str], stats: LLMStageStats) -> None:
    """Validate each item; a valid verdict sets `signals['llm']` (+1 / −1), an allowed final may replace ours."""
    items = raw.get("items") if isinstance(raw, dict) else None
    if not isinstance(items, list):
        stats.invalid_items += len(batch)
        return
    seen: set[int] = set()
    for item in items:
        try:
            parsed = LLMItem.model_validate(item)
        except ValidationError:
            stats.invalid_items += 1
            continue
        if not 0 <= parsed.id < len(batch) or parsed.id in seen:  # scope never comes from the model
            stats.invalid_items += 1
            continue
        cand = batch[parsed.id]
        if parsed.final is not None and compact(parsed.final) != compact(cand.final):
            if parsed.final not in allowed_finals:
                stats.invalid_items += 1
                continue
            cand.final = parsed.final
        seen.add(parsed.id)
        cand.signals["llm"] = 1.0 if parsed.verdict is Verdict.ACCEPT else -1.0
        stats.verdicts += 1


def run_llm_stage(
    candidates: list[Candidate],
    *,
    llm: LLMProvider,
    mode: Mode,
    dictionary: CanonicalDictionary,
    texts: dict[str, str],
    batch_size: int,
    list_cap: int,
) -> LLMStageStats:
    """Batch the candidates, call the provider, fold valid verdicts in; a 429 ends the stage for this run
    (and the provider keeps quiet across runs until its Retry-After has passed)."""
    stats = LLMStageStats()
    allowed = set(canonical_list(dictionary, list_cap)) if mode is Mode.RAG_ENHANCED else set()
    for i in range(0, len(candidates), batch_size):
        batch = candidates[i : i + batch_size]
        if stats.rate_limited:
            stats.skipped_after_rate_limit += len(batch)
            continue
        items = [(j, c, context_of(texts[c.segment_id], c.start_char, c.end_char)) for j, c in enumerate(batch)]
        prompt = build_user_prompt(items, mode, dictionary, list_cap)
        stats.calls += 1
        stats.items_sent += len(batch)
        try:
            raw = llm.complete_json(system=SYSTEM_PROMPT, user=prompt)
        except LLMRateLimitedError as exc:
            stats.rate_limited = True
            stats.messages.append(exc.message)
            if isinstance(exc, LLMCoolingDownError):  # nothing was sent: still waiting out an earlier 429
                stats.calls -= 1
                stats.items_sent -= len(batch)
                stats.skipped_after_rate_limit += len(batch)
            else:
                log.warning("LLM rate limited: no more LLM calls in this run")
            continue
        except LLMError as exc:  # a failed batch keeps its other signals; the run goes on
            stats.errors += 1
            stats.invalid_items += len(batch)
            stats.messages.append(exc.message)
            continue
        allowed_here = allowed | ({c.final for c in batch} if mode is Mode.RAG_ENHANCED else set())
        if mode is Mode.CONTEXT_FREE:
            allowed_here = _context_free_allowed(raw)
        apply_verdicts(batch, raw, allowed_here, stats)
    return stats


def _context_free_allowed(raw: object) -> set[str]:
    """Without a canonical list the model's spelling is the proposal; any non-empty string is allowed."""
    items = raw.get("items") if isinstance(raw, dict) else None
    if not isinstance(items, list):
        return set()
    return {i["final"] for i in items if isinstance(i, dict) and isinstance(i.get("final"), str) and i["final"].strip()}
