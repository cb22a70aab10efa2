"""The reliability pipeline: stages 1–6 as one pure function, and the service that feeds and persists it."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from namesake.core import (
    Settings,
    changes_text,
    check_cancelled,
    context_around,
    keep_dictionary_in,
    thread_budget,
    tokenize,
)
from namesake.domain import (
    Candidate,
    CandidateSource,
    CanonicalDictionary,
    Disposition,
    Mode,
    RememberedCorrection,
    Segment,
)
from namesake.reliability.ask_llm import is_uncertain, run_llm_stage
from namesake.reliability.context import CONTEXT_SIGNALS, fill_context, keep_counts_in
from namesake.reliability.edge_forms import edge_form_fixes
from namesake.reliability.endings import by_heard_ending
from namesake.reliability.gate import apply_gate
from namesake.reliability.memory_policy import confirm_names, mark_disputed
from namesake.reliability.pieces import merged_pieces, written_once
from namesake.reliability.ports import LanguageModel, LLMProvider
from namesake.reliability.reading import needs_reading, read_in_context, reads
from namesake.reliability.recall import refused_alike
from namesake.reliability.refusal_policy import mark_refusals, refusal_stands
from namesake.reliability.score import (
    Scorer,
    confidence_ceilings,
    fill_context_signals,
    fill_signals,
    resolve_overlaps,
    score_candidates,
)
from namesake.reliability.spot import context_free_spans, spot_candidates
from namesake.reliability.whole import made_whole

# Candidates whose signals are filled between two checks that the client still waits (a few milliseconds' work).
CANCEL_CHECK_EVERY = 2_000


@dataclass
class BoostStats:
    """What the memory boost did in one run."""

    queried: int = 0
    boosted: int = 0
    errors: int = 0


class MemoryBooster(Protocol):
    """The memory's port: adds `memory_bonus` (and may propose the remembered final) for one user's candidates."""

    def boost(self, user_id: str, candidates: list[Candidate], *, exclude: frozenset[str] = frozenset()) -> BoostStats:
        """Fail-soft: an error leaves candidates unchanged and is counted in the stats; `exclude`d originals (taught
        for other calls) give no boost."""
        ...


@dataclass
class RunStats:
    """Counts and timings of one analysis, returned to the caller."""

    mode: str = Mode.CONTEXT_FREE.value
    canonical_entries: int = 0
    candidates: int = 0
    gate_hits: int = 0
    refused_by_user: int = 0
    suggestions: int = 0
    auto_applied: int = 0
    pending: int = 0
    memory: dict[str, int] = field(default_factory=dict)
    llm: dict[str, Any] = field(default_factory=dict)
    language_model: dict[str, Any] = field(default_factory=dict)
    stage_seconds: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


@dataclass
class PipelineInputs:
    """Everything the stages read, as plain values."""

    segments: list[Segment]
    dictionary: CanonicalDictionary
    language: str = "en"
    user_id: str | None = None
    remembered: list[RememberedCorrection] = field(default_factory=list)
    refused: dict[tuple[str, str], int] = field(default_factory=dict)  # refusal_policy.refusal_key → times refused
    refused_around: dict[str, list[str]] = field(default_factory=dict)  # refused final → the words around each refusal
    refused_read: dict[tuple[str, str], float] = field(default_factory=dict)  # refusal_key → best lm_gain where refused
    taught_elsewhere: frozenset[str] = frozenset()  # normalised originals of fixes scoped to other calls: no boost


def _timed(stats: RunStats, name: str, fn: Callable[[], Any]) -> Any:
    check_cancelled()  # a stage starts only while its client still waits
    t0 = time.perf_counter()
    try:
        return fn()
    finally:
        stats.stage_seconds[name] = round(stats.stage_seconds.get(name, 0.0) + time.perf_counter() - t0, 4)


def candidate_signals(
    inputs: PipelineInputs, settings: Settings, stats: RunStats, *, with_llm: bool = False, scorer: Scorer | None = None
) -> list[Candidate]:
    """spot → gate → the user's refusals → every signal: all readings of every span, not yet scored.

    With a scorer, a reading whose evidence cannot exceed KEEP_ABOVE whatever its context signals say (nor be
    kept by the memory or the LLM) is left out before they are computed: it would be dropped unread anyway.
    """
    entries = inputs.dictionary.entries()
    stats.canonical_entries = len(entries)
    by_id = {s.id: s for s in inputs.segments}
    raw = _timed(
        stats,
        "spot",
        lambda: spot_candidates(
            inputs.segments,
            entries,
            min_similarity=settings.reliability_candidate_min_similarity,
            max_tokens=settings.reliability_max_window_tokens,
            language=inputs.language,
            remembered=inputs.remembered,
            threads=thread_budget(),  # a worker beside others: one; alone: every core
        ),
    )
    if inputs.dictionary.mode is Mode.CONTEXT_FREE and with_llm:
        raw += context_free_spans(inputs.segments, inputs.language)
    stats.candidates = len(raw)
    gate = _timed(stats, "gate", lambda: apply_gate(raw, entries))
    stats.gate_hits = gate.gated
    heard = by_heard_ending(gate.passed)  # of a value and its -s form on the same words, the ending heard chooses
    cands: list[Candidate] = mark_refusals(heard, inputs.refused, inputs.remembered, inputs.refused_read)
    stats.refused_by_user = len(heard) - len(cands) + sum(c.refused > 0 for c in cands)
    confirm_names(cands, inputs.remembered)
    mark_disputed(cands, inputs.remembered)

    radius = settings.reliability_corrections_memory_context_radius

    def alike(c: Candidate) -> bool:
        here = context_around(by_id[c.segment_id].text, c.start_char, c.end_char, radius)
        return refused_alike(c, here, inputs.refused_around, inputs.language)

    def signals() -> None:
        for i, c in enumerate(cands):
            if i % CANCEL_CHECK_EVERY == 0:
                check_cancelled()
            fill_signals(c, by_id[c.segment_id], inputs.language)
        # a refused pair the model cannot read, or among the words it was refused among, stays refused here; the rest
        # wait for their sentence (refusal_stands)
        cands[:] = [c for c in cands if not c.refused or (reads(c.signals) and not alike(c))]
        fill_context_signals(cands)
        if scorer is not None:
            ceilings = confidence_ceilings(cands, scorer, CONTEXT_SIGNALS)
            if ceilings is not None:
                cands[:] = [c for c, top in zip(cands, ceilings, strict=True) if top > KEEP_ABOVE or _held(c)]
        touched = {c.segment_id for c in cands}
        tokens = {s.id: tokenize(s.text) for s in inputs.segments if s.id in touched}
        fill_context(cands, inputs.segments, tokens, inputs.language)

    _timed(stats, "signals", signals)
    return cands


# Below this confidence a dropped reading goes no further: the memory or the LLM can lift the rest only so far.
KEEP_ABOVE = 0.05


def _held(c: Candidate) -> bool:
    """Kept whatever its confidence: what the user taught (the policy may apply it), what only the LLM judges."""
    return c.taught is not None or c.source == CandidateSource.CONTEXT_FREE


def _worth_keeping(c: Candidate) -> bool:
    """A reading that may still become a suggestion (the memory or the LLM can lift the rest only so far)."""
    return (
        c.confidence > KEEP_ABOVE
        or c.disposition is not Disposition.DROPPED
        or c.source == CandidateSource.CONTEXT_FREE
    )


def run_stages(
    inputs: PipelineInputs,
    settings: Settings,
    *,
    booster: MemoryBooster | None = None,
    llm: LLMProvider | None = None,
    language_model: LanguageModel | None = None,
) -> tuple[list[Candidate], RunStats]:
    """spot → gate → signals → memory boost → the language model on everyday words → LLM on the uncertain
    → score → decide → edge forms, pieces, whole names, seams; pure but for the ports."""
    weights = Scorer.from_settings(settings)
    stats = RunStats(mode=inputs.dictionary.mode.value)
    by_id = {s.id: s for s in inputs.segments}
    cands = _scored(inputs, settings, stats, weights, with_llm=llm is not None, reads=language_model is not None)

    if booster is not None and inputs.user_id:
        taught_elsewhere = inputs.taught_elsewhere
        boost = _timed(stats, "memory", lambda: booster.boost(inputs.user_id or "", cands, exclude=taught_elsewhere))
        stats.memory = asdict(boost)
        score_candidates(cands, weights)

    if language_model is not None:
        reading = _timed(
            stats,
            "language_model",
            lambda: read_in_context(
                cands,
                by_id,
                language_model,
                inputs.language,
                left_words=settings.reliability_language_model_left_words,
                right_words=settings.reliability_language_model_right_words,
                read_from=settings.reliability_read_from,
            ),
        )
        stats.language_model = asdict(reading)
        score_candidates(cands, weights)

    if llm is not None:
        low, high = settings.reliability_llm_uncertain_low, settings.reliability_llm_uncertain_high
        # context-free spans have no similarity signal: the LLM alone can make them suggestions
        uncertain = [c for c in cands if c.source == CandidateSource.CONTEXT_FREE or is_uncertain(c, low, high)]
        llm_stats = _timed(
            stats,
            "llm",
            lambda: run_llm_stage(
                uncertain,
                llm=llm,
                mode=inputs.dictionary.mode,
                dictionary=inputs.dictionary,
                texts={s.id: s.text for s in inputs.segments},
                batch_size=settings.llm_batch_size,
                list_cap=settings.llm_prompt_list_cap,
            ),
        )
        stats.llm = asdict(llm_stats)
        score_candidates(cands, weights)

    cands = [c for c in cands if not refusal_stands(c)]
    stats.refused_by_user -= sum(c.refused > 0 for c in cands)  # what its sentence brought back
    cands = resolve_overlaps(cands)  # a reading held beside a taught fix or a part: now both are read, one keeps it
    kept = [c for c in cands if c.disposition is not Disposition.DROPPED and changes_text(c.original, c.final)]
    texts = {s.id: s.text for s in inputs.segments}
    if settings.reliability_edge_forms:
        fixes = edge_form_fixes(kept, texts, inputs.refused, inputs.remembered)
        if fixes:  # in the order resolve_overlaps leaves the rest
            kept = sorted(kept + fixes, key=lambda c: (c.segment_id, c.start_char))
    values = [v for vs in inputs.dictionary.lists.values() for v in vs]
    kept = written_once(made_whole(merged_pieces(kept, texts, values), texts, values), texts)
    stats.suggestions = len(kept)
    stats.auto_applied = sum(c.disposition is Disposition.AUTO_APPLIED for c in kept)
    stats.pending = stats.suggestions - stats.auto_applied
    return kept, stats


# A two-line call that reaches every table the stages read: word pairs, frequency lists, the scorer's trees.
_WARM_SEGMENTS = [Segment("1", "Reiner Blair spoke about Cytova."), Segment("2", "Nothing else.")]
_WARM_LISTS = {"orgs": ["Cytiva"], "persons": ["Rainer Blair"]}
# Allocations between two collections of the young generation (CPython's default is 700): the stages make
# hundreds of thousands of short-lived lists and tuples a call, and collecting that often costs a large share of
# their CPU time (docs/benchmarks/speed.md).
GC_YOUNG_ALLOCATIONS = 20_000


def _scored(
    inputs: PipelineInputs, settings: Settings, stats: RunStats, weights: Scorer, *, with_llm: bool, reads: bool
) -> list[Candidate]:
    """Spot, gate, signals and a first score; the best reading of each span (the boost and the LLM see one a span),
    and where the language model `reads`, the bigger readings of a name beside the part that took their words."""
    cands = candidate_signals(inputs, settings, stats, with_llm=with_llm, scorer=weights)
    _timed(stats, "score", lambda: score_candidates(cands, weights))
    worth = [c for c in cands if _worth_keeping(c) and not c.refused]

    def to_read(c: Candidate) -> bool:
        return needs_reading(c, inputs.language, settings.reliability_read_from)

    hold = to_read if reads else None
    best: list[Candidate] = _timed(
        stats, "overlaps", lambda: resolve_overlaps(worth, hold_wider=True, hold_bigger=hold)
    )
    # a refused pair waits for its sentence beside the span's best reading, not in its place (refusal_stands)
    return best + [c for c in cands if c.refused and _worth_keeping(c)]


def would_read(inputs: PipelineInputs, settings: Settings) -> bool:
    """Whether the stages would ask the language model to read a window of these inputs (before any memory boost):
    a run may start loading the model while it does other work, and never load it for inputs that read none."""
    if not inputs.language.startswith("en"):
        return False
    stats = RunStats(mode=inputs.dictionary.mode.value)
    cands = _scored(inputs, settings, stats, Scorer.from_settings(settings), with_llm=False, reads=True)
    return any(needs_reading(c, inputs.language, settings.reliability_read_from) for c in cands)


def warm_stages(settings: Settings) -> None:
    """Load what the stages read, then freeze the heap: a process's start, not its first call, pays for it.

    The tables are millions of long-lived objects; once frozen, the collector no longer walks them at every
    full collection (on the 9,000-word call of bench/measure/speed.py spotting went from 203 to 154 ms); and it runs
    less often (GC_YOUNG_ALLOCATIONS).
    """
    keep_counts_in(settings.namesake_cache_dir)
    keep_dictionary_in(settings.namesake_cache_dir)
    run_stages(PipelineInputs(_WARM_SEGMENTS, CanonicalDictionary(dict(_WARM_LISTS))), settings)
    gc.freeze()
    gc.set_threshold(GC_YOUNG_ALLOCATIONS, *gc.get_threshold()[1:])
