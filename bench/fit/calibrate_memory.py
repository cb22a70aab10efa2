"""Memory policy: learn when a remembered fix may apply by itself, from the learning loop's review sessions.

Rows: every second-half suggestion of `bench/measure/learning_loop.py --fold-models …` that the user's memory matched
(signal `remembered` > 0, not contested, and not one the pipeline never applies: a taught fix of a list
spelling, a rewrite around a right entity). Label: the yardstick's harm rule (applied alone, it fixes an entity
or brings the words nearer the reference, and breaks nothing). Features: memory_model.policy_features —
how near the taught original, how often taught, how everyday the original, how alike the context, a case
change, what the other signals say (the evidence), the language model's gain, the vector memory's score.

Compared on held-out calls (GroupKFold by call): the hand rules (the statuses as the loop produced them)
against the learned policy at several auto-apply bars, each re-scored with the yardstick on the second
halves, with repeated mistakes fixed automatically / suggested. Writes the policy fitted on every row.

Usage: python -m bench.fit.calibrate_memory [--loop-out bench/out] [--bars 0.5 0.6 0.7] [--out FILE] [--drop F ...]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import judge, score
from bench.fit.calibrate import export
from bench.measure.learning_loop import repeated
from namesake.domain.types import REVIEWER_DECIDES
from namesake.reliability.memory_model import BUNDLED_MEMORY_MODEL, may_apply_away, policy_features

# Shallow and strongly regularised: a few thousand rows from a few hundred calls.
TREES = {"max_iter": 150, "learning_rate": 0.05, "max_leaf_nodes": 7, "min_samples_leaf": 30, "l2_regularization": 1.0}


def load(folder: Path) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The with-memory predictions (with the pairs taught) and the second halves, by transcript id."""
    preds = [json.loads(line) for line in (folder / "learning_with_memory.jsonl").open()]
    halves = {t["transcript_id"]: t for t in map(json.loads, (folder / "learning_second_half.jsonl").open())}
    return preds, halves


def rows_of(preds: list[dict[str, Any]], halves: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per memory-matched suggestion: where it is, its features, its label, its call group."""
    out = []
    for p_i, p in enumerate(preds):
        t = halves[p["transcript_id"]]
        segs = {s["id"]: s for s in t["segments"]}
        for s_i, s in enumerate(p["suggestions"]):
            sig = s.get("signals") or {}
            if sig.get("remembered", 0.0) <= 0 or sig.get("contested"):
                continue
            if any(sig.get(flag) for flag in REVIEWER_DECIDES):
                continue  # never applied whatever the policy says (score.dispose's caps): they stay as run
            evidence = max(0.0, min(1.0, s["confidence"] - sig.get("memory_bonus", 0.0)))
            fixed, broken, closer = judge(segs[s["segment_id"]], s)
            good = broken == 0 and closer <= 0 and (fixed > 0 or closer < 0)
            out.append({"at": (p_i, s_i), "x": policy_features(sig, evidence), "y": int(good),
                        "group": str(t["group"]), "one_off": bool(sig.get("remembered_one_off")),
                        "covers_auto": sig.get("covers_reading") == 2.0})  # fmt: skip
    return out


def restatus(preds: list[dict[str, Any]], rows: list[dict[str, Any]], p: np.ndarray, bar: float) -> list[dict]:
    """The predictions with each memory-matched suggestion applied by itself when p ≥ bar, else pending."""
    out = [{**q, "suggestions": [dict(s) for s in q["suggestions"]]} for q in preds]
    for r, prob in zip(rows, p, strict=True):
        p_i, s_i = r["at"]
        learned = prob >= bar and may_apply_away(r["x"])
        auto = (learned or r["covers_auto"]) and not r["one_off"]  # as memory_policy.memory_bounds
        out[p_i]["suggestions"][s_i]["status"] = "auto_applied" if auto else "pending"
    return out


def measure(preds: list[dict[str, Any]], halves: dict[str, dict[str, Any]], folder: Path) -> dict[str, float]:
    """The yardstick's totals on the second halves, and the repeated mistakes fixed automatically / suggested."""
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as fh:
        fh.writelines(json.dumps({k: v for k, v in q.items() if k != "taught"}) + "\n" for q in preds)
    _, data = score(folder / "learning_second_half.jsonl", Path(fh.name))
    rep = {"repeated": 0, "fixed_auto": 0, "suggested": 0}
    for q in preds:
        t = halves[q["transcript_id"]]
        for k, v in repeated(t, t["segments"], {tuple(x) for x in q.get("taught", [])}, q).items():
            rep[k] += v
    n = max(1, rep["repeated"])
    total = data["TOTAL"]
    return {"fixed_auto": rep["fixed_auto"] / n, "suggested": rep["suggested"] / n, "EER_auto": total["EER_auto"],
            "harm_auto": total["harm_auto"] or 0.0, "precision": total["precision_auto_ref"] or 0.0}  # fmt: skip


def main() -> None:
    """Held-out comparison, then the policy fitted on every row."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import GroupKFold

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loop-out", type=Path, default=Path("bench/out"))
    ap.add_argument("--bars", type=float, nargs="*", default=[0.5, 0.6, 0.7])
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--out", type=Path, default=BUNDLED_MEMORY_MODEL)
    ap.add_argument("--drop", nargs="*", default=[], help="features left out (an ablation: what they add)")
    a = ap.parse_args()
    preds, halves = load(a.loop_out)
    rows = rows_of(preds, halves)
    if not rows:
        sys.exit("no memory-matched suggestion in the loop's output: run bench/measure/learning_loop.py first")
    names = sorted(set(rows[0]["x"]) - set(a.drop))
    x = np.array([[r["x"][n] for n in names] for r in rows])
    y = np.array([r["y"] for r in rows])
    groups = np.array([r["group"] for r in rows])
    p = np.zeros(len(rows))
    for train, test in GroupKFold(a.folds).split(x, y, groups):
        m = HistGradientBoostingClassifier(random_state=0, **TREES).fit(x[train], y[train])
        p[test] = m.predict_proba(x[test])[:, 1]
    hand = np.array([preds[r["at"][0]]["suggestions"][r["at"][1]]["status"] == "auto_applied" for r in rows])
    right = y[hand].mean() if hand.any() else 0.0
    print(f"\n{len(rows)} memory-matched suggestions in {len(set(groups))} calls, {y.mean():.1%} worth applying; "
          f"hand rules apply {hand.mean():.1%} of them, {right:.1%} rightly\n")  # fmt: skip
    print("| policy (held-out calls) | fixed automatically | suggested | EER_auto | harm_auto | precision_auto_ref |")
    print("|---|---|---|---|---|---|")
    for label, variant in [("hand rules (as run)", preds), *[(f"learned, auto ≥ {b}", restatus(preds, rows, p, b))
                                                              for b in a.bars]]:  # fmt: skip
        r = measure(variant, halves, a.loop_out)
        print(f"| {label} | {r['fixed_auto']:.1%} | {r['suggested']:.1%} | {r['EER_auto']:.4f} | "
              f"{r['harm_auto']:.4f} | {r['precision']:.4f} |", flush=True)  # fmt: skip
    fresh = a.loop_out / "learning_without_memory.jsonl"
    if fresh.exists():
        _, data = score(a.loop_out / "learning_second_half.jsonl", fresh)
        print(f"| fresh user (no memory) | - | - | {data['TOTAL']['EER_auto']:.4f} | "
              f"{data['TOTAL']['harm_auto'] or 0:.4f} | {data['TOTAL']['precision_auto_ref'] or 0:.4f} |")  # fmt: skip
    model = HistGradientBoostingClassifier(random_state=0, **TREES).fit(x, y)
    meta = {"rows": len(rows), "positives": int(y.sum()), "params": TREES, "fitted": dt.date.today().isoformat(),
            "label": "applied alone, the remembered fix brings the words nearer and breaks nothing"}  # fmt: skip
    a.out.write_text(json.dumps(export(model, names, meta), separators=(",", ":")))
    print(f"\nwrote {a.out}: {len(names)} features, {len(rows)} rows")


if __name__ == "__main__":
    main()
