"""Held-out predictions as the pipeline serves them: runs of pending pieces of one list value merged, half fixes grown
over the words that complete their value, each suggestion's original cut from the bench file."""

from __future__ import annotations

import functools
import gzip
import json
from pathlib import Path
from typing import Any

from namesake.reliability.pieces import Piece, piece_runs
from namesake.reliability.reading import reads
from namesake.reliability.rivals import HOLD_WITHIN, bigger_readings, reading, trimmed_nearer
from namesake.reliability.whole import Span, swallowed, whole_spans


def grown(sugs: list[dict[str, Any]], texts: dict[str, str], values: list[str]) -> list[dict[str, Any]]:
    """One transcript's suggestions with each half fix grown over the words that complete its list value
    (whole.made_whole)."""
    spans = [Span(s["segment_id"], s["start_char"], s["end_char"], s["final"], s["status"] == "auto_applied")
             for s in sugs]  # fmt: skip
    found = whole_spans(spans, texts, values)
    gone = swallowed(spans, found)
    return [s if w is None else {**s, "start_char": w.start_char, "end_char": w.end_char, "final": w.final}
            for i, (s, w) in enumerate(zip(sugs, found, strict=True)) if i not in gone]  # fmt: skip


def merged(sugs: list[dict[str, Any]], texts: dict[str, str], values: list[str]) -> list[dict[str, Any]]:
    """One transcript's suggestions with each run of pending pieces of one list value merged (pieces.piece_runs)."""
    pieces = [Piece(s["segment_id"], s["start_char"], s["end_char"], s["final"], s["status"] == "pending")
              for s in sugs]  # fmt: skip
    runs = piece_runs(pieces, texts, values)
    gone = {i for run in runs for i in run}
    out = [s for i, s in enumerate(sugs) if i not in gone]
    for run in runs:
        first, last = sugs[run[0]], sugs[run[-1]]
        out.append({**first, "end_char": last["end_char"], "final": " ".join(sugs[i]["final"] for i in run),
                    "confidence": min(sugs[i]["confidence"] for i in run)})  # fmt: skip
    return out


@functools.cache
def bench_lists(split: Path) -> dict[str, tuple[dict[str, str], list[str]]]:
    """Per transcript of a bench file: its segments' texts and its list values (what `merged` reads)."""
    out = {}
    with gzip.open(split, "rt") as fh:
        for t in map(json.loads, fh):
            values = [v for vs in (t.get("canonical_entities") or {}).values() for v in vs]
            out[t["transcript_id"]] = ({s["id"]: s["text"] for s in t["segments"]}, values)
    return out


def with_originals(split: Path, preds: dict[str, list[dict[str, Any]]]) -> None:
    """Each suggestion's `original`, cut from its segment's text in the bench file."""
    lists = bench_lists(split)
    for tid, sugs in preds.items():
        for s in sugs:
            s["original"] = lists[tid][0][s["segment_id"]][s["start_char"] : s["end_char"]]


def held_bigger(rows: list[dict[str, Any]], kept: list[int], p: Any, read_from: float) -> list[int]:
    """The rows the pipeline holds beside the reading that took their words, for the language model to read (as
    `score.resolve_overlaps` with `hold_bigger`): bigger readings of its name, of words in use, from `read_from` and
    within `rivals.HOLD_WITHIN` of it, unless it is the whole value trimmed and sounds nearer."""
    claimed = set(kept)
    readings = [reading(f"{r['span'][0]}/{r['span'][1]}", r["span"][2], r["span"][3], r["final"]) for r in rows]
    return sorted(
        {
            big
            for big, small in bigger_readings(readings)
            if small in claimed and big not in claimed and p[big] >= max(read_from, p[small] - HOLD_WITHIN)
            and reads(rows[big]["signals"]) and not rows[big].get("letters") and not rows[big].get("repeats")
            and not trimmed_nearer(rows[small]["final"], rows[small].get("match_final"), rows[small]["signals"],
                                   rows[big]["final"], rows[big]["signals"])
        }
    )  # fmt: skip
