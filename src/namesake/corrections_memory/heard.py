"""Other words a taught fix was reinforced over: a semantic twin keeps the words heard, so they come back too (pure).

The write rule reinforces the nearest correction with the same final instead of adding a point ("ANNEXES" → Amex
taught after "ANY EX" → Amex counts the second lesson on the first). Without more, the words heard the second time
were forgotten: the memory spots the originals it holds, so the next "ANNEXES" was the list's alone. The row keeps
them in `also_heard`, and each comes back as a correction of its own words, taught as often as it was heard.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from namesake.core import normalise
from namesake.domain import RememberedCorrection, ReviewAction


def heard_entry(original: str, context: str, action: ReviewAction, taught_by: str | None) -> dict[str, Any]:
    """One teaching of the row's fix over other words, as `CorrectionMirror.also_heard` keeps it."""
    return {"original": original, "context": context, "action": str(action), "taught_by": taught_by}


def with_heard(entries: list[dict[str, Any]], row_original: str, entry: dict[str, Any]) -> list[dict[str, Any]]:
    """The entries with one more teaching, unless its words are the row's own (then the row's count says it)."""
    if normalise(str(entry["original"])) == normalise(row_original):
        return entries
    return [*entries, entry]


def without_taught_by(entries: list[dict[str, Any]], suggestion_id: str) -> list[dict[str, Any]]:
    """The entries a decision taken back leaves: the teachings that decision made are gone."""
    return [e for e in entries if e.get("taught_by") != suggestion_id]


def heard_forms(
    taught: RememberedCorrection, entries: list[dict[str, Any]], held: frozenset[str]
) -> list[RememberedCorrection]:
    """The row's fix over each other words it was taught over: taught as often as those words were, in the latest
    context they were heard in; none for words another active correction of the same type holds (`held`, normalised)
    or that are the row's own."""
    by_words: dict[str, list[dict[str, Any]]] = {}
    for e in entries:
        words = normalise(str(e.get("original", "")))
        if words and words not in held and words != normalise(taught.original):
            by_words.setdefault(words, []).append(e)
    return [
        replace(
            taught,
            original=str(seen[-1]["original"]),
            context=str(seen[-1].get("context", "")),
            frequency=len(seen),
            action=ReviewAction(str(seen[0].get("action", ReviewAction.ACCEPT))),
            conflict=False,
            left_alone=None,
        )
        for seen in by_words.values()
    ]
