"""Score and dispose: confidence in [0,1] from the signals present, then the disposition; every signal kept for audit.

The similarity and prior signals go through a learned model (gradient-boosted trees, `trees.py`, fitted
by `bench/fit/calibrate.py`) or, with RELIABILITY_SCORER=logistic, a logistic over RELIABILITY_WEIGHT_*.
Signals the bench data cannot teach (ASR word confidence, the LLM verdict, the user's memory) are added
on top with their own settings, the same way for both.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jellyfish
from rapidfuzz.distance import Levenshtein

from namesake.core import (
    ConfigurationError,
    Settings,
    common_word_frequency,
    compact,
    memoised,
    phonetic_keys,
    sound_similarity,
    syllable_similarity,
    word_frequency,
    written_form,
)
from namesake.domain import DISPOSITION_RANK, Candidate, Disposition, Segment
from namesake.reliability.memory_model import BUNDLED_MEMORY_MODEL, LearnedPolicy
from namesake.reliability.memory_policy import (
    bonus_of,
    completes_right_entity,
    memory_bounds,
    taught,
    while_waiting,
    with_teaching,
)
from namesake.reliability.reading import GAIN, STAGE1
from namesake.reliability.rivals import bigger_to_read
from namesake.reliability.spot import token_set_similarity
from namesake.reliability.trees import BUNDLED_MODEL, BUNDLED_READING_MODEL, TreeModel, load_model
from namesake.reliability.wider import read_wider, wider_around

# Signals that enter the logistic score, each with its RELIABILITY_WEIGHT_<NAME> setting.
LINEAR_SIGNALS = (
    "edit", "rag", "phonetic", "frequency", "length", "capitalised", "token_gap", "commonness", "acronym", "asr",
    "spoken_form",
)  # fmt: skip
# Added to the trees' log-odds: the bench data has no word confidences to learn them from.
OUTSIDE_MODEL = ("asr",)


@dataclass(frozen=True)
class Scorer:
    """The scoring model (trees, or None for the logistic), its weights, and the decision thresholds."""

    bias: float
    signals: dict[str, float]
    llm: float
    auto_apply: float
    suggest: float
    model: TreeModel | None = None
    # what the trees' log-odds become once the language model has read a candidate (bench/fit/calibrate_reading.py)
    reading: TreeModel | None = None
    # a rewrite of a word in use the language model read is applied on its own from this confidence
    read_auto_apply: float = Settings.model_fields["reliability_read_auto_apply_threshold"].default
    # and shown from this one (the second trees' probability is not on the first trees' scale)
    read_suggest: float = Settings.model_fields["reliability_read_suggest_threshold"].default
    # the learned memory policy (RELIABILITY_MEMORY_POLICY=learned), else the hand rules
    memory: LearnedPolicy | None = None

    @classmethod
    def from_settings(cls, s: Settings) -> Scorer:
        """Read the scorer, RELIABILITY_WEIGHT_* and threshold settings."""
        weights = {name: float(getattr(s, f"reliability_weight_{name}")) for name in LINEAR_SIGNALS}
        model = reading = memory = None
        if s.reliability_scorer == "trees":
            model = load_model(Path(s.reliability_scorer_model or BUNDLED_MODEL))
            reading = load_model(
                Path(s.reliability_reading_model or BUNDLED_READING_MODEL), "RELIABILITY_READING_MODEL"
            )
            check_reading_model(reading.meta, s)
        if s.reliability_memory_policy == "learned":
            policy = load_model(Path(s.reliability_memory_model or BUNDLED_MEMORY_MODEL), "RELIABILITY_MEMORY_MODEL")
            memory = LearnedPolicy(policy, s.reliability_memory_auto_apply_threshold)
        return cls(
            s.reliability_weight_bias,
            weights,
            s.reliability_weight_llm,
            s.reliability_auto_apply_threshold,
            s.reliability_suggest_threshold,
            model,
            reading,
            read_auto_apply=s.reliability_read_auto_apply_threshold,
            read_suggest=s.reliability_read_suggest_threshold,
            memory=memory,
        )


def check_reading_model(meta: dict[str, Any], s: Settings) -> None:
    """A reading model's gains mean what they meant in fitting only for windows of the same words (when the language
    model reads), and it knows nothing of candidates below those it learnt from: refuse settings that would differ."""
    if s.reliability_language_model == "none":
        return  # nothing is read: the reading model is never asked
    words = meta.get("window_words")
    said = [s.reliability_language_model_left_words, s.reliability_language_model_right_words]
    if words is not None and list(words) != said:
        raise ConfigurationError(
            f"RELIABILITY_LANGUAGE_MODEL_LEFT_WORDS / _RIGHT_WORDS {said[0]} / {said[1]}: the reading model was fitted"
            f" on windows of {words[0]} / {words[1]} words (refit it with bench/fit/calibrate_reading.py)",
            field="RELIABILITY_LANGUAGE_MODEL_LEFT_WORDS",
        )
    fit_from = meta.get("fit_from")
    if fit_from is not None and s.reliability_read_from < float(fit_from):
        raise ConfigurationError(
            f"RELIABILITY_READ_FROM {s.reliability_read_from}: the reading model learnt from candidates of"
            f" {fit_from} and above only",
            field="RELIABILITY_READ_FROM",
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
    original = cand.original if cand.match_original is None else cand.match_original
    final = cand.final if cand.match_final is None else cand.match_final
    key = (cand.original, cand.final, original, final, cand.rank, cand.window_tokens, cand.entity_type, language)
    cand.signals.update(
        _text_signals(*key, acronym=cand.signals.pop("acronym_spelled", cand.signals.get("acronym", 0.0)))
    )
    if segment is not None:
        doubt = asr_doubt(segment, cand.start_char, cand.end_char)
        if doubt is not None:
            cand.signals["asr"] = round(doubt, 4)


@memoised
def _text_signals(
    cand_original: str, cand_final: str, original: str, final: str, rank: int, window_tokens: int,
    entity_type: str, language: str, *, acronym: float,
) -> dict[str, float]:  # fmt: skip
    """The signals that depend on the texts only: the same change recurs across a transcript, computed once."""
    a, b = compact(original), compact(final)
    s: dict[str, float] = {}
    s["edit"] = round(Levenshtein.normalized_similarity(a, b), 4)
    s["rag"] = round(token_set_similarity(original, final), 4)
    pa, pb = phonetic_keys(original, language), phonetic_keys(final, language)
    if set(pa) & set(pb):
        s["phonetic"] = 1.0
    else:
        near = (jellyfish.jaro_winkler_similarity(x, y) for x, y in zip(pa, pb, strict=False))
        s["phonetic"] = round(max(near, default=0.0) * 0.8, 4)
    s["sound"] = round(sound_similarity(original, final), 4)
    s["sound_syllables"] = round(syllable_similarity(original, final), 4)
    s["acronym"] = acronym
    s["frequency"] = round(5.0 / (5.0 + rank), 4)
    s["commonness"] = round(min(1.0, word_frequency(cand_original, language) / 7.0), 4)
    s["length"] = round(min(1.0, len(b) / 8.0), 4)
    s["capitalised"] = 1.0 if any(w[:1].isupper() for w in original.split()) else 0.0
    s["token_gap"] = float(abs(len(original.split()) - len(final.split())))
    # what actually changes, once trimmed: "Colombia" → "Colombian" is an inflection, not a mis-hearing
    o, f = compact(cand_original), compact(cand_final)
    s["change_edit"] = round(Levenshtein.normalized_similarity(o, f), 4)
    s["same_first_letter"] = 1.0 if o[:1] == f[:1] else 0.0
    s["inflection"] = 1.0 if o and f and (o.startswith(f) or f.startswith(o)) else 0.0
    s["final_commonness"] = round(min(1.0, word_frequency(cand_final, language) / 7.0), 4)
    s["everyday_word"] = round(min(1.0, common_word_frequency(cand_original, language) / 7.0), 4)
    s["multi_token"] = 1.0 if window_tokens > 1 else 0.0
    if o == f:  # the same letters in another form: which form changes tells how safe it is to impose
        s["form_only"] = 1.0
        s["case_only"] = 1.0 if written_form(cand_original, False) == written_form(cand_final, False) else 0.0
        s["spacing_only"] = 1.0 if "".join(written_form(cand_original)) == "".join(written_form(cand_final)) else 0.0
    s[f"type_{entity_type.lower()}"] = 1.0
    return s


def fill_context_signals(cands: list[Candidate]) -> None:
    """Signals across a transcript's candidates: how often the same change recurs, how contested a span is."""
    keys = [((compact(c.original), compact(c.final)), (c.segment_id, c.start_char, c.end_char)) for c in cands]
    pairs = Counter(pair for pair, _ in keys)
    spans = Counter(span for _, span in keys)
    repeats = {n: round(math.log1p(n), 4) for n in set(pairs.values())}  # a few distinct counts: rounded once
    alternatives = {n: round(math.log(n), 4) for n in set(spans.values())}
    for c, (pair, span) in zip(cands, keys, strict=True):
        c.signals["pair_repeats"] = repeats[pairs[pair]]
        c.signals["span_alternatives"] = alternatives[spans[span]]


def _outside(signals: list[dict[str, float]], w: Scorer) -> list[float]:
    """The log-odds the signals outside the trees add (ASR doubt), per candidate: one pass a signal, not a sum a
    candidate (on a 9,000-word call that loop was a tenth of the score stage)."""
    out = [0.0] * len(signals)
    for name in OUTSIDE_MODEL:
        weight = w.signals[name]
        out = [o + weight * s.get(name, 0.0) for o, s in zip(out, signals, strict=True)]
    return out


def base_logits(signals: list[dict[str, float]], w: Scorer) -> list[float]:
    """Log-odds from the similarity and prior signals: the trees (plus ASR doubt) or the logistic."""
    if w.model is not None:
        trees = [float(z) for z in w.model.logits(signals)]
        read = [i for i, s in enumerate(signals) if GAIN in s] if w.reading is not None else []
        if read and w.reading is not None:  # the second model: the trees' view plus the language model's
            again = w.reading.logits([{**signals[i], STAGE1: trees[i]} for i in read])
            for i, z in zip(read, again, strict=True):
                trees[i] = float(z)
        return [z + o for z, o in zip(trees, _outside(signals, w), strict=True)]
    return [w.bias + sum(weight * s.get(name, 0.0) for name, weight in w.signals.items()) for s in signals]


def confidence_ceilings(candidates: list[Candidate], w: Scorer, unknown: frozenset[str]) -> list[float] | None:
    """An upper bound of each candidate's evidence whatever the `unknown` signals turn out to be (the trees only;
    None under the logistic: no bound). What lets a stage skip the candidates that cannot matter."""
    if w.model is None:
        return None
    signals = [c.signals for c in candidates]
    ceilings = w.model.ceiling_logits(signals, unknown)
    if ceilings is None:
        return None
    return [1.0 / (1.0 + math.exp(-(float(z) + o))) for z, o in zip(ceilings, _outside(signals, w), strict=True)]


def evidence(signals: dict[str, float], w: Scorer, base: float | None = None, *, context_free: bool = False) -> float:
    """sigmoid(base log-odds [+ LLM verdict]): what the signals say, before the memory and the policy."""
    if context_free:  # nothing to compare with: only the LLM's verdict can make it a suggestion
        z = w.bias
    elif base is not None:
        z = base
    else:
        z = base_logits([signals], w)[0]
    if "llm" in signals:  # verdict in [-1, 1]: the model confirmed or refused this final
        z += w.llm * signals["llm"]
    return 1.0 / (1.0 + math.exp(-z))


def confidence(signals: dict[str, float], w: Scorer, *, bonus: float = 0.0) -> float:
    """The evidence plus the memory's bonus, in [0, 1]; independent of the decision thresholds."""
    return with_memory(evidence(signals, w), bonus)


def with_memory(evidence_: float, bonus: float) -> float:
    """Evidence plus the memory's bonus, clipped to [0, 1]."""
    return max(0.0, min(1.0, evidence_ + bonus))


def dispose(c: Candidate, w: Scorer, evidence_: float | None = None) -> Disposition:
    """auto_applied at or above AUTO_APPLY (READ_AUTO_APPLY for an everyday word the language model read), pending
    at or above SUGGEST (READ_SUGGEST for one it read), else dropped; then the policy's caps.

    The caps: the memory's bounds (`memory_policy.memory_bounds`), a rewrite around or of a right entity is
    never automatic, and one that would repeat its mis-heard neighbour or make an everyday word letters nobody
    says as a word ("workers comp" → CMP) is never proposed.
    """
    conf = c.confidence
    read = w.reading is not None and GAIN in c.signals
    auto_apply = max(w.read_auto_apply, w.auto_apply) if read else w.auto_apply  # stricter, never looser
    suggest = w.read_suggest if read else w.suggest
    if conf >= auto_apply:
        decision = Disposition.AUTO_APPLIED
    elif conf >= suggest:
        decision = Disposition.PENDING
    else:
        decision = Disposition.DROPPED
    bounded = memory_bounds(c, conf if evidence_ is None else evidence_, decision, auto_apply, w.memory)
    decision = bounded if completes_right_entity(c) else c.capped(bounded)
    if c.never_proposed:  # "Backman Beckman Coulter", "workers CMP": nobody would accept that
        decision = Disposition.DROPPED
    return decision


def score_candidates(candidates: list[Candidate], w: Scorer) -> None:
    """Set confidence and decision on each candidate from its signals (the model runs once for all)."""
    bases = base_logits([c.signals for c in candidates], w) if candidates else []
    for c, base in zip(candidates, bases, strict=True):
        ev = evidence(c.signals, w, base, context_free=c.context_free)
        conf = with_memory(ev, bonus_of(c))
        # teaching lifts the confidence under the rules; the learned policy decides a taught fix on its own
        c.confidence = round(conf if w.memory is not None else with_teaching(c, conf), 4)
        swapped = c.proposed_final is not None
        c.disposition = dispose(c, w, ev)
        if swapped and c.proposed_final is None:  # the spotter's own final applies (keep_proposed_final): its evidence
            c.confidence = round(ev, 4)
        c.confidence = round(while_waiting(c, c.confidence), 4)  # a taught pair that waits is shown, not folded


def resolve_overlaps(
    candidates: list[Candidate], *, hold_wider: bool = False, hold_bigger: Callable[[Candidate], bool] | None = None
) -> list[Candidate]:
    """Keep the best candidate of each overlapping group.

    The strongest decision first; among equals a reading the language model reads far likelier than a taught fix
    inside it (`read_wider`), then what the user taught (they said what this span means), or a name said as the list
    says it around a reading of it, then confidence, then the longer span, then the earlier. A
    fix the user taught takes its span from the readings inside it, with the strongest decision among them
    (`covers_reading`). `hold_wider` (before the language model reads): a list reading around a taught fix is kept
    beside it, so that both are read and the pass after the reading chooses; so is a bigger reading of a name kept
    inside it (`rivals.bigger_to_read`: "michael phillips" → Michael Phillips around "michael" → Michael) for which
    `hold_bigger` says yes (the language model will read it).
    """
    _taught_over_readings(candidates)
    said, wider = _said_as_listed(candidates), read_wider(candidates)
    ordered = sorted(
        candidates,
        key=lambda c: (
            -DISPOSITION_RANK[c.disposition],
            id(c) not in wider,
            not (taught(c) or id(c) in said),
            -c.confidence,
            -(c.end_char - c.start_char),
            c.start_char,
        ),
    )
    taken: dict[str, list[Candidate]] = {}
    kept = []
    for c in ordered:
        spans = taken.setdefault(c.segment_id, [])
        hit = [k for k in spans if c.start_char < k.end_char and c.end_char > k.start_char]
        if hit and not (hold_wider and _around_taught(c, hit)) and not bigger_to_read(c, hit, hold_bigger):
            continue
        if not hit:
            spans.append(c)
        kept.append(c)
    return sorted(kept, key=lambda c: (c.segment_id, c.start_char))


def _around_taught(c: Candidate, hit: list[Candidate]) -> bool:
    """A list reading over a wider span than each taught fix it overlaps, holding them all."""
    return c.taught is None and all(taught(k) and wider_around(c, k.start_char, k.end_char) for k in hit)


def _said_as_listed(candidates: list[Candidate]) -> set[int]:
    """The ids of the names said as the list says them ("yeti dot com" → YETI.com) around a reading of the same name
    ("yeti" → YETI, "dot com" → YETI.com): among equal decisions they win the span, the whole name written once
    (before, "YETI YETI.com")."""
    said: set[int] = set()
    for s in candidates:
        if not s.signals.get("spoken_form"):
            continue
        whole = compact(s.final)
        if any(
            c is not s
            and c.segment_id == s.segment_id
            and s.start_char <= c.start_char
            and c.end_char <= s.end_char
            and compact(c.final) in whole
            for c in candidates
        ):
            said.add(id(s))
    return said


def _taught_over_readings(candidates: list[Candidate]) -> None:
    """Lift a taught fix to the strongest decision of the readings within its span, a narrower taught fix among them:
    they say the span is a name here, and the user said which ("yeti dot" → YETI.com over "yeti" → YETI).
    Not a fix of a spelling the list holds (`rewrites_canonical`): the reading there is the list's own."""
    mine = [
        c
        for c in candidates
        if taught(c) and c.taught is not None and not c.taught.one_off and not c.rewrites_canonical
    ]
    if not mine:
        return
    by_segment: dict[str, list[Candidate]] = {}
    for c in candidates:
        by_segment.setdefault(c.segment_id, []).append(c)
    for t in mine:
        inside = [
            c.disposition
            for c in by_segment[t.segment_id]
            if c is not t
            and t.start_char <= c.start_char
            and c.end_char <= t.end_char
            and (not taught(c) or c.end_char - c.start_char < t.end_char - t.start_char)
        ]
        best = max(inside, key=DISPOSITION_RANK.__getitem__, default=None)
        if best is not None and DISPOSITION_RANK[best] > DISPOSITION_RANK[t.disposition]:
            t.covers_reading = t.disposition = best
