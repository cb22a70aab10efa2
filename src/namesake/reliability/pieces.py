"""A name heard in pieces, proposed whole: "VJ" → Vijay beside "Camara" → Kumar is "VJ Camara" → Vijay Kumar.

A person's name parts are entries of their own (`CanonicalEntry`), so the spotter may fix a misheard full name one
word at a time. Each piece alone leaves the name wrong; a reviewer had to accept both, and the memory learnt two half
fixes. After the decision, a run of pending suggestions side by side (only spaces between them) whose finals read
together as one list value becomes one pending suggestion over the whole name, at the lowest of their confidences:
one decision, and the whole pair taught. Pieces applied by themselves are left as they are: together they already
write the whole name.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import NamedTuple

from namesake.core import compact
from namesake.domain import Candidate, CandidateSource, Disposition

# What marks a suggestion made of pieces among a transcript's suggestions (the number of pieces, in its signals).
PIECES = "pieces"
_GAP = re.compile(r"\s+")


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
