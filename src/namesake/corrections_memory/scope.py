"""Where a taught fix applies: the one place a memory filter is built (every query names its user), and its scope."""

from __future__ import annotations

from namesake.adapters import Filter, Match, MatchAny, Range
from namesake.core import InvalidInputError, compact, normalise
from namesake.domain import CanonicalDictionary, MemoryScope, RememberedCorrection
from namesake.reliability import EVERYDAY, everyday_zipf


def memory_filter(
    user_id: str,
    *,
    entity_type: str | None = None,
    embedding_model: str | None = None,
    quarantine_after: int | None = None,
    exclude_promoted: bool = False,
    exclude_originals: frozenset[str] = frozenset(),
) -> Filter:
    """Filter on one user's corrections; `user_id` is required and never empty."""
    if not isinstance(user_id, str) or not user_id:
        raise InvalidInputError("a corrections-memory query needs a user_id", field="user_id")
    must: list[Match | Range] = [Match("user_id", user_id)]
    if entity_type is not None:
        must.append(Match("entity_type", entity_type))
    if embedding_model is not None:
        must.append(Match("embedding_model", embedding_model))
    if quarantine_after is not None:
        must.append(Range("quarantine_until", gt=quarantine_after))
    must_not: list[Match | MatchAny] = [Match("promoted_to_canonical", True)] if exclude_promoted else []
    if exclude_originals:  # fixes taught for another transcript or list (split_by_scope)
        must_not.append(MatchAny("original_norm", tuple(sorted(exclude_originals))))
    return Filter(must=tuple(must), must_not=tuple(must_not))


def default_scope(original: str, final: str, language: str) -> MemoryScope:
    """Where a fix applies next when the reviewer did not say: narrow for everyday words, else all the user's calls.

    Everyday as the memory policy means it (`memory_policy.EVERYDAY`): "three" → III taught in a drug trial is not
    for "ninety three percent" in another company's call. A fix of the form alone ("Data Dog" → Datadog: the same
    letters) is the same name wherever it is heard.
    """
    if compact(original) == compact(final):
        return MemoryScope.USER
    return MemoryScope.LIST if everyday_zipf(original, language) >= EVERYDAY else MemoryScope.USER


def in_scope(taught: RememberedCorrection, transcript_id: str, listed: frozenset[str]) -> bool:
    """Whether a taught fix may come back in this transcript, whose lists hold the `listed` values (normalised)."""
    if taught.scope == MemoryScope.TRANSCRIPT:
        return taught.transcript_id == transcript_id
    if taught.scope == MemoryScope.LIST:
        return (
            normalise(taught.final) in listed
            or compact(taught.final) in listed
            or taught.transcript_id == transcript_id
        )
    return True


def listed_values(dictionary: CanonicalDictionary) -> frozenset[str]:
    """What a fix taught for "calls whose list holds it" looks for: each list value normalised, written without its
    spaces, and each of its words (a person is often named by one of them: "Christelle" of "Christelle Dupont")."""
    out: set[str] = set()
    for values in dictionary.lists.values():
        for value in values:
            norm = normalise(value)
            out.update((norm, norm.replace(" ", ""), *norm.split()))
    return frozenset(out)


def split_by_scope(
    remembered: list[RememberedCorrection], transcript_id: str, listed: frozenset[str]
) -> tuple[list[RememberedCorrection], frozenset[str]]:
    """The fixes that may come back here, and the normalised originals of those that may not (kept from the boost)."""
    keep = [m for m in remembered if in_scope(m, transcript_id, listed)]
    away = frozenset(normalise(m.original) for m in remembered if not in_scope(m, transcript_id, listed))
    return keep, away
