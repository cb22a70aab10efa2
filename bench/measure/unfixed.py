"""Where the right candidate went: the near and mid misses no held-out suggestion fixes, by what happened to the
candidate that would have.

`reach.py --unfixed` lists the suggestions that touch a miss; this says why none is right, from every candidate
the spotter made and its held-out probability: no candidate fixes it (the spotter's reach), the first trees put the
one that does below the suggest threshold, or another reading took its span (and which: a part of its final inside
it, the same final over other words, another value). Needs the rows, probabilities and predictions of one
`calibrate_reading.py` run:

    python -m bench.fit.calibrate_reading --out bench/out/scratch.json --rows-cache bench/out/rows.pkl \\
        --predictions bench/out/pred --probabilities bench/out/p.pkl
    python -m bench.measure.unfixed --rows bench/out/rows.pkl --probabilities bench/out/p.pkl \\
        --predictions bench/out/pred [--examples 10]
"""

from __future__ import annotations

import argparse
import gzip
import json
import pickle
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from bench.common import bench_file, shared_module, yardstick
from namesake.core.text import compact

SUGGEST = 0.05


def fixes(ys: Any, text: str, gold: dict[str, Any], start: int, end: int, final: str) -> bool:
    """Whether this edit alone makes the miss right (the yardstick's rule)."""
    return bool(ys.entity_ok(gold, *ys.apply(text, [{"start_char": start, "end_char": end, "final": final}])))


def span_of(row: dict[str, Any]) -> tuple[int, int]:
    """A candidate row's character span in its segment."""
    return int(row["span"][2]), int(row["span"][3])


def taken_by(row: dict[str, Any], winner: dict[str, Any]) -> str:
    """How the reading that won the span relates to the one that would have fixed the miss."""
    (ws, we), (bs, be) = winner["span"][2:], row["span"][2:]
    wf, bf = compact(winner["final"]), compact(row["final"])
    what = "same final" if wf == bf else "a part of its final" if wf in bf else "a longer value" if bf in wf else None
    if (ws, we) == (bs, be):
        where = "same words"
    else:
        where = "inside" if bs <= ws and we <= be else "wider" if ws <= bs and be <= we else "crossing"
    return f"lost its span to {what or 'another value'}, {where}"


def touches(gold: dict[str, Any], start: int, end: int) -> bool:
    """Whether an edit of start..end touches the miss."""
    return bool(start < gold["end"] and end > gold["start"])


def classify(stem: str, rows: list[dict[str, Any]], first: Any, kept: set[int], predictions: Path) -> list[tuple]:
    """(band, class, example) for every near or mid miss no held-out suggestion of `stem` fixes."""
    ys, nearness = yardstick(), shared_module("reach").nearness
    by_segment: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        if r["file"] == stem:
            by_segment[r["span"][:2]].append(i)
    suggested: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for line in predictions.open():
        t = json.loads(line)
        for s in t["suggestions"]:
            suggested[(t["transcript_id"], s["segment_id"])].append(s)
    out = []
    with gzip.open(bench_file(f"{stem}.jsonl.gz"), "rt") as fh:
        for t in map(json.loads, fh):
            for seg in t["segments"]:
                key, text = (t["transcript_id"], seg["id"]), seg["text"]
                for g in seg["errors"]:
                    near = nearness(g["hyp_span"], g["ref_span"]) if g.get("kind") != "deletion" else 0.0
                    if near < 0.6:
                        continue
                    edits = [(x["start_char"], x["end_char"], x["final"]) for x in suggested[key]]
                    if any(touches(g, a, b) and fixes(ys, text, g, a, b, f) for a, b, f in edits):
                        continue
                    cands = [i for i in by_segment[key] if touches(g, *rows[i]["span"][2:])]
                    right = [i for i in cands if fixes(ys, text, g, *span_of(rows[i]), rows[i]["final"])]
                    band = "near" if near >= 0.8 else "mid"
                    example = f"{g['hyp_span']!r} -> {g['ref_span']!r}"
                    if not right:
                        out.append((band, "no candidate fixes it", example))
                        continue
                    best = max(right, key=lambda i: first[i])
                    s, e = rows[best]["span"][2:]
                    example += f": {text[s:e]!r} -> {rows[best]['final']!r} {first[best]:.2f}"
                    if first[best] < SUGGEST:
                        out.append((band, "the first trees put it below the suggest threshold", example))
                        continue
                    rivals = [
                        i for i in by_segment[key] if i in kept and rows[i]["span"][2] < e and rows[i]["span"][3] > s
                    ]
                    if best in kept or not rivals:
                        out.append((band, "kept, then below the threshold once read", example))
                        continue
                    w = max(rivals, key=lambda i: first[i])
                    ws, we = rows[w]["span"][2:]
                    example += f", taken by {text[ws:we]!r} -> {rows[w]['final']!r} {first[w]:.2f}"
                    out.append((band, taken_by(rows[best], rows[w]), example))
    return out


def main() -> None:
    """The class table per file and band, with examples."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", default=["earnings21", "librispeech"])
    ap.add_argument("--rows", type=Path, required=True, help="calibrate_reading's --rows-cache")
    ap.add_argument("--probabilities", type=Path, required=True, help="calibrate_reading's --probabilities")
    ap.add_argument("--predictions", type=Path, required=True, help="calibrate_reading's --predictions folder")
    ap.add_argument("--examples", type=int, default=0)
    a = ap.parse_args()
    rows = pickle.loads(a.rows.read_bytes())
    probs = pickle.loads(a.probabilities.read_bytes())
    for stem in a.files:
        found = classify(stem, rows, probs["first"], set(probs["kept"]), a.predictions / f"{stem}.on.jsonl")
        count = Counter((band, cls) for band, cls, _ in found)
        print(f"\n| {stem}: near and mid misses no suggestion fixes | near | mid |\n|---|---|---|")
        for cls in sorted({c for _, c in count}, key=lambda c: -(count["near", c] + count["mid", c])):
            print(f"| {cls} | {count['near', cls]} | {count['mid', cls]} |")
        for cls in sorted({c for _, c in count}) if a.examples else ():
            print(f"\n{cls}:")
            for band, _, example in [f for f in found if f[1] == cls][: a.examples]:
                print(f"  {band}: {example}")


if __name__ == "__main__":
    main()
