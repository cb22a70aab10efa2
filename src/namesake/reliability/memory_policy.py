"""How assertive the user's memory is: the one room for every rule on what a remembered correction may do.

The memory proposes (the spotter finds remembered originals; the reader's boost adds `memory_bonus`), and these
rules bound it: a refused pair is not proposed again (but where its sentence reads it and it would apply by itself),
a pair both made and refused is contested (the signals alone decide), a remembered correction is at least shown, and
the memory alone never rewrites.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

from namesake.core import Settings, compact, normalise
from namesake.domain import (
    DISPOSITION_RANK,
    Candidate,
    CandidateSource,
    Disposition,
    RememberedCorrection,
    ReviewAction,
    Suggestion,
    TaughtMatch,
    web_address_suffix,
)


@dataclass(frozen=True)
class BoostParams:
    """The boost formula's constants (settings RELIABILITY_CORRECTIONS_MEMORY_BOOST_*)."""

    threshold: float
    score_weight: float
    freq_weight: float
    max_bonus: float

    @classmethod
    def from_settings(cls, s: Settings) -> BoostParams:
        """Read the four settings."""
        return cls(
            s.reliability_corrections_memory_boost_threshold,
            s.reliability_corrections_memory_boost_score_weight,
            s.reliability_corrections_memory_boost_freq_weight,
            s.reliability_corrections_memory_boost_max_bonus,
        )


def boost_for(score: float, frequency: int, p: BoostParams) -> float:
    """What a remembered fix this near adds: min(MAX, (score − THRESHOLD)·SCORE_W + log(1 + freq)·FREQ_W), else 0."""
    if score < p.threshold:
        return 0.0
    return min(p.max_bonus, (score - p.threshold) * p.score_weight + math.log1p(max(0, frequency)) * p.freq_weight)


def take_remembered_final(c: Candidate, remembered_final: str) -> None:
    """The final the user taught replaces the one proposed: they said what this span means — unless that fix
    was a one-off (a paste, a sentence, an address the words do not say), which never replaces anything elsewhere."""
    if is_one_off(remembered_final, c.original):
        return
    if remembered_final and compact(remembered_final) != compact(c.final):
        c.proposed_final = c.final
        c.final = remembered_final
        c.source = CandidateSource.MEMORY


def keep_proposed_final(c: Candidate) -> None:
    """Undo take_remembered_final: the spotter's final and source back ("next year" → NextEra, not NextEra Energy
    taught on "energy")."""
    if c.proposed_final is not None:
        c.final, c.proposed_final = c.proposed_final, None
        c.source = CandidateSource.CONTEXT_FREE if c.context_free else CandidateSource.LISTS


# A taught final this long (words or characters) is a sentence or a paste, not a name: a one-off.
ONE_OFF_WORDS = 6
ONE_OFF_CHARS = 60


def is_one_off(final: str, heard: str = "") -> bool:
    """A fix that reads like a sentence or a paste (a 257-character paste was once remembered and applied), or a web
    address written for words that say none of it ("Energous" → www.enagas.es: what was written there, not what was
    said; the name's next "Energous" is Enagas).

    It stays where it was taught: never applied elsewhere by itself, never proposed in place of another final.
    Short fixes far from their original in spelling ("uh" → GMA) are not one-offs: the reviewer meant them.
    """
    return len(final.split()) > ONE_OFF_WORDS or len(final) > ONE_OFF_CHARS or address_not_said(final, heard)


def address_not_said(final: str, heard: str) -> bool:
    """Whether the final is a web address and the heard words say none of its dots or domain ("yet dot com" says
    YETI.com's, "Energous" none of www.enagas.es's)."""
    spoken = web_address_suffix(final)
    return bool(heard) and bool(spoken) and "." not in heard and not set(normalise(heard).split()) & spoken


def pair(c: Candidate | RememberedCorrection) -> tuple[str, str]:
    """The (original, final) pair in compact form: how refusals and remembered fixes are compared."""
    return (compact(c.original), compact(c.final))


# A list reading of a name the user fixed other words to before ("covert" → COVID taught, "Kovar" → COVID here) applies
# by itself from this confidence: the user said the name is theirs, so what the list alone would queue is likelier
# right. Chosen on the held-out loop's review sessions, fold by fold (bench/fit/memory_bounds.py): the loosest value a
# fold chose (0.35 … 0.5): between 0.30 and 0.35 one reading in six made the words worse ("Um, I" → AMI) and took the
# reviewer's harm above a fresh user's; from 0.40 the second halves' entity errors fall less than 8% below a fresh
# user's (docs/benchmarks/2026-12-07-memory-confirmed-names-and-hand-fixes-made-every-time.md).
CONFIRMED_FLOOR = 0.35


def confirm_names(cands: list[Candidate], remembered: list[RememberedCorrection]) -> None:
    """Mark the list's readings whose final the user taught for other words (not a one-off, not one of two finals
    taught for the same words): `name_confirmed`."""
    finals = {compact(m.final) for m in remembered if not m.conflict and not is_one_off(m.final, m.original)}
    originals = {compact(m.original) for m in remembered}
    for c in cands:
        if c.source == CandidateSource.LISTS and compact(c.final) in finals and compact(c.original) not in originals:
            c.name_confirmed = True


def confirmed_here(c: Candidate, evidence: float) -> bool:
    """A list reading of a name the user confirmed, sure enough on its own signals to apply by itself."""
    return c.name_confirmed and c.taught is None and not c.contested and evidence >= CONFIRMED_FLOOR


def bonus_of(c: Candidate) -> float:
    """The reader's bonus, unless the pair is contested or its words were taught two finals (then the memory says
    nothing either way)."""
    return 0.0 if c.contested or (c.taught is not None and c.taught.conflict) else c.memory_bonus


# An original whose commonest word (numbers aside) is at least this frequent (wordfreq Zipf, the
# `remembered_everyday` signal; 4.0 ≈ "gap", "adjusted") is an everyday word: applied only where taught.
EVERYDAY = 4.0
# Share of the neighbouring content words also found where the fix was taught: "the same context".
SAME_CONTEXT = 0.5


def taught(c: Candidate) -> bool:
    """The user made exactly this correction (not contested, not in conflict with another final they taught for the
    same words, not a one-off): in overlaps it wins over the spotter's readings."""
    t = c.taught
    return t is not None and t.similarity >= 1.0 and not c.contested and not t.conflict and not t.one_off


def taught_two_finals(c: Candidate) -> bool:
    """The user taught these very words two finals for the same place (a conflict): shown to them to choose, whatever
    the list says of the words, and applied by neither."""
    return c.taught is not None and c.taught.similarity >= 1.0 and c.taught.conflict and not c.contested


def mark_disputed(cands: list[Candidate], remembered: list[RememberedCorrection]) -> None:
    """Mark the list's readings of words the user taught two finals, and of any part of those words (`disputed`): the
    list's final may be either side, or a third; a reviewer decides ("cepheids" → Cepheid's accepted, then → Cepheid
    made by hand; "year" → NextEra inside "next year", taught → NextEra and → NextEra Energy), unless the user taught
    that very pair of the part ("next" → NextEra inside "next energy")."""
    words = {compact(m.original) for m in remembered if m.conflict}
    if not words:  # the common case: nothing disputed, nothing to compare on every candidate
        return
    settled = {pair(m) for m in remembered if not m.conflict}  # a part the user taught as is stays theirs
    spans = [(c.segment_id, c.start_char, c.end_char) for c in cands if compact(c.original) in words]
    for c in cands:
        if (
            c.source == CandidateSource.LISTS
            and pair(c) not in settled
            and any(c.segment_id == seg and start <= c.start_char and c.end_char <= end for seg, start, end in spans)
        ):
            c.disputed = True


def taught_in_like_context(c: Candidate) -> bool:
    """Taught where the words around were much the same: enough to rewrite even a canonical spelling."""
    return taught(c) and _context(c) >= SAME_CONTEXT


# Teaching is evidence: a pair taught once is this sure whatever the list says, and each teaching more halves the
# doubt left (0.60, 0.84, 0.94, …). With the other signals' evidence e the confidence is 1 − (1 − e)(1 − taught):
# where the rules apply a taught pair (`taught_here`), the memory lifts it above the list's own reading.
TAUGHT_ONCE = 0.6
# The bounds below were chosen on the held-out loop's review sessions, each fold's value chosen without it
# (bench/fit/memory_bounds.py); what each run's folds chose, and why a looser choice was not taken where it raised
# harm above a fresh user's: docs/benchmarks/2026-12-06-memory-hand-fixes-and-seams.md (and for REFUSED_READ_GAIN,
# docs/benchmarks/2026-12-06-memory-refusals-in-their-sentence.md).
# An everyday original taught twice or more applies unless the language model reads the heard words this much likelier
# in its sentence (nats): only a sentence that rules the name out.
AGAINST_GAIN = -14.0
# An everyday original taught once (accepted or edited) applies where the model reads the final nearly as likely as the
# heard words.
FOR_GAIN = -4.0
# Taught once by hand (the reviewer typed it where no suggestion stood) where they kept the words as said elsewhere in
# that call, or where that is not known, only where the model reads the final clearly likelier than the heard words: a
# hand fix of "well" says little about the next "well". Fixed by hand everywhere it was heard, it reads as an accepted
# pair with nothing left alone does (EVERY_TIME_GAIN).
BY_HAND_GAIN = 3.0
# An everyday original taught once, its words left alone nowhere in that call (every time it was heard, the reviewer
# changed it), applies where the model reads the final at least this likely against the heard words (nats).
EVERY_TIME_GAIN = -6.0
# A single word this frequent (Zipf: "us" 6.0, "that's" 7.0) is a function word in all but name: however often it was
# taught, it applies only among the words it was taught among ("us" → US, "that's" → Matt's: right 0, harmful 6).
FUNCTION_GRADE = 5.5


def taught_sureness(times: float) -> float:
    """How sure a pair taught `times` times is, on its own: 1 − (1 − TAUGHT_ONCE)^times."""
    return 1.0 - float((1.0 - TAUGHT_ONCE) ** max(1.0, times))


def with_teaching(c: Candidate, confidence: float) -> float:
    """The confidence once what the user taught counts as evidence: lifted where the rules apply it, else unchanged."""
    if not taught_here(c) or c.taught is None:
        return confidence
    return _lifted(confidence, taught_sureness(c.taught.frequency))


def _lifted(confidence: float, sureness: float) -> float:
    """The confidence with the teaching's sureness as independent evidence: 1 − (1 − e)(1 − t)."""
    return 1.0 - (1.0 - confidence) * (1.0 - sureness)


def while_waiting(c: Candidate, confidence: float) -> float:
    """The confidence of a pair the user taught that waits for the reviewer: its teaching counted at half weight, so
    a pair taught once shows at 0.30 or more (the review page's fold), twice at 0.42 or more — the memory never
    leaves what it was taught where the list alone put it, nor applies it. So does one side of two finals taught
    for the same words: the reviewer is asked to choose."""
    if not (taught(c) or taught_two_finals(c)) or c.taught is None or c.disposition is not Disposition.PENDING:
        return confidence
    return max(confidence, _lifted(confidence, taught_sureness(c.taught.frequency) / 2))


def taught_here(c: Candidate) -> bool:
    """Taught as is, and nothing says otherwise: applied by itself, the list's own reading notwithstanding.

    A name heard as a word nobody uses ("Cytova", "Sylvia" → DSUVIA) applies wherever it comes back. An everyday
    original ("Crystal" → Christelle, "done" → Don) or a change of case alone ("genome" → Genome) is an ordinary word
    elsewhere, so it applies where the words around are those it was taught among (unless the reviewer left those words
    alone in that call more often than they fixed them); taught twice or more, unless the language model reads the
    heard words as far likelier in its sentence; taught once by accepting or editing, where the model reads the final
    nearly as likely; once by hand, only where it reads the final clearly likelier (one hand fix of "well" says little
    about the next "well"); either, a little less likely still where the reviewer changed the words every time they
    were heard in that call. No teaching of a word as common as a function word ("us" → US) applies elsewhere by
    itself. A one-off (a paste, a sentence, an address the words do not say) never applies elsewhere.
    (The sessions behind these bounds: docs/benchmarks/memory.md.)
    """
    if not taught(c):
        return False
    assert c.taught is not None  # taught(c)
    if c.taught.one_off:
        return False
    everyday = c.taught.everyday >= EVERYDAY or bool(c.signals.get("case_only"))
    if not everyday or (_context(c) >= SAME_CONTEXT and not left_alone_mostly(c.taught)):
        return True
    if c.taught.everyday >= FUNCTION_GRADE and len(c.original.split()) == 1:
        return False
    gain = c.signals.get("lm_gain")
    if c.taught.frequency >= 2:
        return gain is None or gain >= AGAINST_GAIN
    return gain is not None and gain >= once_taught_bar(c.taught)


def left_alone_mostly(t: TaughtMatch) -> bool:
    """The reviewer kept the words as said in the call they taught the fix in more often than they fixed them: the
    words are mostly the word there, so words around alike to where it was taught are not enough to apply it ("very" →
    GRAIL fixed by hand once, eleven other "very"s left alone)."""
    return t.left_alone is not None and t.left_alone > t.frequency


def once_taught_bar(t: TaughtMatch) -> float:
    """How much likelier than the heard words the model must read the final of an everyday pair taught once: looser
    where the reviewer left its words alone nowhere in that call, stricter for a hand fix where they did (or where it
    is not known)."""
    if t.left_alone == 0:
        return EVERY_TIME_GAIN
    return BY_HAND_GAIN if t.action == ReviewAction.MANUAL else FOR_GAIN


def completes_right_entity(c: Candidate) -> bool:
    """A fix the user taught that completes a right entity inside its span ("covid nineteen" → COVID-19 around
    "covid"): they said what the whole span is, so the cap on rewrites around a right entity does not hold it back
    (the other caps do: a list spelling rewritten, a refusal as often as the fix)."""
    return (
        c.extends_right_entity
        and not c.rewrites_canonical
        and not c.refused_as_often
        and c.taught is not None
        and taught_here(c)
    )


def _context(c: Candidate) -> float:
    """How alike the words around are to where the fix was taught (0 when there is nothing to compare)."""
    return 0.0 if c.taught is None or c.taught.context is None else c.taught.context


class AppliesByItself(Protocol):
    """A learned answer to "may this remembered fix apply by itself here?" (`memory_model.LearnedPolicy`)."""

    def applies(self, c: Candidate, evidence: float) -> bool:
        """Whether the remembered fix applies by itself here."""
        ...


def memory_bounds(
    c: Candidate, evidence: float, disposition: Disposition, auto_apply: float, learned: AppliesByItself | None = None
) -> Disposition:
    """The disposition once the memory's rules apply.

    A fix the user taught is applied where it was taught (same original, and no everyday word or a like
    context) — or, under the learned policy, where the policy says it is right; any other remembered fix, or
    one a letter away, is at least shown; the memory's bonus never makes a rewrite automatic on its own
    ("uh" → "GMA" was right once, in one place, not for every "uh"), nor does a final it swapped in from a
    near original (where the spotter's own final would apply by itself, that final applies); a paste is never
    applied elsewhere.
    """
    if c.contested:
        return disposition
    if c.taught is not None and c.taught.conflict:  # two finals taught for these words: the reviewer chooses
        return Disposition.PENDING
    if c.proposed_final is not None and c.taught is None and disposition is Disposition.AUTO_APPLIED:
        # the vector memory put in a final taught on another original ("yetis" → YETI's, on "yeti"): the
        # signals judged the spotter's final, not this one (the learning loop: 56 of 71 such edits harmed), so
        # the spotter's own final is what applies, where its signals alone would apply it
        if evidence < auto_apply:
            return Disposition.PENDING
        keep_proposed_final(c)
        return disposition
    if c.covers_reading is not None:  # a reading inside the taught span was decided so: at least that
        return max(
            c.covers_reading, _policy(c, evidence, disposition, auto_apply, learned), key=DISPOSITION_RANK.__getitem__
        )
    return _policy(c, evidence, disposition, auto_apply, learned)


def _policy(
    c: Candidate, evidence: float, disposition: Disposition, auto_apply: float, learned: AppliesByItself | None
) -> Disposition:
    """memory_bounds for an uncontested candidate: the learned policy or the hand rules."""
    if learned is not None and c.taught is not None and c.taught.similarity > 0:
        if not c.taught.one_off and learned.applies(c, evidence):
            return Disposition.AUTO_APPLIED
        return Disposition.PENDING
    if taught_here(c) or confirmed_here(c, evidence):
        return Disposition.AUTO_APPLIED
    if c.taught is not None and c.taught.similarity > 0 and disposition is Disposition.DROPPED:
        return Disposition.PENDING
    if disposition is Disposition.AUTO_APPLIED and evidence < auto_apply:
        return Disposition.PENDING
    return disposition


def from_memory(s: Suggestion) -> bool:
    """Whether the user's memory made or backed the suggestion: what its being applied renews."""
    return s.source == CandidateSource.MEMORY or float(s.signals.get("remembered", 0.0)) > 0
