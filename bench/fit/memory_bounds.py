"""The memory rules' eight bounds, chosen fold by fold: is what the held-out loop reports held out for them too?

Rows: every second-half suggestion of `bench.measure.loop_check_folds --keep DIR` that carries a fix the user taught
exactly (`remembered` = 1, not contested), a list reading of a name the user fixed other words to (`name_confirmed`,
for `CONFIRMED_FLOOR`), or a pair the user refused that its sentence brought back (`refused`, for
`REFUSED_READ_GAIN`: a run with that bound at -inf brings back every one the signals would apply), labelled by the
yardstick's harm rule (applied alone it fixes an entity or brings the words nearer, breaking nothing: right; it breaks
an entity or adds word errors: harmful). The labels do not depend on what the rules decided, so one run's rows weigh
any bounds (but the refused rows: only those of a run with that bound at -inf). For `REFUSED_BETTER_BY`, the rows are
the fresh user's automatic edits of a pair the reviewer refused in these very words (read from each fold's database),
where nothing of the reviewer's stands over them and the model reads the final less likely than the heard words: how
far above the best reading where it was refused each one reads decides it.

Each bound of `reliability/memory_policy.py` is chosen on four folds' rows (the value that maximises right − 3 ×
harmful among what it lets apply, harm weighed as the scorer's fit weighs it; 8 for a refused pair brought back, as
the reading trees weigh it) and read on the fifth. When every fold chooses the shipped value, the loop's figures are
held out for the bounds as they are for the scorer.

Usage: python -m bench.fit.memory_bounds --keep DIR [--keep DIR2 …]
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import judge
from bench.fit.calibrate_reading import READ_WORSE_WEIGHT
from bench.measure.untaught_lost import fold_rows
from namesake.reliability import memory_policy as policy
from namesake.reliability import refusal_policy

HARM_WEIGHT = 3.0  # as the scorer's trees weigh a harmful positive (calibrate.WORSE_WEIGHT)
# A refused pair brought back is a rewrite the language model read, against the user's own word: its harm weighs as
# the reading trees weigh it (calibrate_reading.READ_WORSE_WEIGHT).
BOUND_HARM_WEIGHTS = {"REFUSED_READ_GAIN": READ_WORSE_WEIGHT, "REFUSED_BETTER_BY": READ_WORSE_WEIGHT}

Row = dict[str, Any]


def rows_of(keep: Path) -> list[Row]:
    """Every exactly-taught or confirmed suggestion of a kept loop run, with its fold, what the rules read, and its
    label."""
    out: list[Row] = []
    for d in sorted(keep.glob("fold-*-tmp/loopcheck-*")):
        fold = int(d.parent.name.split("-")[1])
        with gzip.open(d / "second.jsonl.gz", "rt") as fh:
            halves = {t["transcript_id"]: t for t in map(json.loads, fh)}
        for p in map(json.loads, (d / "mem.jsonl").open()):
            segs = {s["id"]: s for s in halves[p["transcript_id"]]["segments"]}
            for s in p["suggestions"]:
                sig = s["signals"]
                if sig.get("contested"):
                    continue
                kind = (
                    "taught" if sig.get("remembered") == 1.0
                    else "confirmed" if sig.get("name_confirmed")
                    else "refused" if sig.get("refused") else None
                )  # fmt: skip
                if kind is None:
                    continue
                fixed, broken, closer = judge(segs[str(s["segment_id"])], s)
                out.append({
                    "fold": fold, "kind": kind, "confidence": s["confidence"],
                    "right": broken == 0 and closer <= 0 and (fixed > 0 or closer < 0),
                    "harm": broken > 0 or closer > 0, "gain": sig.get("lm_gain"),
                    "times": sig.get("remembered_frequency", 1.0), "by_hand": bool(sig.get("remembered_manual")),
                    "everyday": sig.get("remembered_everyday", 0.0), "one_word": len(s["original"].split()) == 1,
                    "context": sig.get("remembered_context") or 0.0, "case_only": bool(sig.get("case_only")),
                    "left_alone": sig.get("remembered_left_alone"),
                })  # fmt: skip
    return out


def refused_rows(keep: Path) -> list[Row]:
    """The fresh user's automatic edits of a pair the reviewer refused in these very words, nothing of the reviewer's
    over them, read less likely than the heard words: each with its gain and the best gain where it was refused (only
    where every rejection of the pair was read), and its label."""
    where: dict[tuple[str, str, str], list[float | None]] = {}
    query = ("SELECT transcript_id, original, final, signals->>'lm_gain' FROM suggestions WHERE status = 'rejected' "
             "AND transcript_id LIKE '%--first-%'")  # fmt: skip
    for tid, original, final, gain in fold_rows(keep, query):
        key = (str(tid).split("--first")[0], *refusal_policy.refusal_key(str(original), str(final)))
        where.setdefault(key, []).append(None if gain is None else float(gain))
    out: list[Row] = []
    for d in sorted(keep.glob("fold-*-tmp/loopcheck-*")):
        fold = int(d.parent.name.split("-")[1])
        with gzip.open(d / "second.jsonl.gz", "rt") as fh:
            halves = {t["transcript_id"]: t for t in map(json.loads, fh)}
        mem = {p["transcript_id"]: p["suggestions"] for p in map(json.loads, (d / "mem.jsonl").open())}
        for p in map(json.loads, (d / "fresh.jsonl").open()):
            tid = p["transcript_id"]
            segs = {g["id"]: g for g in halves[tid]["segments"]}
            for s in p["suggestions"]:
                best_there = refusal_policy.best_read(
                    where.get((tid, *refusal_policy.refusal_key(s["original"], s["final"])), [None])
                )
                gain = s["signals"].get("lm_gain")
                if s["status"] != "auto_applied" or best_there is None or gain is None or gain >= 0:
                    continue
                if any(m["segment_id"] == s["segment_id"] and m["start_char"] < s["end_char"]
                       and s["start_char"] < m["end_char"] for m in mem.get(tid, [])):  # fmt: skip
                    continue
                fixed, broken, closer = judge(segs[str(s["segment_id"])], s)
                out.append({
                    "fold": fold, "kind": "refused here", "gain": gain, "better": gain - best_there,
                    "right": broken == 0 and closer <= 0 and (fixed > 0 or closer < 0),
                    "harm": broken > 0 or closer > 0,
                })  # fmt: skip
    return out


def worth(rows: list[Row], harm_weight: float = HARM_WEIGHT) -> float:
    """Right minus harm_weight × harmful: what letting these rows apply is worth."""
    return float(sum(r["right"] for r in rows) - harm_weight * sum(r["harm"] for r in rows))


def everyday(r: Row) -> bool:
    """An everyday original, or a change of case alone, taught where the words around were not alike."""
    return bool(r["kind"] == "taught" and (r["everyday"] >= policy.EVERYDAY or r["case_only"]) and (
        r["context"] < policy.SAME_CONTEXT))  # fmt: skip


def once(r: Row, bar: str) -> bool:
    """An everyday pair taught once whose bar (memory_policy.once_taught_bar) is `bar`, read by the model, not as
    common as a function word."""
    if not everyday(r):
        return False
    mine = "EVERY_TIME_GAIN" if r["left_alone"] == 0 else "BY_HAND_GAIN" if r["by_hand"] else "FOR_GAIN"
    return (
        r["times"] < 2 and mine == bar and r["gain"] is not None
        and not (r["one_word"] and r["everyday"] >= policy.FUNCTION_GRADE)
    )  # fmt: skip


# Each bound: the rows it governs, whether a row applies at a value, the grid, the shipped value.
BOUNDS: dict[str, tuple[Callable[[Row], bool], Callable[[Row, float], bool], list[float], float]] = {
    "FUNCTION_GRADE": (
        lambda r: everyday(r) and r["one_word"] and r["times"] >= 2
        and (r["gain"] is None or r["gain"] >= policy.AGAINST_GAIN),
        lambda r, v: r["everyday"] < v,
        [float(v) for v in np.arange(4.5, 8.01, 0.25)], policy.FUNCTION_GRADE,
    ),
    "AGAINST_GAIN": (
        lambda r: everyday(r) and r["times"] >= 2 and not (r["one_word"] and r["everyday"] >= policy.FUNCTION_GRADE),
        lambda r, v: r["gain"] is None or r["gain"] >= v,
        [-math.inf] + [float(v) for v in range(-30, 1)], policy.AGAINST_GAIN,
    ),
    "FOR_GAIN": (
        lambda r: once(r, "FOR_GAIN"),
        lambda r, v: r["gain"] >= v,
        [float(v) for v in range(-8, 5)], policy.FOR_GAIN,
    ),
    "BY_HAND_GAIN": (
        lambda r: once(r, "BY_HAND_GAIN"),
        lambda r, v: r["gain"] >= v,
        [float(v) for v in range(-8, 21)] + [math.inf], policy.BY_HAND_GAIN,
    ),
    "EVERY_TIME_GAIN": (
        lambda r: once(r, "EVERY_TIME_GAIN"),
        lambda r, v: r["gain"] >= v,
        [float(v) for v in range(-14, 5)], policy.EVERY_TIME_GAIN,
    ),
    "CONFIRMED_FLOOR": (
        lambda r: r["kind"] == "confirmed",
        lambda r, v: r["confidence"] >= v,
        [float(v) for v in np.arange(0.15, 0.661, 0.05)], policy.CONFIRMED_FLOOR,
    ),
    "REFUSED_READ_GAIN": (
        lambda r: r["kind"] == "refused",
        lambda r, v: r["gain"] is not None and r["gain"] >= v,
        [float(v) for v in range(-4, 21)] + [math.inf], refusal_policy.REFUSED_READ_GAIN,
    ),
    "REFUSED_BETTER_BY": (
        lambda r: r["kind"] == "refused here",
        lambda r, v: r["better"] >= v,
        [float(v) for v in np.arange(0.0, 10.01, 0.5)] + [math.inf], refusal_policy.REFUSED_BETTER_BY,
    ),
}  # fmt: skip


def best(
    rows: list[Row], applies: Callable[[Row, float], bool], grid: list[float], harm_weight: float = HARM_WEIGHT
) -> float:
    """The grid value whose applied rows are worth most (ties: the stricter, the later in the grid for gains)."""
    scores = [(worth([r for r in rows if applies(r, v)], harm_weight), i) for i, v in enumerate(grid)]
    return grid[max(scores)[1]]


def main() -> None:
    """Per bound and fold: the value chosen without the fold, and what it lets apply in the fold."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", type=Path, action="append", required=True, help="a loop_check_folds --keep folder")
    a = ap.parse_args()
    rows = [r for keep in a.keep for r in rows_of(keep) + refused_rows(keep)]
    folds = sorted({r["fold"] for r in rows})
    print(f"{len(rows)} taught, confirmed or refused suggestions in {len(folds)} folds\n")
    heads = " | ".join(f"without fold {k}" for k in folds)
    print(f"| bound | shipped | chosen on all | {heads} | held out: right / harmful applied |")
    print("|---|---|---|" + "---|" * len(folds) + "---|")
    for name, (governs, applies, grid, shipped) in BOUNDS.items():
        mine = [r for r in rows if governs(r)]
        weight = BOUND_HARM_WEIGHTS.get(name, HARM_WEIGHT)
        chosen, right, harm = [], 0, 0
        for k in folds:
            v = best([r for r in mine if r["fold"] != k], applies, grid, weight)
            chosen.append(v)
            held = [r for r in mine if r["fold"] == k and applies(r, v)]
            right, harm = right + sum(r["right"] for r in held), harm + sum(r["harm"] for r in held)
        everywhere = best(mine, applies, grid, weight)
        print(f"| {name} ({len(mine)} rows) | {shipped:g} | {everywhere:g} | " + " | ".join(f"{v:g}" for v in chosen)
              + f" | {right} / {harm} |")  # fmt: skip


if __name__ == "__main__":
    main()
