"""How assertive the user's memory is: the one room for every rule on what a remembered correction may do.

The memory proposes (S1 spots remembered originals; the reader's boost adds `memory_bonus`), and these
rules bound it: a refused pair is never proposed again, a pair both made and refused is contested (the
signals alone decide), a remembered correction is at least shown, and the memory alone never rewrites.
"""

from __future__ import annotations

from namesake.reliability.types import Candidate, Decision, RememberedCorrection
from namesake.text import compact


def pair(c: Candidate | RememberedCorrection) -> tuple[str, str]:
    """The (original, final) pair in compact form: how refusals and remembered fixes are compared."""
    return (compact(c.original), compact(c.final))


def apply_refusals(
    cands: list[Candidate], refused: set[tuple[str, str]], remembered: list[RememberedCorrection]
) -> list[Candidate]:
    """Drop what the user refused; a pair they both refused and made is kept, marked contested."""
    confirmed = {pair(m) for m in remembered}
    kept = []
    for c in cands:
        if pair(c) in refused:
            if pair(c) not in confirmed:
                continue
            c.contested = True
        kept.append(c)
    return kept


def memory_bonus(c: Candidate) -> float:
    """The reader's bonus, unless the pair is contested (then the memory says nothing either way)."""
    return 0.0 if c.contested else c.signals.get("memory_bonus", 0.0)


def memory_bounds(c: Candidate, evidence: float, decision: Decision, suggest: float) -> Decision:
    """The decision once the memory's rules apply: remembered fixes are shown, the memory alone never rewrites."""
    if c.contested:
        return decision
    if c.signals.get("remembered", 0.0) > 0 and decision is Decision.DROPPED:
        return Decision.PENDING  # the user made this correction (or one a letter away): worth showing them
    if decision is Decision.AUTO_APPLIED and evidence < suggest:
        return Decision.PENDING  # "uh" → "GMA" was right once, in one place, not for every "uh"
    return decision
