"""What a user taught, exported in the request shape of the ASR engines that take a vocabulary.

Pure: terms are built from the user's active corrections (the heard forms are what they corrected),
their promoted vocabulary and, optionally, a transcript's canonical list; then cut to each engine's
documented limits, most valuable first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from namesake.core import compact


class VocabularyFormat(StrEnum):
    """The engines whose request shape the export speaks (json: namesake's own)."""

    json = "json"
    deepgram = "deepgram"
    assemblyai = "assemblyai"
    speechmatics = "speechmatics"
    gladia = "gladia"
    whisper = "whisper"


# Documented limits (vendors' public docs, 2026):
DEEPGRAM_KEYTERMS, DEEPGRAM_KEYTERM_TOKENS, DEEPGRAM_REPLACE = 100, 500, 200  # Nova-3 keyterm / replace
ASSEMBLYAI_KEYTERMS, ASSEMBLYAI_MAX_WORDS = 1000, 6  # keyterms_prompt: phrases of at most 6 words
SPEECHMATICS_VOCAB = 1000  # additional_vocab: recommended maximum
WHISPER_PROMPT_TOKENS = 224  # the prompt the decoder conditions on


@dataclass
class Term:
    """A name as its owner writes it, the forms ASR wrote for it, and why it is on the list."""

    value: str
    entity_type: str
    heard: list[str] = field(default_factory=list)
    sources: set[str] = field(default_factory=set)
    frequency: int = 0

    def weight(self) -> tuple[int, int, str]:
        """Most valuable first: taught often, then promoted, then alphabetical for a stable order."""
        return (-self.frequency, -int("promoted" in self.sources), self.value.casefold())


def build_terms(
    corrections: list[tuple[str, str, str, int]],
    promoted: dict[str, list[str]],
    canonical: dict[str, list[str]] | None = None,
) -> list[Term]:
    """Merge (original, final, type, frequency) corrections, promoted values and canonical lists by final."""
    terms: dict[str, Term] = {}

    def term(value: str, entity_type: str) -> Term:
        key = compact(value)
        if key not in terms:
            terms[key] = Term(value, entity_type)
        return terms[key]

    for original, final, entity_type, frequency in corrections:
        t = term(final, entity_type)
        t.sources.add("correction")
        t.frequency += frequency
        if original not in t.heard and original != t.value:
            t.heard.append(original)
    for lists, source in ((promoted, "promoted"), (canonical or {}, "canonical")):
        for list_name, values in lists.items():
            for value in values:
                term(value, list_name).sources.add(source)
    return sorted((t for t in terms.values() if compact(t.value)), key=Term.weight)


def tokens(text: str) -> int:
    """A close enough count of a tokenizer's tokens for budgets: about four characters each."""
    return max(1, math.ceil(len(text) / 4))


def export(terms: list[Term], fmt: str, user_id: str) -> dict[str, Any]:
    """The body each engine takes, top-level keys named as it names them, within its limits."""
    if fmt == "json":
        return {
            "user_id": user_id,
            "terms": [
                {"term": t.value, "entity_type": t.entity_type, "spellings": t.heard,
                 "sources": sorted(t.sources), "frequency": t.frequency}
                for t in terms
            ],
        }  # fmt: skip
    if fmt == "deepgram":
        keyterm: list[str] = []
        budget = DEEPGRAM_KEYTERM_TOKENS
        for t in terms:
            if len(keyterm) == DEEPGRAM_KEYTERMS:
                break
            if tokens(t.value) <= budget:
                keyterm.append(t.value)
                budget -= tokens(t.value)
        replace = [f"{heard}:{t.value}" for t in terms for heard in t.heard if ":" not in heard + t.value]
        return {"keyterm": keyterm, "replace": replace[:DEEPGRAM_REPLACE]}
    if fmt == "assemblyai":
        short = [t.value for t in terms if len(t.value.split()) <= ASSEMBLYAI_MAX_WORDS]
        spelling = [{"from": t.heard, "to": t.value} for t in terms if t.heard]
        return {"keyterms_prompt": short[:ASSEMBLYAI_KEYTERMS], "custom_spelling": spelling}
    if fmt == "speechmatics":
        vocab = [{"content": t.value, **({"sounds_like": t.heard} if t.heard else {})} for t in terms]
        return {"additional_vocab": vocab[:SPEECHMATICS_VOCAB]}
    if fmt == "gladia":
        return {"custom_spelling_config": {"spelling_dictionary": {t.value: t.heard for t in terms if t.heard}}}
    if fmt == "whisper":
        words: list[str] = []
        budget = WHISPER_PROMPT_TOKENS - tokens("Glossary: ")
        for t in terms:
            cost = tokens(t.value + ", ")
            if cost > budget:
                break
            words.append(t.value)
            budget -= cost
        return {"prompt": "Glossary: " + ", ".join(words) if words else ""}
    raise ValueError(f"unknown format {fmt!r}")
