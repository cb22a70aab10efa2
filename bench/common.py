"""Helpers shared by the benchmarks: where the bench data is, running commands, reading score tables."""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH_DATA = Path(os.environ.get("NAMESAKE_BENCH_DATA", ROOT.parent / "shared" / "bench-data"))


@functools.cache
def shared_module(name: str) -> Any:
    """A script beside the bench data (`score.py`, `loop_check.py`), loaded by path: the team's own definitions."""
    spec = importlib.util.spec_from_file_location(name, BENCH_DATA / f"{name}.py")
    if spec is None or spec.loader is None or not (BENCH_DATA / f"{name}.py").exists():
        sys.exit(f"{name}.py was not found beside the bench data: {BENCH_DATA} (set NAMESAKE_BENCH_DATA)")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def yardstick() -> Any:
    """The shared yardstick (`score.py` beside the bench data): its definitions of fixed, broken."""
    return shared_module("score")


def bench_file(name: str) -> Path:
    """A file of the shared benchmark data (NAMESAKE_BENCH_DATA overrides its folder)."""
    path = BENCH_DATA / name
    if not path.exists():
        sys.exit(f"benchmark data not found: {path} (set NAMESAKE_BENCH_DATA)")
    return path


def right_entity_changes(seg: dict[str, Any], new: str, edits: list[Any]) -> tuple[int, int]:
    """(repaired, broken) right entities of a segment after an edit, by the yardstick's own entity_ok.

    A right entity the yardstick counts broken as written ("Q and A" for Q&A) is repaired when the
    edit makes it match, and never counted broken again.
    """
    entity_ok = yardstick().entity_ok

    right = seg["correct"] + seg["format_diffs"]
    before = [entity_ok(g, seg["text"], []) for g in right]
    after = [entity_ok(g, new, edits) for g in right]
    repaired = sum(a and not b for a, b in zip(after, before, strict=True))
    broken = sum(b and not a for a, b in zip(after, before, strict=True))
    return repaired, broken


def fresh_env(**extra: str) -> dict[str, str]:
    """Environment for a namesake run with its own empty data dir (embedded stores unless DATABASE_URL is set)."""
    env = dict(os.environ)
    env["NAMESAKE_DATA_DIR"] = tempfile.mkdtemp(prefix="namesake-bench-")
    env.update(extra)
    return env


def run_to_file(cmd: list[str], out: Path, env: dict[str, str] | None = None) -> None:
    """Run cmd with stdout to out; stderr (progress) passes through; fail loudly."""
    with out.open("w") as fh:
        subprocess.run(cmd, stdout=fh, env=env, check=True)


def score(split: Path, predictions: Path) -> tuple[str, dict[str, dict[str, float]]]:
    """The yardstick's table and its JSON rows for one predictions file."""
    scorer = str(BENCH_DATA / "score.py")
    table = subprocess.run(
        [sys.executable, scorer, str(split), str(predictions)], capture_output=True, text=True, check=True
    )
    rows = subprocess.run(
        [sys.executable, scorer, str(split), str(predictions), "--json"], capture_output=True, text=True, check=True
    )
    return table.stdout, json.loads(rows.stdout)


def judge(seg: dict[str, Any], s: dict[str, Any]) -> tuple[int, int, int]:
    """(entities fixed, right entities broken, change of word errors as written) if it alone were applied."""
    from rapidfuzz.distance import Levenshtein

    ys = yardstick()
    new, edits = ys.apply(seg["text"], [s])
    subs = [g for g in seg["errors"] if g.get("kind") != "deletion"]
    repaired, broken = right_entity_changes(seg, new, edits)
    cased = any(ch.isupper() for ch in seg["reference"])
    ref = ys.form_words(seg["reference"], cased)
    closer = Levenshtein.distance(ys.form_words(new, cased), ref) - Levenshtein.distance(
        ys.form_words(seg["text"], cased), ref
    )
    return sum(ys.entity_ok(g, new, edits) for g in subs) + repaired, broken, closer


def worth_accepting(seg: dict[str, Any], s: dict[str, Any]) -> bool:
    """The harm rule's reviewer: accept what fixes an entity or brings the words nearer, breaking nothing."""
    fixed, broken, closer = judge(seg, s)
    return broken == 0 and closer <= 0 and (fixed > 0 or closer < 0)


def bench_segments(split: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """Every segment of a bench file (text, reference, annotations), by (transcript id, segment id)."""
    import gzip

    segs: dict[tuple[str, str], dict[str, Any]] = {}
    with gzip.open(split, "rt") as fh:
        for line in fh:
            t = json.loads(line)
            for seg in t["segments"]:
                segs[(t["transcript_id"], seg["id"])] = seg
    return segs


def review_queue(split: Path, predictions: Path) -> tuple[float, float]:
    """(pending suggestions per transcript, share of them a reviewer following the harm rule would accept)."""
    segs = bench_segments(split)
    calls = pending = accepted = 0
    with predictions.open() as fh:
        for line in fh:
            p = json.loads(line)
            calls += 1
            for s in p["suggestions"]:
                if s["status"] == "pending":
                    pending += 1
                    accepted += worth_accepting(segs[(p["transcript_id"], s["segment_id"])], s)
    return pending / max(calls, 1), accepted / max(pending, 1)
