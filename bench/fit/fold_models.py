"""Per-fold scorers: the two sets of trees fitted without each fold's calls, for benches that must not score
a call with a model that saw it (bench/measure/learning_loop.py --fold-models). Written by calibrate_reading.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from bench.fit.calibrate import READ_TREES, TREES, export


def fold_of_groups(x: np.ndarray, y: np.ndarray, groups: np.ndarray, folds: int) -> dict[str, int]:
    """Each call group's fold, as GroupKFold splits these rows (the split the held-out tables use)."""
    from sklearn.model_selection import GroupKFold

    out: dict[str, int] = {}
    for k, (_, test) in enumerate(GroupKFold(folds).split(x, y, groups)):
        out.update({str(g): k for g in set(groups[test].tolist())})
    return out


def write_fold_models(
    folder: Path,
    *,
    first: tuple[np.ndarray, np.ndarray, np.ndarray, list[str]],
    second: tuple[np.ndarray, np.ndarray, np.ndarray, list[str]],
    groups: np.ndarray,
    read: list[int],
    folds: int,
    meta: dict[str, Any],
) -> None:
    """fold-K.scorer.json and fold-K.reading.json fitted on the other folds' calls, and folds.json (group → K).

    `first` is (x, y, weights, features) of every candidate, `second` the same for the candidates read, in
    the order of `read` (indexes into the first).
    """
    from sklearn.ensemble import HistGradientBoostingClassifier

    x, y, w, features = first
    x2, y2, w2, names2 = second
    fold_of = fold_of_groups(x, y, groups, folds)
    row_fold = np.array([fold_of[str(g)] for g in groups])
    read_fold = row_fold[read]
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(folds):
        m1 = HistGradientBoostingClassifier(random_state=0, **TREES)
        m1.fit(x[row_fold != k], y[row_fold != k], sample_weight=w[row_fold != k])
        m2 = HistGradientBoostingClassifier(random_state=0, **READ_TREES)
        m2.fit(x2[read_fold != k], y2[read_fold != k], sample_weight=w2[read_fold != k])
        held = sorted(g for g, f in fold_of.items() if f == k)
        fold_meta = {**meta, "fold": k, "held_out_groups": held}
        (folder / f"fold-{k}.scorer.json").write_text(
            json.dumps(export(m1, features, fold_meta), separators=(",", ":"))
        )
        (folder / f"fold-{k}.reading.json").write_text(json.dumps(export(m2, names2, fold_meta), separators=(",", ":")))
    (folder / "folds.json").write_text(json.dumps({"folds": folds, "fold_of_group": fold_of}, indent=1))
    print(f"wrote {folds} per-fold scorers to {folder}")
