"""How far the spotter reaches before any scoring: per nearness band, the misheard entities some candidate touches and
some candidate makes right, and the unreached ones by class.

The scorer can only show what the spotter found: this is the ceiling of `reach.py`'s "fixed" on held-out
predictions (`python -m bench.measure.splits --reach`), and it takes a minute, not an hour. The bands are the shared
`reach.py`'s (the better of spelling and metaphone similarity); the classes are read off the heard and reference
words ("acronym", "word count differs", ...) to say where a miss sits.

    python -m bench.measure.reach [earnings21.jsonl.gz librispeech.jsonl.gz] [--examples 10] [--unfixed 10]
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import multiprocessing
import os
import re
from collections import Counter, defaultdict
from typing import Any

from bench.common import BENCH_DATA, bench_file, yardstick

BANDS = (("near (>= 0.8)", 0.8), ("mid (0.6-0.8)", 0.6), ("far (0.4-0.6)", 0.4), ("unrelated (< 0.4)", -1.0))


def shared_reach() -> Any:
    """The shared reach.py, loaded by path: its nearness is the bands' definition."""
    spec = importlib.util.spec_from_file_location("reach", BENCH_DATA / "reach.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def miss_class(heard: str, ref: str) -> str:
    """Where a miss sits, read off its words."""
    h, r = re.sub(r"\W", "", heard.lower()), re.sub(r"\W", "", ref.lower())
    if re.search(r"\d", ref):
        return "digits in the name"
    if h == r:
        return "same letters, other form"
    if h.rstrip("s") == r.rstrip("s"):
        return "plural or possessive"
    if ref.isupper() and len(r) <= 5:
        return "acronym"
    if len(heard.split()) != len(ref.split()):
        return "word count differs"
    if len(h) <= 4:
        return "short word"
    return "other"


def unfixed_class(gold: dict[str, Any], touching: list[dict[str, Any]], norm: Any) -> str:
    """Why no touching candidate makes a reached miss right, read off their spans and finals."""
    ref = norm(gold["ref_span"])
    right = [c for c in touching if norm(c["final"]) == ref]
    if right:
        short = any(c["start_char"] > gold["start"] or c["end_char"] < gold["end"] for c in right)
        return "right value, span too short" if short else "right value, span too long"
    parts = [c for c in touching if norm(c["final"]) and norm(c["final"]) in ref]
    if len({(c["start_char"], c["end_char"]) for c in parts}) >= 2:
        return "name in pieces"
    if parts:
        return "part of the value"
    return "wrong value"


def _transcript(line: str) -> list[dict[str, Any]]:
    """Every misheard entity of one bench-file transcript, with whether candidates reach and fix it (a worker)."""
    from namesake.analysis.inputs import TranscriptIn, to_segments
    from namesake.core.settings import Settings
    from namesake.reliability.canonical import aggregate_payloads
    from namesake.reliability.pipeline import PipelineInputs, RunStats, candidate_signals

    ys, nearness = yardstick(), shared_reach().nearness
    raw = json.loads(line)
    t = TranscriptIn.model_validate(raw)
    inputs = PipelineInputs(to_segments(t), aggregate_payloads([t.canonical_entities or {}]), language=t.language)
    by_segment = defaultdict(list)
    for c in candidate_signals(inputs, Settings(llm_provider="none"), RunStats()):
        by_segment[c.segment_id].append(c)
    out = []
    for seg in raw["segments"]:
        for g in seg["errors"]:
            if g.get("kind") == "deletion":
                continue
            touching = [c for c in by_segment[seg["id"]] if c.start_char < g["end"] and c.end_char > g["start"]]
            as_edit = [{"start_char": c.start_char, "end_char": c.end_char, "final": c.final} for c in touching]
            fixed = any(ys.entity_ok(g, *ys.apply(seg["text"], [e])) for e in as_edit)
            out.append(
                {
                    "near": nearness(g["hyp_span"], g["ref_span"]),
                    "reached": bool(touching),
                    "fixed": fixed,
                    "why": "" if fixed or not touching else unfixed_class(g, as_edit, ys.norm),
                    "tried": sorted({f"{c.original!r} -> {c.final!r}" for c in touching})[:4],
                    "example": f"{g['hyp_span']!r} -> {g['ref_span']!r} ({raw['transcript_id']})",
                    "class": miss_class(g["hyp_span"], g["ref_span"]),
                }
            )
    return out


def band_of(near: float) -> str:
    """The reach.py band of a nearness."""
    return next(name for name, lo in BANDS if near >= lo)


def main() -> None:
    """Spot every transcript of each file (in worker processes), then the band table and the unreached by class."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", default=["earnings21.jsonl.gz", "librispeech.jsonl.gz"])
    ap.add_argument("--examples", type=int, default=0, help="unreached near and mid misses to list per class")
    ap.add_argument("--unfixed", type=int, default=0, help="reached but unfixed near and mid misses to list per class")
    a = ap.parse_args()
    print("| file | band | misheard | reached by a candidate | fixed by a candidate |\n|---|---|---|---|---|")
    unreached: dict[str, list[dict[str, Any]]] = {}
    unfixed: dict[str, list[dict[str, Any]]] = {}
    for name in a.files:
        with gzip.open(bench_file(name), "rt") as fh:
            lines = [line for line in fh if line.strip()]
        with multiprocessing.get_context("spawn").Pool(os.cpu_count() or 1) as pool:
            misses = [m for ms in pool.imap(_transcript, lines, chunksize=2) for m in ms]
        stem = name.split(".")[0]
        count: Counter[tuple[str, str]] = Counter()
        for m in misses:
            band = band_of(m["near"])
            count[band, "all"] += 1
            count[band, "reached"] += m["reached"]
            count[band, "fixed"] += m["fixed"]
        for band, _ in BANDS:
            n = max(1, count[band, "all"])
            print(f"| {stem} | {band} | {count[band, 'all']} | {count[band, 'reached'] / n:.1%} |"
                  f" {count[band, 'fixed'] / n:.1%} |")  # fmt: skip
        unreached[stem] = [m for m in misses if m["near"] >= 0.6 and not m["reached"]]
        unfixed[stem] = [m for m in misses if m["near"] >= 0.6 and m["why"]]
    for stem, misses in unreached.items():
        classes = Counter(m["class"] for m in misses)
        print(f"\n{stem}: {len(misses)} near and mid misses no candidate touches, by class")
        for cls, n in classes.most_common():
            shown = [m["example"] for m in misses if m["class"] == cls][: a.examples]
            print(f"  {cls}: {n}" + "".join(f"\n    {x}" for x in shown))
    for stem, misses in unfixed.items():
        classes = Counter(m["why"] for m in misses)
        print(f"\n{stem}: {len(misses)} near and mid misses a candidate touches and none makes right, by class")
        for cls, n in classes.most_common():
            shown = [m for m in misses if m["why"] == cls][: a.unfixed]
            print(f"  {cls}: {n}" + "".join(f"\n    {m['example']}: {'; '.join(m['tried'])}" for m in shown))


if __name__ == "__main__":
    main()
