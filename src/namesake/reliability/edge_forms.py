"""The words a right rewrite left as heard, written as the list writes them: an edit of their own, after the decision.

"extra energy" → NextEra for the entry NextEra Energy: the spotter trims "energy" off the candidate because its
letters match the entry (the trees judge what changes, not the words that stay), so the text reads
"NextEra energy". Once the rewrite is applied, each trimmed edge word written otherwise than in the entry
(case, accents, hyphens) becomes a suggestion of its own with the rewrite's decision and confidence: a separate
edit, so the entity is judged whole and a reviewer can undo either. Measured in docs/benchmarks/reliability.md.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import replace

from namesake.core import compact
from namesake.domain import Candidate, Disposition, RememberedCorrection
from namesake.reliability.refusal_policy import apply_refusals

# What marks an edge-word form fix among a transcript's suggestions (stored with it, shown by the page).
EDGE_FORM = "edge_form"
_WORD = re.compile(r"\S+")
_CORE = re.compile(r"^\W*(.*?)\W*$", re.DOTALL)


def edge_pieces(text: str, start: int, end: int, final: str, entry: str | None) -> list[tuple[int, int, str]]:
    """(start, end, written) for each word beside text[start:end] that the entry holds around `final`, whose
    letters match and whose form differs; [] when `final` is the whole entry or the words do not line up."""
    if not entry or entry == final:
        return []
    words, inner = entry.split(), final.split()
    k = next((i for i in range(len(words) - len(inner) + 1) if words[i : i + len(inner)] == inner), None)
    if k is None:
        return []
    left, right = words[:k], words[k + len(inner) :]
    before = list(_WORD.finditer(text, 0, start))
    after = list(_WORD.finditer(text, end))
    if len(before) < len(left) or len(after) < len(right):
        return []
    spans = [(m.start(), m.end()) for m in before[len(before) - len(left) :]] if left else []
    spans += [(m.start(), m.end()) for m in after[: len(right)]]
    pieces = []
    for (a, b), word in zip(spans, [*left, *right], strict=True):
        if compact(text[a:b]) != compact(word):
            return []  # not the words the spotter trimmed: leave the text alone
        a, b = _core(text, a, b)
        written = _CORE.sub(r"\1", word)
        if written and text[a:b] != written:
            pieces.append((a, b, written))
    return pieces


def _core(text: str, a: int, b: int) -> tuple[int, int]:
    """The word without the punctuation around it ("energy," → "energy"): a form fix keeps the comma."""
    m = _CORE.match(text[a:b])
    return (a + m.start(1), a + m.end(1)) if m and m.group(1) else (a, b)


def edge_form_fixes(
    kept: list[Candidate],
    texts: dict[str, str],
    refused: dict[tuple[str, str], int],
    remembered: list[RememberedCorrection],
) -> list[Candidate]:
    """The edge-word form fixes of the auto-applied rewrites in `kept`, none over another suggestion's span; one
    the user refused stays as heard, one refused as often as made is left to a reviewer (apply_refusals)."""
    fixes = apply_refusals(_fixes(kept, texts), refused, remembered)
    for c in fixes:
        c.disposition = c.capped(c.disposition)
    return fixes


def _fixes(kept: list[Candidate], texts: dict[str, str]) -> list[Candidate]:
    """Each auto-applied rewrite's edge pieces as candidates, the first to claim a span keeping it."""
    taken: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for c in kept:
        taken[c.segment_id].append((c.start_char, c.end_char))
    out: list[Candidate] = []
    for c in kept:
        if c.disposition is not Disposition.AUTO_APPLIED or c.segment_id not in texts:
            continue
        text = texts[c.segment_id]
        pieces = edge_pieces(text, c.start_char, c.end_char, c.final, c.match_final)
        for a, b, written in free_pieces(pieces, taken[c.segment_id]):
            signals = {EDGE_FORM: 1.0, "form_only": 1.0, "case_only": float(text[a:b].lower() == written.lower())}
            out.append(_fix(c, a, b, text[a:b], written, signals))
    return out


def free_pieces(pieces: list[tuple[int, int, str]], taken: list[tuple[int, int]]) -> list[tuple[int, int, str]]:
    """The pieces over no span of `taken` (one segment's), each added to it: no edit overlaps another."""
    out = []
    for a, b, written in pieces:
        if not any(a < e and s < b for s, e in taken):
            taken.append((a, b))
            out.append((a, b, written))
    return out


def _fix(parent: Candidate, start: int, end: int, original: str, written: str, signals: dict[str, float]) -> Candidate:
    """The edge word's own suggestion: the parent's place, decision and confidence, none of its memory or flags."""
    return replace(
        parent, start_char=start, end_char=end, original=original, final=written, signals=signals,
        match_original=None, match_final=None, taught=None, proposed_final=None, memory_bonus=0.0, memory_score=None,
        covers_reading=None, contested=False, refused_as_often=False, extends_right_entity=False,
        rewrites_canonical=False, repeats_neighbour=False, word_for_letters=False,
    )  # fmt: skip
