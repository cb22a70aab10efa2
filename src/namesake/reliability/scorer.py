"""S5/S6: confidence in [0,1] from the signals present, then the decision; every signal kept for audit."""

from __future__ import annotations

import math
from dataclasses import dataclass

import jellyfish
from rapidfuzz.distance import Levenshtein

from namesake.reliability.candidates import token_set_similarity
from namesake.reliability.types import Candidate, Decision, Segment
from namesake.settings import Settings
from namesake.text import compact, phonetic_keys, word_frequency

# Signals that enter the logistic score, each with its RELIABILITY_WEIGHT_<NAME> setting.
LINEAR_SIGNALS = (
    "edit", "rag", "phonetic", "frequency", "length", "capitalised", "token_gap", "commonness", "acronym", "asr",
    "spoken_form",
)  # fmt: skip


@dataclass(frozen=True)
class ScorerWeights:
    """Logistic weights per signal, the LLM verdict's weight, and the decision thresholds (from settings)."""

    bias: float
    signals: dict[str, float]
    llm: float
    auto_apply: float
    suggest: float

    @classmethod
    def from_settings(cls, s: Settings) -> ScorerWeights:
        """Read the RELIABILITY_WEIGHT_* and threshold settings."""
        weights = {name: float(getattr(s, f"reliability_weight_{name}")) for name in LINEAR_SIGNALS}
        return cls(
            s.reliability_weight_bias,
            weights,
            s.reliability_weight_llm,
            s.reliability_auto_apply_threshold,
            s.reliability_suggest_threshold,
        )


def asr_doubt(segment: Segment, start: int, end: int) -> float | None:
    """1 − mean confidence of the ASR words inside the span; None when the segment has no word confidences."""
    inside = [
        w.confidence
        for w in segment.words
        if w.start_char is not None and w.end_char is not None and w.start_char < end and w.end_char > start
    ]
    return None if not inside else 1.0 - sum(inside) / len(inside)


def fill_signals(cand: Candidate, segment: Segment | None, language: str) -> None:
    """Compute the similarity and prior signals of one candidate (pure; idempotent)."""
    # Similarity is judged on the whole window that matched the entry, before edge trimming.
    original = cand.meta.get("match_original", cand.original)
    final = cand.meta.get("match_final", cand.final)
    a, b = compact(original), compact(final)
    s = cand.signals
    s["edit"] = round(Levenshtein.normalized_similarity(a, b), 4)
    s["rag"] = round(token_set_similarity(original, final), 4)
    pa, pb = phonetic_keys(original, language), phonetic_keys(final, language)
    if set(pa) & set(pb):
        s["phonetic"] = 1.0
    else:
        near = (jellyfish.jaro_winkler_similarity(x, y) for x, y in zip(pa, pb, strict=False))
        s["phonetic"] = round(max(near, default=0.0) * 0.8, 4)
    s["acronym"] = s.pop("acronym_spelled", s.get("acronym", 0.0))
    rank = int(cand.meta.get("rank", 10))
    s["frequency"] = round(5.0 / (5.0 + rank), 4)
    s["commonness"] = round(min(1.0, word_frequency(cand.original, language) / 7.0), 4)
    s["length"] = round(min(1.0, len(b) / 8.0), 4)
    s["capitalised"] = 1.0 if any(w[:1].isupper() for w in original.split()) else 0.0
    s["token_gap"] = float(abs(len(original.split()) - len(final.split())))
    if segment is not None:
        doubt = asr_doubt(segment, cand.start_char, cand.end_char)
        if doubt is not None:
            s["asr"] = round(doubt, 4)


def confidence(signals: dict[str, float], w: ScorerWeights) -> float:
    """sigmoid(bias + Σ weight·signal [+ LLM verdict]), plus the memory bonus; a signal absent counts 0."""
    if signals.get("context_free"):  # nothing to compare with: only the LLM's verdict can make it a suggestion
        z = w.bias
    else:
        z = w.bias + sum(weight * signals.get(name, 0.0) for name, weight in w.signals.items())
    if "llm" in signals:  # verdict in [-1, 1]: the model confirmed or refused this final
        z += w.llm * signals["llm"]
    score = 1.0 / (1.0 + math.exp(-z))
    remembered = signals.get("remembered", 0.0)
    if remembered >= 1.0:  # the user made this exact correction before: at least a firm suggestion
        score = max(score, (w.suggest + w.auto_apply) / 2)
    elif remembered > 0:  # a near spelling of an original they corrected: worth showing them
        score = max(score, w.suggest)
    score += signals.get("memory_bonus", 0.0)
    if signals.get("extends_right_entity"):  # rewrites around a right entity: for a reviewer, never automatic
        score = min(score, (w.suggest + w.auto_apply) / 2)
    return max(0.0, min(1.0, score))


def decide(conf: float, w: ScorerWeights) -> Decision:
    """auto_applied at or above AUTO_APPLY, pending at or above SUGGEST, else dropped."""
    if conf >= w.auto_apply:
        return Decision.AUTO_APPLIED
    if conf >= w.suggest:
        return Decision.PENDING
    return Decision.DROPPED


def score_candidates(candidates: list[Candidate], w: ScorerWeights) -> None:
    """Set confidence and decision on each candidate from its signals."""
    for c in candidates:
        c.confidence = round(confidence(c.signals, w), 4)
        c.decision = decide(c.confidence, w)


def resolve_overlaps(candidates: list[Candidate]) -> list[Candidate]:
    """Keep the most confident candidate of each overlapping group (ties: longer span, earlier)."""
    ordered = sorted(candidates, key=lambda c: (-c.confidence, -(c.end_char - c.start_char), c.start_char))
    taken: dict[str, list[tuple[int, int]]] = {}
    kept = []
    for c in ordered:
        spans = taken.setdefault(c.segment_id, [])
        if any(c.start_char < e and c.end_char > s for s, e in spans):
            continue
        spans.append((c.start_char, c.end_char))
        kept.append(c)
    return sorted(kept, key=lambda c: (c.segment_id, c.start_char))
