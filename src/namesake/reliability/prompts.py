"""The LLM's prompts: RAG_ENHANCED (canonical list as the source of truth) and CONTEXT_FREE."""

from __future__ import annotations

import json
from typing import Any

from namesake.domain import Candidate, CanonicalDictionary, Mode

SYSTEM_PROMPT = (
    "You check automatic speech recognition (ASR) transcripts for mis-recognised names: people, "
    "companies, places, acronyms. For each numbered item decide whether the span, as heard in its "
    "context, really is the proposed entity written wrongly. Answer with one JSON object: "
    '{"items": [{"id": <item id>, "verdict": "accept" | "reject", "final": <string, optional>}]}. '
    "Use only ids you were given. Never invent a span or an id."
)

RAG_RULES = (
    "The canonical entities below are the source of truth for this meeting: a `final` must be one of "
    "them, spelled exactly as listed, or the item's proposed final."
)
CONTEXT_FREE_RULES = (
    "There is no list of canonical entities for this meeting. Accept only when you are confident the span "
    "is a mis-recognised name or acronym; give its correct spelling as `final`."
)
CONTEXT_CHARS = 120


def canonical_list(dictionary: CanonicalDictionary, cap: int) -> list[str]:
    """Canonical values interleaved across lists (most frequent first), at most `cap`."""
    lists = [v for v in dictionary.lists.values() if v]
    out: list[str] = []
    for i in range(max((len(v) for v in lists), default=0)):
        for values in lists:
            if i < len(values) and values[i] not in out:
                out.append(values[i])
    return out[:cap]


def context_of(text: str, start: int, end: int, radius: int = CONTEXT_CHARS) -> str:
    """The span in its sentence-ish surroundings, marked with [[ ]]."""
    left = text[max(0, start - radius) : start]
    right = text[end : end + radius]
    return f"{left}[[{text[start:end]}]]{right}"


def build_user_prompt(
    items: list[tuple[int, Candidate, str]], mode: Mode, dictionary: CanonicalDictionary, cap: int
) -> str:
    """The user message: rules, the canonical list (capped) when there is one, then the numbered items."""
    payload: dict[str, Any] = {
        "items": [
            {"id": i, "span": c.original, "proposed_final": c.final, "entity_type": c.entity_type, "context": ctx}
            for i, c, ctx in items
        ]
    }
    if mode is Mode.RAG_ENHANCED:
        payload["canonical_entities"] = canonical_list(dictionary, cap)
        rules = RAG_RULES
    else:
        rules = CONTEXT_FREE_RULES
    return rules + "\n\n" + json.dumps(payload, ensure_ascii=False)
