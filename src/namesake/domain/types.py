"""Plain values passed between pipeline stages."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from namesake.core import compact, normalise

# Payload list name in the canonical-entities collection → entity type of a suggestion.
LIST_TYPES: dict[str, str] = {
    "persons": "PERSON",
    "orgs": "ORG",
    "places": "LOCATION",
    "acronyms": "ACRONYM",
    "keywords": "KEYWORD",
}


# Shorter parts of a full name ("Li", "Jo") match too much ordinary text to stand alone.
PERSON_PART_MIN_LEN = 4

# How "&" is said: an ASR writes "M&A" as "M and A" (English) or "R et D" (French).
AMPERSAND_SPOKEN = (" and ", " et ")
# How the dots of a web address are said: "YETI.com" is written "yeti dot com" (English), "point" in French.
DOT_SPOKEN = (" dot ", " point ")
# A web address: dotted parts ending in a top-level domain of two letters or more ("YETI.com", "www.sec.gov",
# "argos.co/ir"); not an abbreviation ("U.S", "J.P", "D.C") nor a version ("2.0").
WEB_ADDRESS = re.compile(r"[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}(?:/\S*)?")


# How a number of one or two digits inside a name is said: "Q4" as "Q four", "COVID-19" as "COVID nineteen".
ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
        "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]  # fmt: skip
TENS = {2: "twenty", 3: "thirty", 4: "forty", 5: "fifty", 6: "sixty", 7: "seventy", 8: "eighty", 9: "ninety"}
SAID_NUMBER = re.compile(r"(?<!\d)\d{1,2}(?!\d)")


def number_said(digits: str) -> str:
    """0–99 in English words ("4" → "four", "19" → "nineteen", "21" → "twenty one")."""
    n = int(digits)
    if n < len(ONES):
        return ONES[n]
    return TENS[n // 10] + ("" if n % 10 == 0 else " " + ONES[n % 10])


def spoken_forms(value: str) -> list[str]:
    """How a written value is said where the words differ: "M&A" as "M and A", "YETI.com" as "YETI dot com", "Q4" as
    "Q four" (numbers of one or two digits; longer ones are said too many ways)."""
    said = [" ".join(value.replace("&", a).split()) for a in AMPERSAND_SPOKEN] if "&" in value else []
    if SAID_NUMBER.search(value) and not re.search(r"\d{3}|\d[.,:]\d", value):  # not years, versions, times
        words = SAID_NUMBER.sub(lambda m: f" {number_said(m.group())} ", value.replace("-", " "))
        said.append(" ".join(words.split()))
    address = value.strip(".")  # a list may write ".revgroup.com"
    if WEB_ADDRESS.fullmatch(address):
        said += [" ".join(address.replace(".", d).split()) for d in DOT_SPOKEN]
    return said


def web_address_suffix(value: str) -> frozenset[str]:
    """The words of a web address that name nothing ("dot", "com", "www"): empty for a value that is not one."""
    address = value.strip(".").split("/")[0]
    if not WEB_ADDRESS.fullmatch(address):
        return frozenset()
    return frozenset({*(d.strip() for d in DOT_SPOKEN), "dotcom", "www", address.rsplit(".", 1)[-1].casefold()})


# The entity types a suggestion or a correction carries, stored in this form; the spec writes them in
# lower case ("person", "org", "location", "acronym", "date", "typo"): any case is accepted at the edge.
ENTITY_TYPES = ("PERSON", "ORG", "LOCATION", "ACRONYM", "KEYWORD", "DATE", "TYPO")


# What an error says an entity type may be.
ENTITY_TYPES_SAID = f"entity_type must be one of {', '.join(t.lower() for t in ENTITY_TYPES)} (any case)"


def entity_type_of(value: str) -> str | None:
    """The stored form of an entity type written in any case ("person" → PERSON), or None if it is none."""
    stored = value.strip().upper()
    return stored if stored in ENTITY_TYPES else None


class Mode(StrEnum):
    """RAG_ENHANCED when the transcript has canonical entities, else CONTEXT_FREE."""

    RAG_ENHANCED = "RAG_ENHANCED"
    CONTEXT_FREE = "CONTEXT_FREE"


class SuggestionStatus(StrEnum):
    """Where a stored suggestion stands: one of the pipeline's two decisions, then the reviewer's."""

    AUTO_APPLIED = "auto_applied"
    PENDING = "pending"
    VALIDATED = "validated"
    REJECTED = "rejected"

    @classmethod
    def undecided(cls) -> tuple[SuggestionStatus, ...]:
        """What a re-analysis may refresh and a reviewer may still decide."""
        return (cls.AUTO_APPLIED, cls.PENDING)


class ReviewAction(StrEnum):
    """What a reviewer did: a decision on a suggestion (accept, edit, reject), or a fix by hand (manual)."""

    ACCEPT = "accept"
    EDIT = "edit"
    REJECT = "reject"
    MANUAL = "manual"


class MemoryScope(StrEnum):
    """Where a taught fix applies next: the transcript it was taught in, calls whose list holds its final, or all of
    its user's calls."""

    TRANSCRIPT = "transcript"
    LIST = "list"
    USER = "user"


class CandidateSource(StrEnum):
    """Where a candidate came from: the transcript's lists, the user's memory, letters said one by one that no list
    holds (only the LLM can judge them), or a reviewer's fix by hand."""

    LISTS = "rag"
    MEMORY = "memory"
    CONTEXT_FREE = "context_free"
    MANUAL = "manual"


class CorrectionStatus(StrEnum):
    """A remembered correction: active, or superseded by another final the user taught for the same original."""

    ACTIVE = "active"
    SUPERSEDED = "superseded"


class Disposition(StrEnum):
    """What the pipeline does with a scored candidate: apply it, queue it for review, or drop it."""

    AUTO_APPLIED = SuggestionStatus.AUTO_APPLIED.value  # the two a suggestion is stored with
    PENDING = SuggestionStatus.PENDING.value
    DROPPED = "dropped"


# How strong a disposition is: overlapping readings keep the strongest.
DISPOSITION_RANK = {Disposition.AUTO_APPLIED: 2, Disposition.PENDING: 1, Disposition.DROPPED: 0}


@dataclass
class Rewrite:
    """A rewrite of a span of one segment: where it sits and what it writes, as a candidate and a suggestion hold it."""

    segment_id: str
    start_char: int
    end_char: int
    original: str
    final: str
    entity_type: str

    @property
    def span(self) -> tuple[str, int, int]:
        """Where the rewrite sits: (segment, start, end)."""
        return (self.segment_id, self.start_char, self.end_char)


@dataclass
class Suggestion(Rewrite):
    """A suggestion as stored and answered: from the pipeline's save to the routes and the page."""

    id: str
    confidence: float
    status: SuggestionStatus
    source: CandidateSource
    signals: dict[str, float]

    def as_json(self) -> dict[str, Any]:
        """The JSON object of the API, the CLI's output lines and the review page."""
        return {
            "id": self.id, "segment_id": self.segment_id, "start_char": self.start_char, "end_char": self.end_char,
            "original": self.original, "final": self.final, "entity_type": self.entity_type,
            "confidence": self.confidence, "status": self.status.value, "source": str(self.source),
            "signals": self.signals,
        }  # fmt: skip


@dataclass(frozen=True)
class Word:
    """An ASR word with its confidence, when the transcript carries them."""

    text: str
    confidence: float
    start_char: int | None = None
    end_char: int | None = None


@dataclass(frozen=True)
class Segment:
    """One segment of a transcript."""

    id: str
    text: str
    words: tuple[Word, ...] = ()


@dataclass(frozen=True)
class CanonicalEntry:
    """A canonical value with its type and its frequency rank (0 = most frequent in its list).

    `spoken` is another way the value is said ("M and A" for "M&A"): matched like the value,
    but never a canonical spelling itself, so the gate does not let it through.
    """

    value: str
    entity_type: str
    rank: int
    spoken: str = ""
    # Normalised form matched against the transcript (words kept apart), and its compact form:
    # what windows are matched against and, for a written value, what the gate compares.
    norm: str = field(init=False, repr=False, compare=False)
    key: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Derive the matching forms once: spotting reads them for every window of the transcript."""
        object.__setattr__(self, "norm", normalise(self.spoken or self.value))
        object.__setattr__(self, "key", self.norm.replace(" ", ""))


@dataclass
class CanonicalDictionary:
    """The transcript's canonical entities, by list, most frequent first."""

    lists: dict[str, list[str]] = field(default_factory=dict)
    malformed: int = 0

    @property
    def mode(self) -> Mode:
        """RAG_ENHANCED when any list has an entry."""
        return Mode.RAG_ENHANCED if any(self.lists.values()) else Mode.CONTEXT_FREE

    def entries(self) -> list[CanonicalEntry]:
        """Every entry once per (type, compact value), first (most frequent) spelling kept.

        People are often named by first or last name alone, so each word (of 4+ letters) of a
        person's full name is an entry too, after the full names. A value with "&" also gets
        its spoken forms ("M and A" → M&A), and so does a web address ("yeti dot com" → YETI.com).
        """
        seen: set[tuple[str, str]] = set()
        out: list[CanonicalEntry] = []

        def add(value: str, entity_type: str, rank: int, spoken: str = "") -> None:
            entry = CanonicalEntry(value, entity_type, rank, spoken)
            if entry.key and (entity_type, entry.key) not in seen:
                seen.add((entity_type, entry.key))
                out.append(entry)

        for list_name, values in self.lists.items():
            for rank, value in enumerate(values):
                add(value, LIST_TYPES.get(list_name, "KEYWORD"), rank)
        for list_name, values in self.lists.items():
            for rank, value in enumerate(values):
                for spoken in spoken_forms(value):
                    add(value, LIST_TYPES.get(list_name, "KEYWORD"), rank, spoken)
        for rank, value in enumerate(self.lists.get("persons", [])):
            for word in value.split():
                if len(compact(word)) >= PERSON_PART_MIN_LEN:
                    add(word, "PERSON", rank)
        return out


@dataclass(frozen=True)
class RememberedCorrection:
    """A correction the user made before: exact original → final (learned find-and-replace)."""

    original: str
    final: str
    entity_type: str
    context: str = ""  # the words around the span where the user taught it
    frequency: int = 1  # how many times the user made it
    action: ReviewAction = ReviewAction.ACCEPT  # how it was first taught: accept, edit (its final changed), manual
    age_days: float = 0.0  # days since it was first taught
    scope: MemoryScope = MemoryScope.USER  # where it applies next (corrections_memory/scope.py)
    transcript_id: str | None = None  # the transcript it was last taught in
    conflict: bool = False  # the same words were taught another final for the same place: neither applies by itself
    left_alone: int | None = None  # times heard in the call it was taught in and kept as said (None: not known)


@dataclass(frozen=True)
class TaughtMatch:
    """How a candidate spotted from the user's memory matches what they taught: the memory policy's inputs."""

    similarity: float  # 1.0: the very original they corrected; less: a near spelling of it
    frequency: float  # how many times they taught it
    everyday: float  # Zipf frequency of the span's commonest word (numbers count as everyday)
    context: float | None = None  # share of neighbouring words also around where it was taught (None: no context)
    one_off: bool = False  # the taught final is a paste, a sentence, or an address its words do not say
    action: ReviewAction = ReviewAction.ACCEPT  # how it was first taught (RememberedCorrection.action)
    age_days: float = 0.0  # days since it was first taught
    conflict: bool = False  # another final was taught for the same words and place (RememberedCorrection.conflict)
    left_alone: int | None = None  # times kept as said where it was taught (RememberedCorrection.left_alone)

    def audit(self) -> dict[str, float]:
        """Stored with the suggestion under the names the page reads ("remembered", …)."""
        out = {"remembered": self.similarity, "remembered_frequency": self.frequency,
               "remembered_everyday": self.everyday}  # fmt: skip
        if self.context is not None:
            out["remembered_context"] = self.context
        if self.one_off:
            out["remembered_one_off"] = 1.0
        if self.action != ReviewAction.ACCEPT:  # taught by hand or by editing a suggestion: the pipeline had it wrong
            out[f"remembered_{self.action}"] = 1.0
        if self.age_days:
            out["remembered_age_days"] = round(self.age_days, 2)
        if self.conflict:
            out["remembered_conflict"] = 1.0
        if self.left_alone is not None:
            out["remembered_left_alone"] = float(self.left_alone)
        return out


# Candidate flags (stored by name in its audit) under which a reviewer decides: never applied by itself.
REVIEWER_DECIDES = ("extends_right_entity", "rewrites_canonical", "refused_as_often", "disputed")


@dataclass
class Candidate(Rewrite):
    """A span that may be a mis-recognised entity, with the final proposed for it and its signals."""

    source: CandidateSource
    signals: dict[str, float] = field(default_factory=dict)  # what the scorer reads, by name
    confidence: float = 0.0
    disposition: Disposition = Disposition.DROPPED
    # How the spotter matched it: the whole window and the entry's form (before edge trimming), the entry's
    # frequency rank and both lengths in tokens; what the similarity signals are computed on.
    match_original: str | None = None
    match_final: str | None = None
    rank: int = 10
    window_tokens: int = 1
    entry_tokens: int = 0
    # Not features: a span with nothing to compare with (only the LLM can judge it), and what the memory said.
    context_free: bool = False
    memory_bonus: float = 0.0
    memory_score: float | None = None
    proposed_final: str | None = None  # the spotter's final, when the memory replaced it with the user's
    taught: TaughtMatch | None = None  # spotted from the user's own memory
    # Policy flags, not model features: they bound the decision, never the confidence.
    contested: bool = False  # the user both made and refused this pair: the signals alone decide
    refused_as_often: bool = False  # contested, and refused at least as often as made: a reviewer decides
    refused: int = 0  # times the user refused this pair (never made): held back unless its sentence reads it
    name_confirmed: bool = False  # the user fixed other words to this final: the name is theirs (memory_policy)
    extends_right_entity: bool = False  # rewrites around a right entity: a reviewer decides, never automatic
    rewrites_canonical: bool = False  # a taught fix of a spelling the list says is right: a reviewer decides
    disputed: bool = False  # a list reading of words the user taught two finals: a reviewer decides
    repeats_neighbour: bool = False  # its final would write the mis-heard word beside it twice: never proposed
    word_for_letters: bool = False  # an everyday word made letters nobody says as a word ("comp" → CMP): never proposed
    # A fix the user taught won its span from a reading inside it that was decided this ("covid" → COVID,
    # applied, inside taught "covid" → COVID-19): the span names something here, in the user's words.
    covers_reading: Disposition | None = None

    def audit(self) -> dict[str, float]:
        """What is stored with a suggestion to explain it: the signals it was scored on, the memory's say, its flags."""
        extra: dict[str, float] = {}
        if self.context_free:
            extra["context_free"] = 1.0
        if self.memory_score is not None:
            extra.update(memory_bonus=self.memory_bonus, memory_score=self.memory_score)
        if self.taught is not None:
            extra.update(self.taught.audit())
        if self.covers_reading is not None:
            extra["covers_reading"] = float(DISPOSITION_RANK[self.covers_reading])
        if self.refused:
            extra["refused"] = float(self.refused)
        flags = {
            "contested": self.contested,
            "extends_right_entity": self.extends_right_entity,
            "rewrites_canonical": self.rewrites_canonical,
            "refused_as_often": self.refused_as_often,
            "disputed": self.disputed,
            "name_confirmed": self.name_confirmed,
        }
        return {**self.signals, **extra, **{k: 1.0 for k, v in flags.items() if v}}

    @property
    def never_proposed(self) -> bool:
        """Scored like any candidate (the trees learn from it) but never shown nor read: a repeated neighbour or an
        everyday word made letters (`score.dispose`, `reading.needs_reading`)."""
        return self.repeats_neighbour or self.word_for_letters

    @property
    def reviewer_decides(self) -> bool:
        """Never applied by itself whatever its confidence (`score.dispose`): one of the REVIEWER_DECIDES flags."""
        return any(getattr(self, flag) for flag in REVIEWER_DECIDES)

    def capped(self, disposition: Disposition) -> Disposition:
        """`disposition`, at most pending where a reviewer decides (the one place the REVIEWER_DECIDES cap applies)."""
        return Disposition.PENDING if self.reviewer_decides and disposition is Disposition.AUTO_APPLIED else disposition
