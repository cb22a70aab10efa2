"""The vocabulary export: each engine's request shape (written from its public docs) and its limits."""

from __future__ import annotations

from typing import Any

import pytest

from namesake.users.vocabulary import (
    ASSEMBLYAI_MAX_WORDS,
    DEEPGRAM_KEYTERM_TOKENS,
    DEEPGRAM_KEYTERMS,
    WHISPER_PROMPT_TOKENS,
    VocabularyFormat,
    build_terms,
    export,
    tokens,
)

CORRECTIONS = [("Cytova", "Cytiva", "ORG", 3), ("Psytiva", "Cytiva", "ORG", 1), ("tall grass", "Tallgrass", "ORG", 1)]
PROMOTED = {"persons": ["Rainer Blair"]}

# Each engine's documented request shape: top-level keys, and the type of each item.
SHAPES: dict[str, dict[str, Any]] = {
    "deepgram": {"keyterm": [str], "replace": [str]},  # replace items are "find:replace"
    "assemblyai": {"keyterms_prompt": [str], "custom_spelling": [{"from": [str], "to": str}]},
    "speechmatics": {"additional_vocab": [{"content": str, "sounds_like?": [str]}]},
    "gladia": {"custom_spelling_config": {"spelling_dictionary": {str: [str]}}},
    "whisper": {"prompt": str},
    "json": {
        "user_id": str,
        "terms": [{"term": str, "entity_type": str, "spellings": [str], "sources": [str], "frequency": int}],
    },
}


def conforms(value: Any, shape: Any) -> bool:
    """value has the shape: a type, a list of one shape, a dict of keys (`key?` optional, `str` any key)."""
    if isinstance(shape, type):
        return isinstance(value, shape)
    if isinstance(shape, list):
        return isinstance(value, list) and all(conforms(v, shape[0]) for v in value)
    if not isinstance(value, dict):
        return False
    if list(shape) == [str]:
        return all(isinstance(k, str) and conforms(v, shape[str]) for k, v in value.items())
    required = {k for k in shape if not k.endswith("?")}
    allowed = {k.rstrip("?") for k in shape}
    return required <= set(value) <= allowed and all(
        conforms(v, shape.get(k, shape.get(k + "?"))) for k, v in value.items()
    )


def test_terms_merge_by_final_keep_the_heard_forms_and_rank_what_was_taught_most_first() -> None:
    terms = build_terms(CORRECTIONS, PROMOTED)
    assert [t.value for t in terms] == ["Cytiva", "Tallgrass", "Rainer Blair"]
    assert terms[0].heard == ["Cytova", "Psytiva"] and terms[0].frequency == 4
    assert terms[2].sources == {"promoted"} and terms[2].heard == []


@pytest.mark.parametrize("fmt", [f.value for f in VocabularyFormat])
def test_every_format_has_its_engines_request_shape(fmt: str) -> None:
    body = export(build_terms(CORRECTIONS, PROMOTED), fmt, "alice")
    assert conforms(body, SHAPES[fmt]), body
    assert "Cytiva" in str(body)


def test_the_heard_forms_become_each_engines_variants() -> None:
    terms = build_terms(CORRECTIONS, PROMOTED)
    assert "Cytova:Cytiva" in export(terms, "deepgram", "u")["replace"]
    assert {"from": ["Cytova", "Psytiva"], "to": "Cytiva"} in export(terms, "assemblyai", "u")["custom_spelling"]
    assert {"content": "Cytiva", "sounds_like": ["Cytova", "Psytiva"]} in export(terms, "speechmatics", "u")[
        "additional_vocab"
    ]
    assert export(terms, "gladia", "u")["custom_spelling_config"]["spelling_dictionary"]["Tallgrass"] == ["tall grass"]


def test_the_documented_limits_hold_for_a_long_list() -> None:
    many = [(f"heard {i}", f"Name{i} Company Holdings", "ORG", 1000 - i) for i in range(1500)]
    many.append(("x", "one two three four five six seven", "ORG", 5000))
    terms = build_terms(many, {})
    keyterm = export(terms, "deepgram", "u")["keyterm"]
    assert len(keyterm) <= DEEPGRAM_KEYTERMS and sum(tokens(k) for k in keyterm) <= DEEPGRAM_KEYTERM_TOKENS
    prompt = export(terms, "assemblyai", "u")["keyterms_prompt"]
    assert len(prompt) <= 1000 and all(len(p.split()) <= ASSEMBLYAI_MAX_WORDS for p in prompt)
    assert len(export(terms, "speechmatics", "u")["additional_vocab"]) <= 1000
    assert tokens(export(terms, "whisper", "u")["prompt"]) <= WHISPER_PROMPT_TOKENS
    assert keyterm[0] == "one two three four five six seven"  # most taught first (Deepgram takes phrases)
