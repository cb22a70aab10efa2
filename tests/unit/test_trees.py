"""The scorer's tree evaluator: hand-built trees, a malformed file, and the bundled model."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from namesake.core.errors import ConfigurationError
from namesake.core.settings import Settings
from namesake.reliability.score import Scorer, confidence
from namesake.reliability.trees import (
    BUNDLED_MODEL,
    BUNDLED_READING_MODEL,
    MAX_COMPILED_SPLITS,
    ROW_BLOCK,
    TreeModel,
    load_model,
)

# edit <= 0.8 → -1.0; else commonness <= 0.5 → +2.0, else → 0.0; second tree: a single leaf (+0.5)
MODEL = {
    "features": ["edit", "commonness"],
    "baseline": -0.25,
    "trees": [
        {
            "feature": [0, 0, 1, 0, 0],
            "threshold": [0.8, 0, 0.5, 0, 0],
            "left": [1, 0, 3, 0, 0],
            "right": [2, 0, 4, 0, 0],
            "leaf": [0, 1, 0, 1, 1],
            "value": [0, -1.0, 0, 2.0, 0.0],
        },
        {"feature": [0], "threshold": [0], "left": [0], "right": [0], "leaf": [1], "value": [0.5]},
    ],
}


def test_trees_route_each_row_to_its_leaf_and_absent_signals_count_zero() -> None:
    model = TreeModel.from_json(MODEL)
    logits = model.logits([{"edit": 0.8}, {"edit": 0.9, "commonness": 0.2}, {"edit": 0.9, "commonness": 0.9}, {}])
    assert logits.tolist() == pytest.approx([-0.75, 2.25, 0.25, -0.75])


def test_a_malformed_model_file_is_a_configuration_error(tmp_path: Path) -> None:
    broken = dict(MODEL, trees=[dict(MODEL["trees"][0], left=[7, 0, 3, 0, 0])])
    with pytest.raises(ConfigurationError, match="RELIABILITY_SCORER_MODEL"):
        TreeModel.from_json(broken)
    path = tmp_path / "model.json"
    path.write_text("{not json")
    with pytest.raises(ConfigurationError, match="RELIABILITY_SCORER_MODEL"):
        load_model(path)
    # each model file's error names its own setting
    with pytest.raises(ConfigurationError, match=r"^RELIABILITY_READING_MODEL .*model\.json"):
        Scorer.from_settings(Settings(reliability_reading_model=path))


@pytest.mark.parametrize(
    ("meta", "setting", "named"),
    [
        ({"window_words": [6, 2]}, {}, "RELIABILITY_LANGUAGE_MODEL_LEFT_WORDS"),
        ({"fit_from": 0.3}, {}, "RELIABILITY_READ_FROM 0.2"),
        ({"fit_from": 0.3}, {"reliability_read_from": 0.25}, "RELIABILITY_READ_FROM 0.25"),
    ],
)
def test_a_reading_model_fitted_for_other_windows_or_a_higher_floor_is_refused(
    tmp_path: Path, meta: dict[str, object], setting: dict[str, object], named: str
) -> None:
    path = tmp_path / "reading.json"
    path.write_text(json.dumps(dict(MODEL, meta=meta)))
    with pytest.raises(ConfigurationError, match=named):
        Scorer.from_settings(Settings(reliability_reading_model=path, **setting))  # type: ignore[arg-type]
    fitting = Settings(
        reliability_reading_model=path,
        reliability_read_from=0.3,
        reliability_language_model_left_words=6,
        reliability_language_model_right_words=2,
    )
    assert Scorer.from_settings(fitting).reading is not None  # the settings it was fitted for
    unread = Settings(reliability_reading_model=path, reliability_language_model="none")
    assert Scorer.from_settings(unread).reading is not None  # the language model off: nothing is read with it


def test_settings_choose_the_model_file_or_the_logistic(tmp_path: Path) -> None:
    path = tmp_path / "model.json"
    path.write_text(json.dumps(MODEL))
    w = Scorer.from_settings(Settings(reliability_scorer_model=path))
    assert confidence({"edit": 0.9, "commonness": 0.2}, w) == pytest.approx(1 / (1 + math.exp(-2.25)), abs=1e-4)
    logistic = Scorer.from_settings(Settings(reliability_scorer="logistic"))
    assert logistic.model is None and 0.0 < confidence({"edit": 0.9}, logistic) < 1.0


def test_the_bundled_model_reads_signals_the_pipeline_writes() -> None:
    model = load_model(BUNDLED_MODEL)
    assert len(model.trees) > 10 and {"edit", "commonness", "phonetic", "frequency"} <= set(model.features)
    assert not {"asr", "llm", "memory_bonus", "remembered"} & set(model.features)  # applied on top, never learned


def test_the_bundled_reading_model_was_fitted_on_what_the_default_settings_read() -> None:
    # its gains mean what they meant in fitting only if the language model reads as many words on each side
    meta = load_model(BUNDLED_READING_MODEL).meta
    s = Settings()
    assert meta["window_words"] == [s.reliability_language_model_left_words, s.reliability_language_model_right_words]
    # and the pipeline reads no candidate below those it learnt from (RELIABILITY_READ_FROM)
    assert s.reliability_read_from >= meta["fit_from"]


def _walked(model: TreeModel, x: np.ndarray) -> np.ndarray:
    """The reference: every tree walked node by node, summed in order."""
    out = np.full(len(x), model.baseline)
    for tree in model.trees:
        out += tree.predict(x)
    return out


def test_the_compiled_forest_gives_the_walked_trees_log_odds_bit_for_bit() -> None:
    model = load_model(BUNDLED_MODEL)
    assert model.compiled is not None
    rng = np.random.default_rng(7)
    # values on and either side of the split thresholds, more rows than one block
    x = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0, 2.0], size=(ROW_BLOCK * 2 + 17, len(model.features)))
    thresholds = model.compiled.split_threshold
    x[:50, :] = rng.choice(thresholds, size=(50, len(model.features)))
    signals = [dict(zip(model.features, row.tolist(), strict=True)) for row in x]
    assert np.array_equal(model.logits(signals), _walked(model, x))


def test_a_tree_too_deep_for_a_table_is_walked_instead() -> None:
    splits = MAX_COMPILED_SPLITS + 1  # a chain: node k splits on edit <= k/100, its right child goes on
    nodes = 2 * splits + 1
    tree = {"feature": [0] * nodes, "threshold": [0.0] * nodes, "left": [0] * nodes, "right": [0] * nodes,
            "leaf": [1] * nodes, "value": [0.0] * nodes}  # fmt: skip
    for k in range(splits):
        node = 2 * k
        tree["threshold"][node], tree["leaf"][node] = k / 100, 0
        tree["left"][node], tree["right"][node] = node + 1, node + 2
        tree["value"][node + 1] = float(k)
    tree["value"][nodes - 1] = 99.0
    model = TreeModel.from_json({"features": ["edit"], "baseline": 0.0, "trees": [tree]})
    assert model.compiled is None
    assert model.logits([{"edit": 0.0}, {"edit": 0.035}, {"edit": 1.0}]).tolist() == [0.0, 4.0, 99.0]


def test_the_ceiling_is_never_below_the_log_odds_whatever_the_free_signals_hold() -> None:
    model = load_model(BUNDLED_MODEL)
    free = frozenset({"ctx_gain", "ctx_original", "final_elsewhere", "original_elsewhere", "left_is_function"})
    rng = np.random.default_rng(11)
    known = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0, 2.0], size=(300, len(model.features)))
    signals = [dict(zip(model.features, row.tolist(), strict=True)) for row in known]
    ceiling = model.ceiling_logits(signals, free)
    assert ceiling is not None
    for _ in range(20):  # whatever the context signals turn out to be, the log-odds stay under the ceiling
        filled = [{**s, **{f: float(rng.choice([-9.0, -2.0, 0.0, 0.5, 1.0, 3.0])) for f in free}} for s in signals]
        assert np.all(model.logits(filled) <= ceiling)
    assert np.all(model.ceiling_logits(signals, frozenset()) >= model.logits(signals))  # nothing free: a hair above
    assert np.max(model.ceiling_logits(signals, frozenset()) - model.logits(signals)) < 1e-3
