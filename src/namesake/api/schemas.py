"""Request and response bodies of the HTTP API (analyze reuses the CLI's transcript model)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, StringConstraints

from namesake.corrections_memory import CorrectionState
from namesake.domain import CorrectionStatus, EntityType, Identifier, MemoryScope, ReviewAction, Suggestion
from namesake.review import ReviewState

Text = Annotated[str, StringConstraints(min_length=1)]


class CanonicalEntitiesIn(BaseModel):
    """The five canonical lists of a transcript; unknown lists are refused."""

    model_config = ConfigDict(extra="forbid")
    user_id: Identifier | None = None
    persons: list[str] = Field(default_factory=list)
    orgs: list[str] = Field(default_factory=list)
    places: list[str] = Field(default_factory=list)
    acronyms: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)

    def lists(self) -> dict[str, list[str]]:
        """The lists alone."""
        return self.model_dump(exclude={"user_id"})


class IndexedOut(BaseModel):
    """What PUT canonical-entities wrote."""

    transcript_id: str
    chunks: int
    values: int


class DecisionIn(BaseModel):
    """Accept / reject body: the transcript the suggestion belongs to (scope comes from the request)."""

    model_config = ConfigDict(extra="forbid")
    transcript_id: Identifier
    scope: MemoryScope | None = Field(
        default=None,
        description="accept / edit: where the lesson applies next — transcript (this one only), list (calls "
        "whose list holds the final) or user (all of the user's calls); by default list when the words heard are "
        "everyday words, else user",
    )


class EditIn(DecisionIn):
    """Edit body: the reviewer's final, and the entity type when it changes."""

    final: Text
    entity_type: EntityType | None = None


# One suggestion schema from the store to the answer: the domain's own type (status and source as enums).
SuggestionOut = Suggestion


class ReviewOut(BaseModel):
    """A decision's result: the suggestion now, and what the corrections memory did."""

    suggestion: SuggestionOut
    memory: str | None
    scope: MemoryScope | None = Field(default=None, description="where the lesson applies next (None: nothing taught)")
    also: list[SuggestionOut] = Field(default_factory=list, description="a fix by hand: the other places it fixed")


class GroupDecisionIn(BaseModel):
    """One decision for several suggestions of a transcript: every occurrence of one original → final pair."""

    model_config = ConfigDict(extra="forbid")
    action: Literal[ReviewAction.ACCEPT, ReviewAction.EDIT, ReviewAction.REJECT]
    suggestion_ids: list[str] = Field(min_length=1)
    final: Text | None = Field(default=None, description="edit only: the final written for all of them")
    entity_type: EntityType | None = Field(default=None, description="edit only: when the type changes too")
    scope: MemoryScope | None = Field(
        default=None,
        description="accept / edit: where the lesson applies next — transcript (this one only), list (calls "
        "whose list holds the final) or user (all of the user's calls); by default list when the words heard are "
        "everyday words, else user",
    )


class PairIn(BaseModel):
    """One change as the page shows it: the words heard and the words written."""

    model_config = ConfigDict(extra="forbid")
    original: Text = Field(max_length=1000)
    final: Text = Field(max_length=1000)


class ReachIn(BaseModel):
    """The changes a decision is about to take, in the transcript it is taken in."""

    model_config = ConfigDict(extra="forbid")
    transcript_id: Identifier
    pairs: list[PairIn] = Field(min_length=1, max_length=1000)


class PairReachOut(BaseModel):
    """Where one change stands undecided: what deciding it touches now, and what it teaches touches later."""

    original: str
    final: str
    here: int = Field(description="open places of the change in this transcript")
    elsewhere: int = Field(
        description="open places in the user's other transcripts (they follow the lesson or "
        "the refusal when analysed again)"
    )
    other_calls: int = Field(description="how many other transcripts those places are in")


class ReachOut(BaseModel):
    """What a decision on the pairs reaches, read before it is taken."""

    pairs: list[PairReachOut]
    other_calls: int = Field(description="the user's other transcripts that any of the pairs stands in")


class ReopenIn(BaseModel):
    """Undo: the decided suggestions to put back as the pipeline left them."""

    model_config = ConfigDict(extra="forbid")
    suggestion_ids: list[str] = Field(min_length=1)


class GroupOut(BaseModel):
    """A group decision's result: every suggestion now, and what the one memory write did."""

    suggestions: list[SuggestionOut]
    memory: str | None
    scope: MemoryScope | None = Field(default=None, description="where the lesson applies next (None: nothing taught)")


class HistoryOut(BaseModel):
    """One decision as the reviewer took it: undone as one (`undone_at` once taken back)."""

    id: str
    action: ReviewAction
    label: str = Field(description="what was decided, as the page lists it: “Cytova → Cytiva (3×)”")
    suggestion_ids: list[str]
    scope: MemoryScope | None
    created_at: str
    undone_at: str | None


class ProgressOut(BaseModel):
    """How far review has gone: transcripts with suggestions, and those with nothing left to decide."""

    transcripts: int
    reviewed: int
    to_review: int


class ScopeOut(BaseModel):
    """Where a fix would apply next if the reviewer does not say, and why."""

    scope: MemoryScope
    everyday: bool = Field(description="the words heard are everyday words: the default is narrow")


class ReopenOut(BaseModel):
    """An undo's result: the suggestions back as proposed, manual fixes removed, the memory writes taken back."""

    suggestions: list[SuggestionOut]
    removed: list[str] = Field(description="manual fixes undone: nothing was proposed there, so they are gone")
    memory: list[str] = Field(description="per memory write taken back: reduced | untaught | restored")


class CorrectedSegment(BaseModel):
    """A segment as a reader gets it once the auto-applied suggestions are applied."""

    id: str
    text: str


class AnalysisOut(BaseModel):
    """Same shape as a line of `namesake analyze`."""

    transcript_id: str
    mode: str
    seconds: float
    suggestions: list[SuggestionOut]
    corrected_segments: list[CorrectedSegment] = Field(
        description="every segment with its auto-applied suggestions written in (suggestion offsets are the input's)"
    )
    stats: dict[str, Any]


class EngineAnalysisOut(AnalysisOut):
    """The analysis of an engine's JSON; with `apply`, the engine's document with the fixes written in."""

    applied: dict[str, Any] | None = Field(
        default=None, description="the engine's JSON as sent, applied fixes written in, times and words kept"
    )


class TranscriptCounts(BaseModel):
    """A queued transcript's suggestions: still to decide, applied without review, and all of them."""

    pending: int
    auto_applied: int
    total: int
    to_decide: int = Field(
        description="pending and not folded (confidence ≥ REVIEW_FOLD_BELOW): what is left to review"
    )


class TranscriptSummaryOut(BaseModel):
    """One transcript of the review queue."""

    transcript_id: str
    user_id: str
    analyzed_at: str
    counts: TranscriptCounts


class SegmentOut(BaseModel):
    """A segment as analysed (its text before any suggestion is written in)."""

    model_config = ConfigDict(extra="allow")
    id: str
    text: str


class CompletionOut(BaseModel):
    """A half fix made whole: the wider span of its segment and the whole list value it would become."""

    start_char: int
    end_char: int
    original: str
    final: str


class TranscriptOut(BaseModel):
    """A transcript as the reviewer reads it: its segments as analysed and every suggestion on them."""

    transcript_id: str
    user_id: str
    language: str | None
    analyzed_at: str | None
    segments: list[SegmentOut]
    suggestions: list[SuggestionOut]
    completions: dict[str, CompletionOut] = Field(
        default_factory=dict,
        description="by suggestion id: a suggestion that writes part of a list value whose rest is heard beside it,"
        " and the whole fix (POST /v1/suggestions/{id}/complete)",
    )


class ReviewedSegmentOut(BaseModel):
    """A segment with what stands written in; its times (seconds) and speaker when the ASR gave them."""

    id: str
    text: str
    start: float | None = None
    end: float | None = None
    speaker: str | None = None


class ReviewedOut(BaseModel):
    """The reviewed transcript: every applied, accepted, edited and hand-made fix written in, and what is open."""

    transcript_id: str
    state: ReviewState = Field(description="done when no suggestion is pending, else in_review")
    applied: int = Field(description="fixes written in: applied by the pipeline or decided by the reviewer")
    open: int = Field(description="suggestions still pending: not written in")
    segments: list[ReviewedSegmentOut]


class TranscriptDeletionOut(BaseModel):
    """What deleting a transcript removed: its row, its suggestions and its canonical-entity collections."""

    transcript_id: str
    deleted: dict[str, int]


class JobRunOut(BaseModel):
    """A maintenance job run now: its name, the run's id and what it counted."""

    job: str
    run_id: int | None
    counts: dict[str, Any]


class ConflictOut(BaseModel):
    """The other side of a conflict: the final taught before for the same words, where and when."""

    final: str
    transcript_id: str | None
    taught_at: str


class CorrectionOut(BaseModel):
    """A remembered correction as the user sees it: numbered per user, with where it stands."""

    id: int
    entity_type: str
    original: str
    also_heard: list[str] = Field(
        default_factory=list, description="other words the same fix was taught over (a semantic twin): they apply too"
    )
    final: str
    action: ReviewAction
    context_phrase: str
    frequency: int
    status: CorrectionStatus
    promoted_to_canonical: bool
    quarantine_until: str
    state: CorrectionState
    applies_until: str | None
    one_off: bool = Field(False, description="a paste, a sentence or an address the words do not say: not elsewhere")
    supersedes_id: int | None
    conflict_with: ConflictOut | None = Field(
        None, description="state conflict: the other final taught for the same words and place, and where"
    )
    transcript_id: str | None
    scope: MemoryScope = Field(
        description="where it applies next: the transcript it was taught in (transcript), "
        "calls whose list holds its final (list), or all of the user's calls (user)"
    )
    created_at: str
    updated_at: str


class RefusalOut(BaseModel):
    """A pair the user refused: never proposed to them again until taken back."""

    original: str
    final: str
    times: int
    last_refused_at: str


class ErasureOut(BaseModel):
    """The erasure receipt: what was deleted in each store, and what remains (zero on success)."""

    user_id: str
    deleted: dict[str, Any]
    remaining: dict[str, int]


class VocabularyOut(RootModel[dict[str, Any]]):
    """The user's vocabulary in the request shape of the engine asked for (docs/api.md has one example of each)."""


class HealthOut(BaseModel):
    """Liveness: the process answers."""

    status: str


class ReadyOut(BaseModel):
    """Readiness: which store answered ("ok") and which did not ("failed"); reasons stay in the log."""

    status: str
    checks: dict[str, str]


class ErrorDetail(BaseModel):
    """What went wrong: a stable code, a message for people, and the field at fault when there is one."""

    code: str
    message: str
    field: str | None


class ErrorOut(BaseModel):
    """Every error body (namesake.api.errors.error_body)."""

    error: ErrorDetail


ERROR_MEANINGS = {
    401: "no bearer key",
    403: "the key is not allowed (or a tenant key on an admin route)",
    404: "not found (another tenant's is not found either)",
    409: "conflicts with what is stored (another user's transcript, an impossible transition, a job running)",
    410: "the user was erased (USER_ERASED): nothing was written",
    413: "the body or one of its parts is over a limit",
    415: "the body is not JSON: send JSON with Content-Type: application/json",
    422: "invalid input; `field` names it",
    503: "a store is unavailable, BUSY (Retry-After: too many analyses in progress) or WORKER (the process "
    "analysing it ended; retry): nothing was changed",
}


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI `responses` entries of these error statuses, all with the error envelope."""
    return {code: {"model": ErrorOut, "description": ERROR_MEANINGS[code]} for code in codes}
