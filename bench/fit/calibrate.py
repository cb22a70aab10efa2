"""Calibrate the scorer: fit the gradient-boosted trees on annotated transcripts, report held-out calls, export.

Every candidate the pipeline produces (after S1 spotting, the S2 gate and the signals) is labelled with the
yardstick's own functions: 1 if applying it alone fixes an annotated error (or a right entity the
yardstick counts broken as written, "Q and A" for Q&A), breaks no right entity, and lowers the
segment's word errors (the yardstick alone would credit "thank you Marcus" → "thank Markus", which eats a word). The
trees are checked by GroupKFold over calls (a call never trains and tests at once: the held-out calls of
the real evaluation are other calls), then refitted on everything and written as JSON for
`namesake.reliability.trees`. Needs the `calibrate` extra (scikit-learn); the service itself never does.

Usage: python -m bench.fit.calibrate [earnings21.jsonl.gz librispeech.jsonl.gz] [--out MODEL.json] [--folds 5]
       [--rows-cache F]  (the same pickle as calibrate_reading's: label once, fit both)
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import multiprocessing
import os
import pickle
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import ROOT, bench_file, right_entity_changes, score
from bench.common import yardstick as load_yardstick
from bench.fit.as_served import bench_lists, grown, merged, with_originals
from namesake.analysis.inputs import TranscriptIn, to_segments
from namesake.core.settings import Settings
from namesake.core.text import compact
from namesake.reliability.canonical import aggregate_payloads
from namesake.reliability.edge_forms import EDGE_FORM, edge_pieces, free_pieces
from namesake.reliability.pipeline import PipelineInputs, RunStats, candidate_signals
from namesake.reliability.trees import BUNDLED_MODEL

# Signals the model does not learn: absent from the bench data, or applied on top of it by the scorer.
NOT_LEARNED = {
    "asr",
    "llm",
    "memory_bonus",
    "memory_score",
    "remembered",
    "remembered_context",
    "remembered_frequency",
    "context_free",
}
# A candidate that breaks a right entity costs more than a missed fix: weigh those negatives up.
BREAK_WEIGHT = 3.0
# A candidate that leaves the words farther from the reference (the rest of harm_auto) also weighs more
# than one that changes nothing the yardstick sees: harm is what a user feels.
WORSE_WEIGHT = 3.0
TREES = {"max_iter": 200, "learning_rate": 0.05, "max_leaf_nodes": 15, "min_samples_leaf": 40, "l2_regularization": 1.0}
# The second (reading) trees: the same, on every row, without early stopping's random tenth held back for
# validation. Their fit no longer depends on the seed (held-out Earnings-21 harm at the read bar of 0.62 moved
# 2.77–3.20% with it; without: 2.94%, the seeds' mean), and the shipped trees learn from every read candidate.
READ_TREES = {**TREES, "early_stopping": False}
THRESHOLDS = (0.4, 0.5, 0.6)
HELD_OUT_COLUMNS = ("EER_before", "EER_auto", "EER_oracle", "EER_rel_reduction_auto", "EER_rel_reduction_oracle",
                    "precision_auto_ref", "harm_auto", "FER_before", "FER_auto", "FER_oracle", "WERF_before",
                    "WERF_auto")  # fmt: skip
# The default auto-apply threshold (RELIABILITY_AUTO_APPLY_THRESHOLD), and the floor this script's tables show from
# (the pipeline shows from RELIABILITY_SUGGEST_THRESHOLD, SHOWN below).
DEFAULT_AUTO, SUGGEST = 0.5, 0.1
# What the pipeline shows (RELIABILITY_SUGGEST_THRESHOLD's default): a decision's band, with DEFAULT_AUTO.
SHOWN = Settings.model_fields["reliability_suggest_threshold"].default
# The context signals (namesake.reliability.context), left out together for the ablation.
CONTEXT_SIGNALS = ("ctx_", "final_elsewhere", "original_elsewhere", "left_is_function")


def _label_transcript(job: tuple[str, str]) -> list[dict[str, Any]]:
    """The candidates of one transcript (a bench-file line), each with the yardstick's verdicts; runs in a worker."""
    stem, line = job
    from rapidfuzz.distance import Levenshtein

    ys = load_yardstick()  # the yardstick's own definitions of "fixed", "broken", words
    apply, entity_ok, form_words = ys.apply, ys.entity_ok, ys.form_words

    settings = Settings(llm_provider="none")  # the defaults: no per-file settings
    raw = json.loads(line)
    t = TranscriptIn.model_validate(raw)
    # what fetch_canonical_entities would return for these lists once indexed
    inputs = PipelineInputs(to_segments(t), aggregate_payloads([t.canonical_entities or {}]), language=t.language)
    gold = {s["id"]: s for s in raw["segments"]}
    forms: dict[str, tuple[bool, list[str], int]] = {}
    rows = []
    for c in candidate_signals(inputs, settings, RunStats()):
        seg = gold[c.segment_id]
        if c.segment_id not in forms:
            cased = any(ch.isupper() for ch in seg["reference"])
            ref_form = form_words(seg["reference"], cased)
            forms[c.segment_id] = (cased, ref_form, Levenshtein.distance(form_words(seg["text"], cased), ref_form))
        cased, ref_form, before = forms[c.segment_id]
        new, edits = apply(seg["text"], [{"start_char": c.start_char, "end_char": c.end_char, "final": c.final}])
        repairs, breaks = right_entity_changes(seg, new, edits)
        rows.append(
            {
                "file": stem,
                "transcript_id": raw["transcript_id"],
                "group": f"{stem}:{raw.get('group', raw['transcript_id'])}",
                "span": (raw["transcript_id"], c.segment_id, c.start_char, c.end_char),
                "final": c.final,
                "signals": dict(c.signals),
                # the words it leaves as heard that its entry writes otherwise (reliability/edge_forms.py)
                "edge": edge_pieces(seg["text"], c.start_char, c.end_char, c.final, c.match_final),
                "match_final": c.match_final,  # the whole value a trimmed reading matched (rivals.trimmed_nearer)
                "extends": c.extends_right_entity,
                "rewrites": c.rewrites_canonical,  # a reviewer decides it (types.REVIEWER_DECIDES)
                "repeats": c.repeats_neighbour,
                "letters": c.word_for_letters,
                "fixes": sum(entity_ok(g, new, edits) for g in seg["errors"]),
                "repairs": repairs,
                "breaks": breaks,
                # the yardstick's harm rule: words as written (spacing, accents, case) farther from the reference
                "closer": Levenshtein.distance(form_words(new, cased), ref_form) - before,
            }
        )
    return rows


def labelled_candidates(path: Path) -> list[dict[str, Any]]:
    """Every scored-to-be candidate of a bench file, with its signals, call group and yardstick label."""
    stem = path.name.split(".")[0]
    with gzip.open(path, "rt") as fh:
        jobs = [(stem, line) for line in fh if line.strip()]
    rows: list[dict[str, Any]] = []
    with multiprocessing.get_context("spawn").Pool(os.cpu_count() or 1) as pool:
        for n, found in enumerate(pool.imap(_label_transcript, jobs, chunksize=2), 1):
            rows.extend(found)
            print(f"\r{path.name}: {n}/{len(jobs)} transcripts, {len(rows)} candidates", end="", file=sys.stderr)
    print(file=sys.stderr)
    return rows


def harm_weight(r: dict[str, Any], worse: float = WORSE_WEIGHT) -> float:
    """How much a candidate counts in the fit: the harmful ones (a break, or words farther from the reference) more."""
    if r["breaks"]:
        return max(BREAK_WEIGHT, worse)
    return worse if r["closer"] > 0 else 1.0


def label(r: dict[str, Any]) -> int:
    """1 when applied alone it brings the words as written nearer the reference and breaks no right entity."""
    return int(r["breaks"] == 0 and r["closer"] < 0)


def best_per_span(rows: list[dict[str, Any]], p: np.ndarray, floor: float, *, proposable: bool = True) -> list[int]:
    """The rows the pipeline would keep, most probable first: the best reading of each span at or above `floor`.

    A reading that repeats its neighbour is dropped whatever its probability, as score.dispose does; one that makes
    an everyday word letters too, unless `proposable` is False (what the second trees learn from: they keep it).
    """
    taken: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
    kept = []
    order = said_as_listed(rows, p)
    for i in sorted(range(len(rows)), key=lambda i: -order[i]):
        if p[i] < floor:
            continue
        tid, seg, start, end = rows[i]["span"]
        never = rows[i].get("repeats") or (proposable and rows[i].get("letters"))
        if never or any(start < e and end > s for s, e in taken[(tid, seg)]):
            continue
        taken[(tid, seg)].append((start, end))
        kept.append(i)
    return kept


def said_as_listed(rows: list[dict[str, Any]], p: np.ndarray) -> np.ndarray:
    """As `scorer._said_as_listed`: a name said as the list says it ("yeti dot com" → YETI.com) wins the span over the
    readings of that name inside it when their decision is the same. Returns the order to keep rows in: the
    probabilities, such a row lifted just above the best of those readings in its band (applied, shown, neither)."""

    def band(v: float) -> int:
        return 2 if v >= DEFAULT_AUTO else 1 if v >= SHOWN else 0

    spoken = [i for i, r in enumerate(rows) if r["signals"].get("spoken_form")]
    segments = {tuple(rows[i]["span"][:2]) for i in spoken}
    by_segment: dict[tuple[str, str], list[int]] = defaultdict(list)
    for j, r in enumerate(rows):
        if tuple(r["span"][:2]) in segments:
            by_segment[tuple(r["span"][:2])].append(j)
    order = p.copy()
    for i in spoken:
        tid, seg, start, end = rows[i]["span"]
        whole = compact(rows[i]["final"])
        same = [
            p[j] for j in by_segment[(tid, seg)]
            if j != i and start <= rows[j]["span"][2] and rows[j]["span"][3] <= end
            and compact(rows[j]["final"]) in whole and band(p[j]) == band(p[i])
        ]  # fmt: skip
        if same and max(same) >= p[i]:
            order[i] = max(same) + 1e-9
    return order


def reviewer_decides(row: dict[str, Any]) -> bool:
    """Never applied on its own, whatever its probability (types.REVIEWER_DECIDES)."""
    return bool(row["extends"] or row.get("rewrites"))


def predictions(
    rows: list[dict[str, Any]],
    p: np.ndarray,
    auto: float,
    suggest: float,
    edge_forms: bool = True,
    lists: dict[str, tuple[dict[str, str], list[str]]] | None = None,
) -> dict[str, list[dict]]:
    """What the pipeline would answer with these probabilities: best reading per span, then the thresholds, then
    (as `edge_forms.edge_form_fixes`) the edge words of each auto-applied rewrite in its entry's form, then (as
    `pieces.merged_pieces`, given each transcript's segment texts and list values) pending pieces of one value made
    one suggestion, then (as `whole.made_whole`) half fixes grown whole."""
    out: dict[str, list[dict]] = defaultdict(list)
    kept = best_per_span(rows, p, suggest)
    taken: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)  # segment ids repeat across calls
    for i in kept:
        tid, seg, start, end = rows[i]["span"]
        taken[(tid, seg)].append((start, end))
    for i in kept:
        tid, seg, start, end = rows[i]["span"]
        status = "auto_applied" if p[i] >= auto and not reviewer_decides(rows[i]) else "pending"
        out[tid].append({"segment_id": seg, "start_char": start, "end_char": end, "final": rows[i]["final"],
                         "status": status, "confidence": float(p[i]), "signals": rows[i]["signals"]})  # fmt: skip
        if not edge_forms or status != "auto_applied":
            continue
        for a, b, written in free_pieces(rows[i].get("edge", []), taken[(tid, seg)]):
            out[tid].append({"segment_id": seg, "start_char": a, "end_char": b, "final": written,
                             "status": status, "confidence": float(p[i]), "signals": {EDGE_FORM: 1.0}})  # fmt: skip
    for tid, sugs in out.items():
        if lists is not None:
            texts, values = lists[tid]
            out[tid] = grown(merged(sugs, texts, values), texts, values)
    return out


def yardstick(
    split: Path,
    rows: list[dict[str, Any]],
    p: np.ndarray,
    auto: float,
    suggest: float,
    keep: Path | None = None,
    edge_forms: bool = True,
) -> dict[str, Any]:
    """The yardstick's TOTAL row for the predictions these probabilities make (kept in `keep` when given)."""
    preds = predictions(rows, p, auto, suggest, edge_forms, bench_lists(split))
    if keep is not None:  # kept as the API answers: with the words each suggestion replaces (reach.py lists them)
        with_originals(split, preds)
    path = keep or Path(tempfile.mkstemp(suffix=".jsonl")[1])
    with path.open("w") as fh:
        for tid in dict.fromkeys(r["transcript_id"] for r in rows):
            fh.write(json.dumps({"transcript_id": tid, "seconds": 0, "suggestions": preds.get(tid, [])}) + "\n")
    _, table = score(split, path)
    return table["TOTAL"]


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
        sys.exit("bench/fit/calibrate.py needs scikit-learn: pip install -e '.[calibrate]'")
    from namesake.reliability.trees import TreeModel

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", default=["earnings21.jsonl.gz", "librispeech.jsonl.gz"])
    ap.add_argument("--out", type=Path, default=BUNDLED_MODEL)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--thresholds", type=float, nargs="*", default=list(THRESHOLDS), help="auto-apply thresholds")
    ap.add_argument("--predictions", type=Path, help="keep the held-out predictions files in this folder")
    ap.add_argument("--worse-weight", type=float, default=WORSE_WEIGHT, help="weight of a harmful negative")
    ap.add_argument("--rows-cache", type=Path, help="the labelled candidates between runs (calibrate_reading's pickle)")
    a = ap.parse_args()
    if a.rows_cache and a.rows_cache.exists():
        rows = pickle.loads(a.rows_cache.read_bytes())
    else:
        rows = [r for name in a.files for r in labelled_candidates(bench_file(name))]
        if a.rows_cache:
            a.rows_cache.write_bytes(pickle.dumps(rows))
    features = sorted({k for r in rows for k in r["signals"]} - NOT_LEARNED)
    x = np.array([[r["signals"].get(f, 0.0) for f in features] for r in rows])
    y = np.array([label(r) for r in rows])
    weight = np.array([harm_weight(r, a.worse_weight) for r in rows])
    groups = np.array([r["group"] for r in rows])

    def cross_validated(cols: list[int]) -> np.ndarray:
        """Held-out probabilities: each call scored by trees that never saw it."""
        p = np.zeros(len(rows))
        for train, test in GroupKFold(a.folds).split(x, y, groups):
            m = HistGradientBoostingClassifier(random_state=0, **TREES)
            m.fit(x[train][:, cols], y[train], sample_weight=weight[train])
            p[test] = m.predict_proba(x[test][:, cols])[:, 1]
        return p

    everything = list(range(len(features)))
    held_out = cross_validated(everything)
    no_context = cross_validated([i for i, f in enumerate(features) if not f.startswith(CONTEXT_SIGNALS)])
    form_only = np.array([bool(r["signals"].get("form_only")) for r in rows])
    variants = [
        ("all signals", held_out, a.thresholds),
        ("without context signals", no_context, [DEFAULT_AUTO]),
        ("without form fixes", np.where(form_only, 0.0, held_out), [DEFAULT_AUTO]),
    ]
    print(f"\n### held-out calls ({a.folds}-fold by call group): candidates {len(rows)}, positives {int(y.sum())}\n")
    cols = HELD_OUT_COLUMNS
    print("| file | variant | auto ≥ | " + " | ".join(cols) + " |")
    print("|---|---|---|" + "---|" * len(cols))
    for name in a.files:
        stem = name.split(".")[0]
        idx = [i for i, r in enumerate(rows) if r["file"] == stem]
        sub = [rows[i] for i in idx]
        for variant, probs, thresholds in variants:
            for thr in thresholds:
                keep = None
                if a.predictions:
                    a.predictions.mkdir(parents=True, exist_ok=True)
                    keep = a.predictions / f"{stem}.{variant.replace(' ', '-')}.{thr}.jsonl"
                row = yardstick(bench_file(name), sub, probs[idx], thr, SUGGEST, keep)
                cells = " | ".join("-" if row.get(c) is None else f"{row[c]:.4f}" for c in cols)
                print(f"| {stem} | {variant} | {thr} | {cells} |", flush=True)

    model = HistGradientBoostingClassifier(random_state=0, **TREES).fit(x, y, sample_weight=weight)
    meta = {
        "trained_on": a.files,
        "candidates": len(rows),
        "positives": int(y.sum()),
        "label": "applied alone, the candidate brings the words as written nearer the reference and breaks no entity",
        "params": TREES,
        "break_weight": BREAK_WEIGHT,
        "worse_weight": a.worse_weight,
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
