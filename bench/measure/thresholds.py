"""Memory cut-offs on the default encoder: cosine of labelled (heard, alike) pairs against the dedupe and
boost thresholds, so that "the same correction" and "a near correction" are measured, not borrowed.

Usage: python -m bench.measure.thresholds [--pairs tests/data/memory_pairs.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from bench.common import ROOT
from namesake.adapters.embeddings import build_embedder
from namesake.core.settings import Settings


def cosines(pairs: list[list[str]], settings: Settings) -> list[float]:
    """Cosine of each pair's two texts under the configured embedder (vectors are L2-normalised)."""
    embedder = build_embedder(settings)
    left, right = embedder.embed([a for a, _ in pairs]), embedder.embed([b for _, b in pairs])
    return [float(a @ b) for a, b in zip(left, right, strict=True)]


def main() -> None:
    """Print each class's distribution and how many pairs each cut-off lets through."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=Path, default=ROOT / "tests" / "data" / "memory_pairs.json")
    a = ap.parse_args()
    data = json.loads(a.pairs.read_text())
    s = Settings()
    dedupe, boost = s.reliability_corrections_memory_dedupe_threshold, s.reliability_corrections_memory_boost_threshold
    print(f"\n### cosine on {build_embedder(s).name}: dedupe at {dedupe}, boost at {boost}\n")
    print("| pairs | n | min | median | max | ≥ boost | ≥ dedupe |\n|---|---|---|---|---|---|---|")
    for label in ("same", "near", "different"):
        c = cosines(data[label], s)
        over_boost, over_dedupe = sum(x >= boost for x in c), sum(x >= dedupe for x in c)
        print(f"| {label} | {len(c)} | {min(c):.3f} | {float(np.median(c)):.3f} | {max(c):.3f} "
              f"| {over_boost} | {over_dedupe} |")  # fmt: skip
    print()
    for label, says in (("near", "the lowest (missed by the boost)"), ("different", "the highest")):
        c = cosines(data[label], s)
        worst = sorted(zip(c, data[label], strict=True), reverse=label == "different")[:3]
        print(f"{label}, {says}: " + "; ".join(f"{x:.3f} {p[0]!r}/{p[1]!r}" for x, p in worst))


if __name__ == "__main__":
    main()
