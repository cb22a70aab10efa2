"""The scorer's learned part: gradient-boosted trees over named signals, evaluated with numpy (no sklearn at run time).

The model file is JSON written by `bench/calibrate.py`: the signal names it reads (a signal absent from a
candidate counts 0), the baseline log-odds, and per tree flat node arrays. A split sends a row left when
its feature is <= the threshold, as scikit-learn's HistGradientBoostingClassifier does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from namesake.errors import ConfigurationError

BUNDLED_MODEL = Path(__file__).with_name("scorer_model.json")
NODE_FIELDS = ("feature", "threshold", "left", "right", "leaf", "value")


@dataclass(frozen=True)
class Tree:
    """One regression tree as parallel arrays indexed by node; node 0 is the root."""

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    leaf: np.ndarray
    value: np.ndarray

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Leaf value reached by each row of x (one step per depth level, all rows at once)."""
        node = np.zeros(len(x), dtype=np.int64)
        rows = np.arange(len(x))
        active = ~self.leaf[node]
        while active.any():
            n = node[active]
            go_left = x[rows[active], self.feature[n]] <= self.threshold[n]
            node[active] = np.where(go_left, self.left[n], self.right[n])
            active = ~self.leaf[node]
        return self.value[node]


@dataclass(frozen=True)
class TreeModel:
    """Baseline log-odds plus the sum of the trees' leaf values."""

    features: tuple[str, ...]
    baseline: float
    trees: tuple[Tree, ...]
    meta: dict[str, Any]

    def matrix(self, signals: list[dict[str, float]]) -> np.ndarray:
        """The model's input: one row per candidate, one column per named signal (absent = 0)."""
        return np.array([[s.get(f, 0.0) for f in self.features] for s in signals], dtype=np.float64).reshape(
            len(signals), len(self.features)
        )

    def logits(self, signals: list[dict[str, float]]) -> np.ndarray:
        """Log-odds that each candidate fixes an entity without breaking one."""
        x = self.matrix(signals)
        if len(x) == 0:
            return np.zeros(0)
        # the same change recurs across a transcript: each distinct row goes down the trees once
        rows, back = np.unique(x, axis=0, return_inverse=True)
        out = np.full(len(rows), self.baseline)
        for tree in self.trees:
            out += tree.predict(rows)
        return out[back.reshape(-1)]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TreeModel:
        """Parse and check a model file's content."""
        try:
            features = tuple(str(f) for f in data["features"])
            trees = []
            for t in data["trees"]:
                arrays = {k: np.asarray(t[k]) for k in NODE_FIELDS}
                tree = Tree(
                    feature=arrays["feature"].astype(np.int64),
                    threshold=arrays["threshold"].astype(np.float64),
                    left=arrays["left"].astype(np.int64),
                    right=arrays["right"].astype(np.int64),
                    leaf=arrays["leaf"].astype(bool),
                    value=arrays["value"].astype(np.float64),
                )
                inner = ~tree.leaf
                if not (
                    len({len(a) for a in arrays.values()}) == 1
                    and np.all((tree.feature[inner] >= 0) & (tree.feature[inner] < len(features)))
                    and np.all((tree.left[inner] > 0) & (tree.left[inner] < len(tree.leaf)))
                    and np.all((tree.right[inner] > 0) & (tree.right[inner] < len(tree.leaf)))
                ):
                    raise ValueError("inconsistent node arrays")
                trees.append(tree)
            return cls(features, float(data["baseline"]), tuple(trees), dict(data.get("meta", {})))
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigurationError(f"scorer model: {exc}", field="RELIABILITY_SCORER_MODEL") from exc


@lru_cache(maxsize=4)
def load_model(path: Path = BUNDLED_MODEL) -> TreeModel:
    """Read a model file once per process."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigurationError(f"scorer model {path}: {exc}", field="RELIABILITY_SCORER_MODEL") from exc
    return TreeModel.from_json(data)
