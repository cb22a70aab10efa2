"""A name heard in pieces, proposed whole: "VJ" → Vijay beside "Camara" → Kumar is "VJ Camara" → Vijay Kumar.

A person's name parts are entries of their own (`CanonicalEntry`), so the spotter may fix a misheard full name one
word at a time. Each piece alone leaves the name wrong; a reviewer had to accept both, and the memory learnt two half
fixes. After the decision, a run of pending suggestions side by side (only spaces between them) whose finals read
together as one list value becomes one pending suggestion over the whole name, at the lowest of their confidences:
one decision, and the whole pair taught. Pieces applied by themselves are left as they are: together they already
write the whole name.

Two pieces may also write the same words at their seam: "next" → NextEra applied, and beside it "energy" → NextEra
Energy (each taught on its own) would read "NextEra NextEra Energy". The applied final stands; the other gives up the
words it would write again (`written_once`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import replace
from itertools import pairwise
from typing import NamedTuple

from namesake.core import compact
from namesake.domain import Candidate, CandidateSource, Disposition
from namesake.reliability.edge_forms import EDGE_FORM

# What marks a suggestion made of pieces among a transcript's suggestions (the number of pieces, in its signals).
PIECES = "pieces"
_GAP = re.compile(r"\s+")
# What may stand between two suggestions whose finals meet at a seam: spaces, a comma.
_SEAM = re.compile(r"[\s,]*")


class Piece(NamedTuple):
    """What the merge reads of a suggestion."""

    segment_id: str
    start: int
    end: int
    final: str
    pending: bool


def piece_runs(pieces: Sequence[Piece], texts: dict[str, str], values: Iterable[str]) -> list[list[int]]:
    """Index runs (two pieces or more, in text order) of pending pieces with only spaces between them whose finals,
    joined, are a list value; at each piece the longest such run that starts there."""
    known = {compact(v) for v in values}
    by_segment: dict[str, list[int]] = defaultdict(list)
    for i, p in enumerate(pieces):
        if p.pending:
            by_segment[p.segment_id].append(i)
    runs: list[list[int]] = []
    for seg, idx in by_segment.items():
        idx.sort(key=lambda i: pieces[i].start)
        text = texts.get(seg, "")
        k = 0
        while k < len(idx):
            chain = [idx[k]]
            while k + len(chain) < len(idx):
                a, b = pieces[chain[-1]], pieces[idx[k + len(chain)]]
                if not _GAP.fullmatch(text[a.end : b.start]):
                    break
                chain.append(idx[k + len(chain)])
            joined = [n for n in range(len(chain), 1, -1) if _joined(pieces, chain[:n]) in known]
            if joined:
                runs.append(chain[: joined[0]])
                k += joined[0]
            else:
                k += 1
    return runs


def _joined(pieces: Sequence[Piece], run: list[int]) -> str:
    return compact(" ".join(pieces[i].final for i in run))


def merged_pieces(kept: list[Candidate], texts: dict[str, str], values: Iterable[str]) -> list[Candidate]:
    """`kept` with each run of pending pieces of one list value replaced by one pending suggestion over them all."""
    pieces = [
        Piece(c.segment_id, c.start_char, c.end_char, c.final,
              c.disposition is Disposition.PENDING and c.source is CandidateSource.LISTS and c.taught is None)
        for c in kept
    ]  # fmt: skip
    runs = piece_runs(pieces, texts, values)
    if not runs:
        return kept
    gone = {i for run in runs for i in run}
    merged = [_merge([kept[i] for i in run], texts[kept[run[0]].segment_id]) for run in runs]
    out = [c for i, c in enumerate(kept) if i not in gone] + merged
    return sorted(out, key=lambda c: (c.segment_id, c.start_char))


def _merge(run: list[Candidate], text: str) -> Candidate:
    """One suggestion over the pieces: the weakest piece's signals and confidence, the whole name as its final."""
    weakest = min(run, key=lambda c: c.confidence)
    start, end = run[0].start_char, run[-1].end_char
    final = " ".join(c.final for c in run)
    merged = replace(weakest, start_char=start, end_char=end, original=text[start:end], final=final)
    merged.signals = {**weakest.signals, PIECES: float(len(run))}
    merged.match_original, merged.match_final = text[start:end], final
    return merged


def seam_words(before: str, after: str) -> int:
    """How many last words of `before` are the first words of `after` (compared compact): what two fixes side by side
    would write twice."""
    b, a = before.split(), after.split()
    return next((n for n in range(min(len(b), len(a)), 0, -1) if _same_words(b[-n:], a[:n])), 0)


def written_once(kept: list[Candidate], texts: dict[str, str]) -> list[Candidate]:
    """`kept` with no words written twice at a seam beside an applied suggestion: the other one's final loses the words
    the applied final already writes (words it heard itself are not a repeat), and a suggestion left with nothing to
    change goes."""
    order = sorted(range(len(kept)), key=lambda i: (kept[i].segment_id, kept[i].start_char))
    cur: dict[int, Candidate | None] = dict(enumerate(kept))
    for i, j in pairwise(order):
        a, b = cur[i], cur[j]
        if a is None or b is None or a.segment_id != b.segment_id:
            continue
        if not _SEAM.fullmatch(texts[a.segment_id][a.end_char : b.start_char]):
            continue
        n = seam_words(a.final, b.final)
        if not n:
            continue
        heard_a, final_a, heard_b, final_b = a.original.split(), a.final.split(), b.original.split(), b.final.split()
        if a.disposition is Disposition.AUTO_APPLIED and not _same_words(heard_b[:n], final_b[:n]):
            cur[j] = _with_final(b, " ".join(final_b[n:]))
        elif b.disposition is Disposition.AUTO_APPLIED and not _same_words(heard_a[-n:], final_a[-n:]):
            cur[i] = _with_final(a, " ".join(final_a[:-n]))
    return [c for c in cur.values() if c is not None]


def _same_words(one: list[str], other: list[str]) -> bool:
    """The same words, compared compact (case and punctuation aside)."""
    return [compact(w) for w in one] == [compact(w) for w in other]


def _with_final(c: Candidate, final: str) -> Candidate | None:
    """The suggestion with a shorter final, or None when it would change nothing; left with a change of form only
    ("energy" → Energy), it is the rest of a name fixed beside it, which accepting does not teach (`EDGE_FORM`)."""
    if not final or final == c.original:
        return None
    out = replace(c, final=final)
    out.signals = dict(c.signals)
    if compact(final) == compact(c.original):
        out.signals[EDGE_FORM] = 1.0
    out.match_final = final
    return out
