"""The gate: what is already written as a canonical entity is correct as written — no LLM, no suggestion."""

from __future__ import annotations

import re
from dataclasses import dataclass

from rapidfuzz.distance import Levenshtein

from namesake.core import compact, form_differs, normalise
from namesake.domain import Candidate, CanonicalEntry
from namesake.reliability.memory_policy import taught, taught_in_like_context, taught_two_finals

INFLECTIONS = ("s", "es")
# Two list values this alike in spelling are one name spelled two ways, or two names a recogniser confuses
# ("Colombia" and "Columbia", "FTL" and "FPL"): automatically built lists hold both. Either, heard, may be the other.
TWIN_SIMILARITY = 0.6


@dataclass
class GateResult:
    """Candidates that passed, and how many spans were gated."""

    passed: list[Candidate]
    gated: int


def _covers_protected(cand: Candidate, protected: list[tuple[int, int, str]]) -> bool:
    """True if the candidate touches a right entity (candidates are already trimmed to what changes).

    Rewriting around a right entity would swallow it or its neighbours ("Colombia, uh" → "Colombia").
    """
    final_key = compact(cand.final)
    for start, end, norm in protected:
        if start < cand.end_char and end > cand.start_char:
            key = norm.replace(" ", "")
            # allowed only when the final keeps the right entity and adds to it ("Conical Phillips" → ConocoPhillips)
            if not (key in final_key and len(final_key) > len(key)):
                return True
            # a reviewer decides these, never automatic; but a name said exactly as the list says it completes the
            # right entity inside it ("yeti dot com" → YETI.com around "yeti"): the scorer decides that one
            cand.extends_right_entity = not cand.signals.get("spoken_form")
    return False


def form_fix(cand: Candidate) -> bool:
    """A span that is a canonical value in another form ("tall grass" for Tallgrass, "ebitda", "K P I")."""
    return compact(cand.original) == compact(cand.final) and form_differs(cand.original, cand.final)


def only_deletes(cand: Candidate) -> bool:
    """Whether the final is written, as is, among the span's words ("or www.sec.gov" → www.sec.gov): such a rewrite
    only deletes the words around a name already right (on the dev files 183 candidates, 11 of them right)."""
    original, final = cand.original, cand.final
    return len(original) > len(final) and re.search(rf"(?<!\w){re.escape(final)}(?!\w)", original) is not None


def listed_twin(cand: Candidate, listed: set[str]) -> bool:
    """Whether the span is written exactly as one list value and would become another much like it (not an
    inflection of it): a list that holds both does not say which was said, so a reviewer does."""
    heard, final = compact(cand.original), compact(cand.final)
    if heard not in listed or final not in listed or heard.startswith(final) or final.startswith(heard):
        return False
    return Levenshtein.normalized_similarity(heard, final) >= TWIN_SIMILARITY


def apply_gate(candidates: list[Candidate], entries: list[CanonicalEntry]) -> GateResult:
    """Drop candidates whose span is already canonical, and those that would overwrite such a span.

    A canonical span written in another form passes as a form fix to the canonical spelling (the scorer
    decides whether the form is safe to impose), and stays protected from every other rewrite. A fix the user
    taught on this very spelling passes too, for a reviewer to decide: the list says the words are right, the
    user once said otherwise ("SMB" → SME, "cepheids" → Cepheid, also where they taught the words two finals), and
    only the words around tell which. So does a
    span written as one list value that another, much like it, may have been (`listed_twin`).
    """
    canonical_values = {e.key for e in entries if not e.spoken}
    canonical_keys = set(canonical_values)
    # A plural or possessive of a canonical entry ("Goldsteins", "Honeywell's") is right as written too.
    canonical_keys |= {k + suffix for k in canonical_keys for suffix in INFLECTIONS}
    protected: dict[str, list[tuple[int, int, str]]] = {}
    passed, forms, overruled = [], [], []
    for cand in candidates:
        # what the canonical list says is right is kept, unless the user taught this very fix in a like context
        if compact(cand.original) in canonical_keys and not taught_in_like_context(cand):
            protected.setdefault(cand.segment_id, []).append((cand.start_char, cand.end_char, normalise(cand.original)))
            if form_fix(cand):
                forms.append(cand)
            elif taught(cand) or taught_two_finals(cand) or listed_twin(cand, canonical_values):
                cand.rewrites_canonical = True
                cand.signals["listed_original"] = 1.0
                overruled.append(cand)
        elif not only_deletes(cand) or taught(cand):
            passed.append(cand)
    kept = (
        [c for c in passed if taught_in_like_context(c) or not _covers_protected(c, protected.get(c.segment_id, []))]
        + forms
        + overruled
    )
    # one per span, however many entries matched it
    return GateResult(kept, sum(len(set(s)) for s in protected.values()))
