"""The scorer's learned part: gradient-boosted trees over named signals, evaluated with numpy (no sklearn at run time).

The model file is JSON written by `bench/fit/calibrate.py`: the signal names it reads (a signal absent from a
candidate counts 0), the baseline log-odds, and per tree flat node arrays. A split sends a row left when
its feature is <= the threshold, as scikit-learn's HistGradientBoostingClassifier does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain, repeat
from pathlib import Path
from typing import Any

import numpy as np

from namesake.core import ConfigurationError

BUNDLED_MODEL = Path(__file__).with_name("scorer_model.json")
BUNDLED_READING_MODEL = Path(__file__).with_name("reading_model.json")
NODE_FIELDS = ("feature", "threshold", "left", "right", "leaf", "value")
# A tree of up to this many splits is compiled to a lookup table of 2**splits leaves (64 KiB a tree at most).
MAX_COMPILED_SPLITS = 16
# Rows evaluated at once by the compiled forest: its per-split bytes (splits × rows) stay in cache-sized blocks.
ROW_BLOCK = 1024


@dataclass(frozen=True)
class Tree:
    """One regression tree as parallel arrays indexed by node; node 0 is the root."""

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    leaf: np.ndarray
    value: np.ndarray

    @property
    def splits(self) -> np.ndarray:
        """Indices of the inner nodes, in node order: bit k of a compiled code is the k-th one's outcome."""
        return np.flatnonzero(~self.leaf)

    def leaf_of_code(self, bits: int) -> np.ndarray:
        """For every code of `bits` split outcomes (bit k set: the k-th split sends left), the leaf reached."""
        codes = np.arange(1 << bits)
        position = {int(n): k for k, n in enumerate(self.splits)}
        table = np.zeros(len(codes), dtype=np.int64)
        leaf_index = {int(n): i for i, n in enumerate(np.flatnonzero(self.leaf))}
        stack = [(0, 0, 0)]  # (node, bits fixed on its path, their values)
        while stack:
            node, mask, want = stack.pop()
            if self.leaf[node]:
                table[(codes & mask) == want] = leaf_index[node]
                continue
            bit = 1 << position[node]
            stack.append((int(self.left[node]), mask | bit, want | bit))
            stack.append((int(self.right[node]), mask | bit, want))
        return table

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
class CompiledForest:
    """The trees as one table walk: each distinct split compared once per row, each tree a lookup of its code.

    A row's code in a tree is the outcome of every split of that tree, one bit each; a table maps each
    code to the leaf the row reaches. The sum runs tree by tree in the trees' order, so the log-odds are
    bit-for-bit those of walking the trees one by one.
    """

    split_feature: np.ndarray  # (S,) the feature of each distinct (feature, threshold) split
    split_threshold: np.ndarray  # (S,)
    node_split: np.ndarray  # (bits × trees,) bit-major: the split behind bit k of tree t is at k * trees + t
    leaf_of_code: np.ndarray  # (trees × 2**bits,) flattened: the leaf reached by each code of each tree
    leaf_value: np.ndarray  # (trees × max leaves,) flattened
    bits: int
    max_leaves: int
    _ceilings: dict[frozenset[int], np.ndarray] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, trees: tuple[Tree, ...]) -> CompiledForest | None:
        """Compile the trees, or None when one has more splits than a table can hold."""
        bits = max((len(t.splits) for t in trees), default=0)
        if not trees or bits > MAX_COMPILED_SPLITS:
            return None
        pairs: dict[tuple[int, float], int] = {}
        node_split = np.zeros((bits, len(trees)), dtype=np.int64)
        for i, tree in enumerate(trees):
            for k, n in enumerate(tree.splits):  # unused bits point at split 0: no table entry reads them
                node_split[k, i] = pairs.setdefault((int(tree.feature[n]), float(tree.threshold[n])), len(pairs))
        split_feature = np.array([f for f, _ in pairs], dtype=np.int64)
        split_threshold = np.array([t for _, t in pairs], dtype=np.float64)
        max_leaves = max(int(t.leaf.sum()) for t in trees)
        leaf_value = np.zeros((len(trees), max_leaves))
        for i, tree in enumerate(trees):
            values = tree.value[tree.leaf]
            leaf_value[i, : len(values)] = values
        table = np.stack([t.leaf_of_code(bits) for t in trees]).astype(np.intp)
        table += (np.arange(len(trees)) * max_leaves)[:, None]  # index straight into the flat leaf values
        return cls(split_feature, split_threshold, node_split.ravel(), table.ravel(), leaf_value.ravel(), bits,
                   max_leaves)  # fmt: skip

    def ceiling_table(self, free: frozenset[int]) -> np.ndarray:
        """For each code of each tree, the largest leaf value a row reaches whatever the `free` features hold.

        A split on a free feature may go either way: its bit ranges over both values, one bit at a time
        (the maximum over a hypercube, dimension by dimension). Rounded up to float32: a ceiling, never below.
        """
        if free not in self._ceilings:
            trees = len(self.leaf_of_code) >> self.bits
            values = self.leaf_value.take(self.leaf_of_code).reshape(trees, 1 << self.bits)
            free_bit = np.isin(self.split_feature[self.node_split], list(free)).reshape(self.bits, trees)
            codes = np.arange(1 << self.bits)
            for k in range(self.bits):
                rows = np.flatnonzero(free_bit[k])
                if rows.size:
                    values[rows] = np.maximum(values[rows], values[rows][:, codes ^ (1 << k)])
            self._ceilings[free] = np.nextafter(values.astype(np.float32), np.float32(np.inf)).ravel()
        return self._ceilings[free]

    def ceilings(self, x: np.ndarray, baseline: float, free: frozenset[int]) -> np.ndarray:
        """An upper bound of each row's log-odds over every value of the `free` features (their columns unread)."""
        table = self.ceiling_table(free)
        trees = len(self.leaf_of_code) >> self.bits
        offsets = (np.arange(trees, dtype=np.intp) << self.bits)[:, None]
        out = np.empty(len(x))
        for start in range(0, len(x), ROW_BLOCK):
            code = self._codes(x[start : start + ROW_BLOCK], trees)
            out[start : start + code.shape[1]] = table.take(code + offsets).sum(axis=0, dtype=np.float64)
        return out + baseline + 1e-6 * trees  # float64 sums of float32 ceilings: a margin for their rounding

    def _codes(self, rows: np.ndarray, trees: int) -> np.ndarray:
        """(trees, len(rows)) codes: bit k set when the row goes left at the k-th split of the tree."""
        block = np.ascontiguousarray(rows.T)  # feature-major: a split reads one row
        goes_left = block[self.split_feature] <= self.split_threshold[:, None]
        bit = goes_left[self.node_split].reshape(self.bits, trees, block.shape[1])
        code = np.zeros((trees, block.shape[1]), dtype=np.uint16)  # bits <= MAX_COMPILED_SPLITS
        for k in range(self.bits):
            code |= bit[k].astype(code.dtype) << k
        return code

    def sums(self, x: np.ndarray, baseline: float) -> np.ndarray:
        """baseline + Σ trees' leaf values for each row of x, in blocks of ROW_BLOCK rows."""
        out = np.empty(len(x))
        trees = len(self.leaf_of_code) >> self.bits
        offsets = (np.arange(trees, dtype=np.intp) << self.bits)[:, None]
        for start in range(0, len(x), ROW_BLOCK):
            code = self._codes(x[start : start + ROW_BLOCK], trees)
            terms = np.empty((trees + 1, code.shape[1]))
            terms[0] = baseline
            terms[1:] = self.leaf_value.take(self.leaf_of_code.take(code + offsets))
            out[start : start + code.shape[1]] = np.add.reduce(terms, axis=0)  # row by row: the trees' order
        return out


@dataclass(frozen=True)
class TreeModel:
    """Baseline log-odds plus the sum of the trees' leaf values."""

    features: tuple[str, ...]
    baseline: float
    trees: tuple[Tree, ...]
    meta: dict[str, Any]
    compiled: CompiledForest | None = field(default=None, compare=False, repr=False)

    def matrix(self, signals: list[dict[str, float]]) -> np.ndarray:
        """The model's input: one row per candidate, one column per named signal (absent = 0)."""
        cells = chain.from_iterable(map(s.get, self.features, repeat(0.0)) for s in signals)
        n = len(signals) * len(self.features)
        return np.fromiter(cells, dtype=np.float64, count=n).reshape(len(signals), len(self.features))

    def logits(self, signals: list[dict[str, float]]) -> np.ndarray:
        """Log-odds that each candidate fixes an entity without breaking one."""
        x = self.matrix(signals)
        if len(x) == 0:
            return np.zeros(0)
        if self.compiled is not None:
            return self.compiled.sums(x, self.baseline)
        out = np.full(len(x), self.baseline)
        for tree in self.trees:
            out += tree.predict(x)
        return out

    def ceiling_logits(self, signals: list[dict[str, float]], free: frozenset[str]) -> np.ndarray | None:
        """An upper bound of each candidate's log-odds whatever the `free` signals turn out to be; None when the
        trees are not compiled (no bound: nothing may be skipped on its strength)."""
        if self.compiled is None:
            return None
        columns = frozenset(self.features.index(f) for f in free if f in self.features)
        x = self.matrix(signals)
        return self.compiled.ceilings(x, self.baseline, columns) if len(x) else np.zeros(0)

    @classmethod
    def from_json(cls, data: dict[str, Any], field: str = "RELIABILITY_SCORER_MODEL") -> TreeModel:
        """Parse and check a model file's content (`field`: the setting that names the file, for the error)."""
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
            compiled = CompiledForest.of(tuple(trees))
            return cls(features, float(data["baseline"]), tuple(trees), dict(data.get("meta", {})), compiled)
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigurationError(f"{field}: not a model file: {exc}", field=field) from exc


@lru_cache(maxsize=4)
def load_model(path: Path = BUNDLED_MODEL, field: str = "RELIABILITY_SCORER_MODEL") -> TreeModel:
    """Read a model file once per process; an unreadable one is an error naming `field`, its setting."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigurationError(f"{field} {path}: {exc}", field=field) from exc
    return TreeModel.from_json(data, field)
