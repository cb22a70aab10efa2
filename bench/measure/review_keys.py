"""Review keys: the presses a reviewer needs to decide every pending suggestion of each call, before and now.

Before: one key per pending suggestion (the page moved on by itself), plus Enter to open the call.
Now: one key per group of one original → final pair among the pending ones above the fold, one R for the
folded ones, Enter. The browser test `test_a_dev_call_is_decided_in_far_fewer_key_presses` drives
the page itself on one call and finds the same count this model gives for it.

Usage: python -m bench.measure.review_keys PREDICTIONS.jsonl [earnings21.jsonl.gz] [--fold-below 0.30] [--min-words N]
PREDICTIONS is what bench/measure/quality.py wrote (bench/out/earnings21.namesake.jsonl): the shipped scorer, which
was fitted on these calls, so the queue sizes are in-sample; the key counts depend on the page, not on that.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import statistics
from pathlib import Path
from typing import Any

from bench.common import bench_file, worth_accepting


def keys_for(pending: list[tuple[str, str, float]], fold_below: float) -> tuple[int, int, int]:
    """Key presses for one call's pending (original, final, confidence) suggestions: before; now with R for
    the folded ones; now deciding the folded ones group by group too (z, then a key a group)."""
    pair = lambda o, f: (" ".join(o.split()).casefold(), f)  # noqa: E731 - as the page's pairKey
    shown = {pair(o, f) for o, f, c in pending if c >= fold_below}
    hidden = {pair(o, f) for o, f, c in pending if c < fold_below} - shown
    folded = any(c < fold_below for _, _, c in pending)
    return len(pending) + 1, len(shown) + int(folded) + 1, len(shown) + len(hidden) + int(folded) + 1


def pending_of(call: dict[str, Any], prediction: dict[str, Any]) -> list[tuple[str, str, float]]:
    """The call's pending suggestions as (original, final, confidence)."""
    text = {s["id"]: s["text"] for s in call["segments"]}
    return [(text[s["segment_id"]][s["start_char"]: s["end_char"]], s["final"], s["confidence"])
            for s in prediction["suggestions"] if s["status"] == "pending"]  # fmt: skip


def banded(call: dict[str, Any], prediction: dict[str, Any]) -> list[tuple[float, bool]]:
    """(confidence, worth accepting by the harm rule) of each pending suggestion of the call."""
    segs = {s["id"]: s for s in call["segments"]}
    return [(s["confidence"], worth_accepting(segs[s["segment_id"]], s))
            for s in prediction["suggestions"] if s["status"] == "pending"]  # fmt: skip


def main() -> None:
    """Print the per-size table and the totals, before against now."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("predictions", type=Path)
    ap.add_argument("split", nargs="?", default="earnings21.jsonl.gz")
    ap.add_argument("--fold-below", type=float, default=0.30)
    ap.add_argument("--min-words", type=int, default=0)
    a = ap.parse_args()
    if not a.predictions.exists():
        raise SystemExit(f"predictions not found: {a.predictions} (run bench/measure/quality.py first)")
    with gzip.open(bench_file(a.split), "rt") as fh:
        calls = {c["transcript_id"]: c for c in map(json.loads, fh)}
    rows: list[tuple[Any, ...]] = []
    bands: list[tuple[float, bool]] = []
    for line in a.predictions.open():
        p = json.loads(line)
        call = calls[p["transcript_id"]]
        words = sum(len(s["text"].split()) for s in call["segments"])
        if words >= a.min_words:
            rows.append((p["transcript_id"], words, *keys_for(pending_of(call, p), a.fold_below)))
            bands.extend(banded(call, p))
    if not rows:
        raise SystemExit("no call matches")
    print(
        "| calls | words (median) | pending per call | keys before | keys now, R for the folded | "
        "keys now, folded decided too | now / before, median per call |"
    )
    print("|---|---|---|---|---|---|---|")
    for label, part in (("all", rows), ("≥ 8,000 words", [r for r in rows if r[1] >= 8000])):
        if not part:
            continue
        before, now, each = (sum(r[i] for r in part) for i in (2, 3, 4))
        ratio = statistics.median(r[3] / r[2] for r in part)
        print(
            f"| {label} ({len(part)}) | {statistics.median(r[1] for r in part):,.0f} | "
            f"{(before - len(part)) / len(part):.1f} | {before} | {now} ({now / before:.0%}) | "
            f"{each} ({each / before:.0%}) | {ratio:.0%} |"
        )
    print("\n| pending, by confidence | suggestions | worth accepting (in-sample) |\n|---|---|---|")
    edges = [0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 1.01]
    for lo, hi in itertools.pairwise(edges):
        band = [w for c, w in bands if lo <= c < hi]
        if band:
            print(f"| {lo:.2f}–{min(hi, 1):.2f} | {len(band)} | {sum(band) / len(band):.0%} |")


if __name__ == "__main__":
    main()
