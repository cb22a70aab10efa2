"""The analysis service: the one orchestrator that feeds the pure stages from the stores and saves what they keep."""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

from namesake.analysis.inputs import CheckedTranscript, TranscriptIn, check_cost, check_limits, to_segments
from namesake.analysis.pool import StagePool
from namesake.analysis.ports import AnalysisStores
from namesake.analysis.stage_process import StageProcess
from namesake.core import (
    DEFAULT_USER,
    CancelledWork,
    ConflictError,
    GoneError,
    InputTooLargeError,
    InvalidInputError,
    NamesakeError,
    NotFoundError,
    Settings,
    Turns,
    WorkerError,
    check_cancelled,
    context_around,
)
from namesake.corrections_memory import listed_values, split_by_scope
from namesake.domain import Candidate, Suggestion, SuggestionStatus
from namesake.reliability import (
    LanguageModel,
    LLMProvider,
    MemoryBooster,
    PipelineInputs,
    RunStats,
    corrected_segments,
    from_memory,
    run_stages,
    suggestion_counts,
    validate_entities,
    warm_stages,
)

log = logging.getLogger(__name__)


@dataclass
class PreparedAnalysis:
    """A transcript checked, registered and read from the stores: what the stages need, and the I/O time so far."""

    transcript_id: str
    inputs: PipelineInputs
    seconds: float
    segments: list[dict[str, Any]] = field(default_factory=list)  # as kept: text, times and speaker when known
    created: bool = False  # registered by this analysis: a stopped one takes it away again


# Transcripts prepared in order, each with its stages running in a worker (or None: run here, needs the ports).
_Pending = deque[tuple["PreparedAnalysis | AnalysisFailure", Future[tuple[list[Candidate], RunStats]] | None]]
# What fails one transcript of a batch, not the batch: its input, its owner, a limit (the stores failing stops it).
TRANSCRIPT_ERRORS = (InvalidInputError, InputTooLargeError, ConflictError, GoneError, NotFoundError)


@dataclass(frozen=True)
class AnalysisFailure:
    """One transcript of a batch that could not be analysed, and why; the others go on."""

    transcript_id: str
    error: NamesakeError


@dataclass
class AnalysisResult:
    """One analysed transcript, in the predictions format of the benchmark and the API."""

    transcript_id: str
    mode: str
    seconds: float
    suggestions: list[Suggestion]
    stats: dict[str, Any]
    corrected_segments: list[dict[str, str]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        """The output line of `namesake analyze` and the body of POST /v1/reliability/analyze."""
        return {
            "transcript_id": self.transcript_id,
            "mode": self.mode,
            "seconds": round(self.seconds, 4),
            "suggestions": [s.as_json() for s in self.suggestions],
            "corrected_segments": self.corrected_segments,
            "stats": self.stats,
        }


class AnalysisService:
    """Runs the pipeline for one transcript against its stores (the `AnalysisStores` port); what the transcript routes
    and `namesake analyze` call."""

    def __init__(
        self,
        settings: Settings,
        stores: AnalysisStores,
        booster: MemoryBooster | None = None,
        llm: LLMProvider | None = None,
        language_model: Callable[[], LanguageModel | None] = lambda: None,
        turns: Turns | None = None,
        stages: StageProcess | None = None,
    ) -> None:
        self.settings = settings
        self.stores = stores
        self.booster = booster  # the memory's vector read, for the stages' boost
        self.llm = llm
        self.language_model = language_model  # asked once per run: loaded only if the run reads a window
        self.turns = turns or Turns(0)  # the server's bound on analyses running at once (none here by default)
        self.stages = stages  # the server's child process for the stages (None: run in this process)

    def index_entities(self, transcript_id: str, user_id: str | None, entities: dict[str, list[str]]) -> int:
        """Validate, register the transcript for its user and (re)index its canonical entities in one unit."""
        s = self.settings
        clean = validate_entities(
            entities, max_items=s.max_canonical_entities, max_chars=s.max_canonical_entry_chars, prefix=""
        )
        return self.stores.index(transcript_id, user_id or DEFAULT_USER, clean)

    def prepare(self, given: TranscriptIn | CheckedTranscript, *, user_id: str | None = None) -> PreparedAnalysis:
        """Register the transcript, index given entities, read the user's memory: the stages' input."""
        t0 = time.perf_counter()
        checked = given if isinstance(given, CheckedTranscript) else check_limits(given, self.settings)
        transcript = checked.transcript
        user = user_id or transcript.user_id or DEFAULT_USER
        stored = self.stores.read(
            transcript.transcript_id, user, transcript.language, checked.entities,
            # a list stored before, with the promoted vocabulary: over the budget, nothing is kept
            lambda dictionary: check_cost(transcript, dictionary.lists, self.settings),
        )  # fmt: skip
        remembered, elsewhere = split_by_scope(
            stored.remembered, transcript.transcript_id, listed_values(stored.dictionary)
        )
        inputs = PipelineInputs(
            segments=to_segments(transcript),
            dictionary=stored.dictionary,
            language=transcript.language,
            user_id=user,
            remembered=remembered,
            refused=stored.refused,
            refused_around=stored.refused_around,
            refused_read=stored.refused_read,
            taught_elsewhere=elsewhere,
        )
        kept_segments = [seg.stored() for seg in transcript.segments]
        return PreparedAnalysis(
            transcript.transcript_id, inputs, time.perf_counter() - t0, kept_segments, stored.created
        )

    def needs_ports(self, prepared: PreparedAnalysis) -> bool:
        """Whether the stages need this process's stores (memory boost) or LLM, or are pure and may run anywhere."""
        # PostgreSQL is the truth: a user without active corrections has nothing in the index to boost with
        return bool(prepared.inputs.remembered and self.booster) or self.llm is not None

    def compute(self, prepared: PreparedAnalysis) -> tuple[list[Candidate], RunStats]:
        """Run the stages with this process's ports: in the stage process when there is one (a remote LLM is read
        from here), else in this one."""
        booster = self.booster if prepared.inputs.remembered else None
        with self.turns.turn():
            if self.stages is not None and self.llm is None:
                return self.stages.run(prepared.inputs, booster)
            return run_stages(
                prepared.inputs,
                self.settings,
                booster=booster,
                llm=self.llm,
                language_model=self.language_model(),
            )

    def finish(self, prepared: PreparedAnalysis, kept: list[Candidate], stats: RunStats) -> AnalysisResult:
        """Persist what the stages kept; returns the suggestions as stored."""
        t0 = time.perf_counter()
        radius = self.settings.reliability_corrections_memory_context_radius
        texts = {s.id: s.text for s in prepared.inputs.segments}
        contexts = [context_around(texts[c.segment_id], c.start_char, c.end_char, radius) for c in kept]
        out = self.stores.save(prepared.transcript_id, kept, contexts, prepared.segments, prepared.inputs.user_id)
        self._renew_applied(prepared.inputs.user_id, out)
        io_seconds = prepared.seconds + time.perf_counter() - t0
        stats.stage_seconds["fetch"] = round(io_seconds, 4)
        stats_json = stats.as_dict()
        stats_json["malformed_canonical_payloads"] = prepared.inputs.dictionary.malformed
        stats_json.update(suggestion_counts(out))  # what the answer lists: this run's and what stands decided
        seconds = io_seconds + sum(v for k, v in stats.stage_seconds.items() if k != "fetch")
        corrected = corrected_segments(prepared.inputs.segments, out)
        return AnalysisResult(prepared.transcript_id, stats.mode, seconds, out, stats_json, corrected)

    def _renew_applied(self, user_id: str | None, out: list[Suggestion]) -> None:
        """A taught fix applied by itself in this run keeps applying: its quarantine starts again, as if taught."""
        applied = [(s.original, s.final) for s in out if s.status == SuggestionStatus.AUTO_APPLIED and from_memory(s)]
        if not user_id or not applied:
            return
        try:
            self.stores.renew(user_id, applied)
        except NamesakeError as exc:  # the analysis stands; the fix renews the next time it is applied
            log.warning("could not renew the memory's applied fixes: %s", exc.message)

    def analyze(self, transcript: TranscriptIn | CheckedTranscript, *, user_id: str | None = None) -> AnalysisResult:
        """Validate fully, index given entities, run the stages, persist; returns the suggestions made."""
        prepared = self.prepare(transcript, user_id=user_id)
        try:
            kept, stats = self.compute(prepared)
            check_cancelled()  # the last moment a client that left stops it: nothing is saved
        except (CancelledWork, WorkerError):
            if prepared.created:  # as if it had never been sent: the transcript and the list it brought go
                self.stores.discard(prepared.transcript_id)
            raise
        return self.finish(prepared, kept, stats)

    def analyze_many(
        self,
        transcripts: Iterable[TranscriptIn | CheckedTranscript],
        *,
        user_id: str | None = None,
        workers: int = 1,
        pool: StagePool | None = None,
    ) -> Iterator[AnalysisResult | AnalysisFailure]:
        """Analyse in order; with a pool (or workers > 1) the pure stages run in worker processes while this one does
        I/O. A transcript that fails on its own (its input, its owner, a limit) is an AnalysisFailure in its
        place and the others go on; the stores failing stops the batch."""
        if pool is None and workers > 1:
            with StagePool(self.settings, workers) as own:
                yield from self.analyze_many(transcripts, user_id=user_id, pool=own)
            return
        if pool is None:
            warm_stages(self.settings)
            for t in transcripts:
                try:
                    yield self.analyze(t, user_id=user_id)
                except TRANSCRIPT_ERRORS as exc:
                    yield AnalysisFailure(_id_of(t), exc)
            return
        pending: _Pending = deque()
        for t in transcripts:
            try:
                prepared = self.prepare(t, user_id=user_id)
            except TRANSCRIPT_ERRORS as exc:
                pending.append((AnalysisFailure(_id_of(t), exc), None))
            else:
                pending.append((prepared, None if self.needs_ports(prepared) else pool.submit(prepared.inputs)))
            while len(pending) > 2 * pool.workers or (pending and pending[0][1] is None):
                yield self._finish_next(pending)
        while pending:
            yield self._finish_next(pending)

    def _finish_next(self, pending: _Pending) -> AnalysisResult | AnalysisFailure:
        prepared, job = pending.popleft()
        if isinstance(prepared, AnalysisFailure):
            return prepared
        try:
            kept, stats = self.compute(prepared) if job is None else job.result()
        except BrokenProcessPool as exc:
            raise WorkerError(f"a worker process died while analysing {prepared.transcript_id!r}: {exc}") from exc
        try:
            return self.finish(prepared, kept, stats)
        except TRANSCRIPT_ERRORS as exc:
            return AnalysisFailure(prepared.transcript_id, exc)


def _id_of(t: TranscriptIn | CheckedTranscript) -> str:
    """The id a batch's output names a transcript by."""
    return (t.transcript if isinstance(t, CheckedTranscript) else t).transcript_id
