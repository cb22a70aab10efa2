"""Calibrate the scorer: fit the gradient-boosted trees on annotated transcripts, report held-out calls, export.

Every candidate the pipeline produces (after S1 spotting, the S2 gate and the signals) is labelled with the
yardstick's own functions: 1 if applying it alone fixes an annotated error (or a right entity the
yardstick counts broken as written, "Q and A" for Q&A), breaks no right entity, and lowers the
segment's word errors (the yardstick alone would credit "thank you Marcus" → "thank Markus", which eats a word). The
trees are checked by GroupKFold over calls (a call never trains and tests at once: the held-out calls of
the real evaluation are other calls), then refitted on everything and written as JSON for
`namesake.reliability.trees`. Needs the `calibrate` extra (scikit-learn); the service itself never does.

Usage: python bench/calibrate.py [earnings21.jsonl.gz librispeech.jsonl.gz] [--out MODEL.json] [--folds 5]
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from _common import BENCH_DATA, ROOT, bench_file, file_settings, right_entity_changes
from namesake.reliability.canonical import aggregate_payloads
from namesake.reliability.inputs import TranscriptIn, to_segments
from namesake.reliability.pipeline import PipelineInputs, RunStats, candidate_signals
from namesake.reliability.trees import BUNDLED_MODEL
from namesake.settings import Settings

# Signals the model does not learn: absent from the bench data, or applied on top of it by the scorer.
NOT_LEARNED = {"asr", "llm", "memory_bonus", "remembered", "context_free", "extends_right_entity", "contested"}
# A candidate that breaks a right entity costs more than a missed fix: weigh those negatives up.
BREAK_WEIGHT = 3.0
TREES = {"max_iter": 200, "learning_rate": 0.05, "max_leaf_nodes": 15, "min_samples_leaf": 40, "l2_regularization": 1.0}
THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)


def labelled_candidates(path: Path) -> list[dict[str, Any]]:
    """Every scored-to-be candidate of a bench file, with its signals, call group and yardstick label."""
    sys.path.insert(0, str(BENCH_DATA))
    from rapidfuzz.distance import Levenshtein
    from score import apply, entity_ok, words  # the yardstick's own definitions of "fixed", "broken", words

    stem = path.name.split(".")[0]
    # the same per-file settings as bench/quality.py
    overrides = {k.lower(): v for k, v in file_settings(path.name).items()}
    settings = Settings(llm_provider="none", **overrides)
    rows = []
    with gzip.open(path, "rt") as fh:
        for n, line in enumerate(fh, 1):
            raw = json.loads(line)
            t = TranscriptIn.model_validate(raw)
            # what fetch_canonical_entities would return for these lists once indexed (one chunk each)
            dictionary = aggregate_payloads([t.canonical_entities or {}], settings.reliability_rag_canonical_max_items)
            inputs = PipelineInputs(to_segments(t), dictionary, language=t.language)
            gold = {s["id"]: s for s in raw["segments"]}
            for c in candidate_signals(inputs, settings, RunStats()):
                seg = gold[c.segment_id]
                new, edits = apply(
                    seg["text"], [{"start_char": c.start_char, "end_char": c.end_char, "final": c.final}]
                )
                fixes = sum(entity_ok(g, new, edits) for g in seg["errors"])
                repairs, breaks = right_entity_changes(seg, new, edits)
                # the yardstick widens an entity to the edit that touches it: "thank you Marcus" → "thank Markus"
                # counts as a fix, yet deletes a word; a fix must make the words closer to what was said
                ref = words(seg["reference"])
                not_better = Levenshtein.distance(words(new), ref) >= Levenshtein.distance(words(seg["text"]), ref)
                rows.append(
                    {
                        "file": stem,
                        "group": f"{stem}:{raw.get('group', raw['transcript_id'])}",
                        "span": (raw["transcript_id"], c.segment_id, c.start_char, c.end_char),
                        "signals": dict(c.signals),
                        "extends": bool(c.signals.get("extends_right_entity")),
                        "fixes": fixes,
                        "repairs": repairs,
                        "breaks": breaks,
                        "not_better": not_better,
                    }
                )
            print(f"\r{path.name}: {n} transcripts, {len(rows)} candidates", end="", file=sys.stderr)
    print(file=sys.stderr)
    return rows


def outcome(rows: list[dict[str, Any]], p: np.ndarray, auto: float, suggest: float) -> dict[str, float]:
    """What the pipeline would do with these probabilities: best reading per span, then the thresholds."""
    taken: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
    auto_n = helpful = fixed = broken = not_better = pending_fixes = 0
    for i in sorted(range(len(rows)), key=lambda i: -p[i]):
        if p[i] < suggest:
            break
        tid, seg, start, end = rows[i]["span"]
        if any(start < e and end > s for s, e in taken[(tid, seg)]):
            continue
        taken[(tid, seg)].append((start, end))
        if p[i] >= auto:
            auto_n += 1
            helpful += rows[i]["fixes"] > 0
            fixed += rows[i]["fixes"] + rows[i]["repairs"]
            broken += rows[i]["breaks"]
            not_better += rows[i]["not_better"]
        else:
            pending_fixes += rows[i]["fixes"]
    return {
        "auto": auto_n,
        "precision_auto": helpful / auto_n if auto_n else 0.0,
        "net_fixed_auto": fixed - broken,
        "broken_auto": broken,
        "not_better_auto": not_better,
        "oracle_fixes": fixed - broken + pending_fixes,
    }


def export(model: Any, features: list[str], meta: dict[str, Any]) -> dict[str, Any]:
    """The fitted HistGradientBoostingClassifier as flat node arrays (see namesake.reliability.trees)."""
    trees = []
    for (predictor,) in model._predictors:  # binary classification: one tree per boosting iteration
        nodes = predictor.nodes
        trees.append(
            {
                "feature": nodes["feature_idx"].tolist(),
                "threshold": nodes["num_threshold"].tolist(),
                "left": nodes["left"].tolist(),
                "right": nodes["right"].tolist(),
                "leaf": nodes["is_leaf"].astype(int).tolist(),
                "value": nodes["value"].tolist(),
            }
        )
    baseline = float(np.ravel(model._baseline_prediction)[0])
    return {"features": features, "baseline": baseline, "trees": trees, "meta": meta}


def main() -> None:
    """Label, cross-validate by call, refit on all, check the export reproduces sklearn, write the model."""
    try:
        from sklearn.ensemble import HistGradientBoostingClassifier
        from sklearn.model_selection import GroupKFold
    except ImportError:
        sys.exit("bench/calibrate.py needs scikit-learn: pip install -e '.[calibrate]'")
    from namesake.reliability.trees import TreeModel

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", default=["earnings21.jsonl.gz", "librispeech.jsonl.gz"])
    ap.add_argument("--out", type=Path, default=BUNDLED_MODEL)
    ap.add_argument("--folds", type=int, default=5)
    a = ap.parse_args()
    rows = [r for name in a.files for r in labelled_candidates(bench_file(name))]
    features = sorted({k for r in rows for k in r["signals"]} - NOT_LEARNED)
    x = np.array([[r["signals"].get(f, 0.0) for f in features] for r in rows])
    y = np.array([int(r["fixes"] + r["repairs"] > 0 and r["breaks"] == 0 and not r["not_better"]) for r in rows])
    weight = np.array([BREAK_WEIGHT if r["breaks"] else 1.0 for r in rows])
    groups = np.array([r["group"] for r in rows])

    held_out = np.zeros(len(rows))
    for train, test in GroupKFold(a.folds).split(x, y, groups):
        m = HistGradientBoostingClassifier(random_state=0, **TREES).fit(x[train], y[train], sample_weight=weight[train])
        held_out[test] = m.predict_proba(x[test])[:, 1]
    held_out = np.where([r["extends"] for r in rows], np.minimum(held_out, 0.375), held_out)

    print(f"\n### held-out calls ({a.folds}-fold by call group): candidates {len(rows)}, positives {int(y.sum())}\n")
    print("| file | auto ≥ | auto | precision_auto | net fixed auto | broken auto | auto, WER same+ | oracle fixes |")
    print("|---|---|---|---|---|---|---|---|")
    for stem in dict.fromkeys(r["file"] for r in rows):
        idx = [i for i, r in enumerate(rows) if r["file"] == stem]
        sub = [rows[i] for i in idx]
        for thr in THRESHOLDS:
            o = outcome(sub, held_out[idx], thr, 0.1)
            print(
                f"| {stem} | {thr} | {o['auto']} | {o['precision_auto']:.3f} | {o['net_fixed_auto']} | "
                f"{o['broken_auto']} | {o['not_better_auto']} | {o['oracle_fixes']} |"
            )

    model = HistGradientBoostingClassifier(random_state=0, **TREES).fit(x, y, sample_weight=weight)
    meta = {
        "trained_on": a.files,
        "candidates": len(rows),
        "positives": int(y.sum()),
        "label": "applied alone, the candidate fixes an entity, breaks none, and lowers the segment's word errors",
        "params": TREES,
        "break_weight": BREAK_WEIGHT,
        "fitted": dt.date.today().isoformat(),
    }
    data = export(model, features, meta)
    ours = TreeModel.from_json(data).logits([r["signals"] for r in rows[:2000]])
    theirs = model.decision_function(x[:2000])
    if not np.allclose(ours, theirs, atol=1e-6):
        sys.exit(f"exported trees disagree with scikit-learn (max diff {np.abs(ours - theirs).max():.2e})")
    a.out.write_text(json.dumps(data, separators=(",", ":")))
    print(f"\nwrote {a.out.relative_to(ROOT) if a.out.is_relative_to(ROOT) else a.out}: {len(data['trees'])} trees")


if __name__ == "__main__":
    main()
