"""The model's shared batches: every caller gets its own rows' results, a failed batch fails only its callers."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import pytest

from namesake.language_model.batching import LineBatcher


def doubled(rows: Sequence[int], lines: list[list[int]]) -> np.ndarray:
    """A stand-in model: row r reads (r, 2r), only the rows on a line."""
    out = np.zeros((len(rows), 2))
    for line in lines:
        for i in line:
            out[i] = (rows[i], 2 * rows[i])
    return out


def test_a_caller_alone_gets_its_rows_in_order_and_no_lines_is_no_read() -> None:
    batcher: LineBatcher[int] = LineBatcher(doubled, per_batch=2)
    got = batcher.read([5, 6, 7], [[2, 0], [1]])
    assert got.tolist() == [[5, 10], [6, 12], [7, 14]]
    assert batcher.read([], []).shape == (0, 2) and batcher.batches == 1


def test_concurrent_callers_share_batches_and_each_gets_its_own_rows() -> None:
    gate = threading.Event()
    sizes: list[int] = []

    def slow(rows: Sequence[int], lines: list[list[int]]) -> np.ndarray:
        sizes.append(len(lines))
        gate.wait(5)  # the first batch waits until every caller has queued its lines
        return doubled(rows, lines)

    batcher: LineBatcher[int] = LineBatcher(slow, per_batch=8)
    results: dict[int, np.ndarray] = {}

    def caller(k: int) -> None:
        rows = [100 * k + j for j in range(4)]
        results[k] = batcher.read(rows, [[0, 1], [2], [3]])

    threads = [threading.Thread(target=caller, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    while sum(sizes) + len(batcher._waiting) < 4 * 3:  # every line in the first batch or waiting
        threading.Event().wait(0.01)
    gate.set()
    for t in threads:
        t.join(10)
    assert all(results[k][:, 0].tolist() == [100 * k + j for j in range(4)] for k in range(4))
    assert max(sizes) > 3 and batcher.shared_batches >= 1  # lines of several callers in one batch


def test_a_failed_batch_fails_its_callers_and_the_model_reads_on() -> None:
    calls = {"n": 0}

    def flaky(rows: Sequence[int], lines: list[list[int]]) -> np.ndarray:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("inference failed")
        return doubled(rows, lines)

    batcher: LineBatcher[int] = LineBatcher(flaky, per_batch=1)
    with pytest.raises(RuntimeError, match="inference failed"):
        batcher.read([1, 2], [[0], [1]])
    assert calls["n"] == 1 and not batcher._waiting  # its other line is not read
    assert batcher.read([3], [[0]]).tolist() == [[3, 6]]
