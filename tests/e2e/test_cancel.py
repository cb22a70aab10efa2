"""Work that stops when nobody waits: a client that gives up frees its admission place and its CPU."""

from __future__ import annotations

import gzip
import json
import random
import threading
import time
from pathlib import Path

import httpx
import pytest

from namesake.api.app import create_app
from namesake.core.settings import Settings
from tests.conftest import MakeRuntime, tuned
from tests.live import live_server

DEV_CALL = Path(__file__).resolve().parent.parent / "data" / "dev_call.json.gz"


def long_analysis() -> dict[str, object]:
    """The dev call three times over against 2,500 invented names: within the cost budget, seconds of work."""
    with gzip.open(DEV_CALL) as fh:
        call = json.load(fh)
    words = [w.strip(".,?") for s in call["segments"] for w in s["text"].split()]
    pick = random.Random(1).choice
    names = [
        f"{pick(words).capitalize()}{pick(['son', 'ton', 'ley'])} {pick(words).capitalize()}ix" for _ in range(2500)
    ]
    segments = [{**s, "id": f"{r}-{s['id']}"} for r in range(3) for s in call["segments"]]
    return {"transcript_id": "long-1", "user_id": "ana", "segments": segments, "canonical_entities": {"persons": names}}


def _cancelled(base: str) -> float:
    metrics = httpx.get(f"{base}/metrics", timeout=10).text
    return sum(
        float(line.split()[-1]) for line in metrics.splitlines() if line.startswith("namesake_analyses_cancelled_total")
    )


@pytest.mark.slow
@pytest.mark.parametrize("in_child", [True, False], ids=["stage-process", "in-process"])
def test_a_client_that_gives_up_frees_its_place_within_seconds_and_nothing_of_its_analysis_is_saved(
    settings: Settings, make_runtime: MakeRuntime, in_child: bool
) -> None:
    s = tuned(settings, analysis_queue_limit=1, analysis_stage_process=in_child)
    small = {"transcript_id": "small-1", "segments": [{"id": "1", "text": "Thanks to Reiner Blair."}],
             "canonical_entities": {"persons": ["Rainer Blair"]}}  # fmt: skip
    with live_server(create_app(s, make_runtime(s))) as base:
        t0 = time.monotonic()
        assert httpx.post(f"{base}/v1/reliability/analyze", json=small, timeout=60).status_code == 200
        small_seconds = time.monotonic() - t0
        with pytest.raises(httpx.ReadTimeout):  # the client gives up; the analysis would take far longer
            httpx.post(f"{base}/v1/reliability/analyze", json=long_analysis(), timeout=httpx.Timeout(60, read=2))
        gave_up = time.monotonic()
        while _cancelled(base) < 1:  # the analysis notices and stops at its next step
            assert time.monotonic() - gave_up < 5, "the analysis ran on after its client left"
            time.sleep(0.1)
        stopped = time.monotonic() - gave_up
        r = httpx.post(f"{base}/v1/reliability/analyze", json=small, timeout=60)
        assert r.status_code == 200, r.text  # its place is free (ANALYSIS_QUEUE_LIMIT=1)
        listed = httpx.get(f"{base}/v1/transcripts", timeout=10).json()
        assert [t["transcript_id"] for t in listed] == ["small-1"], listed  # nothing of the abandoned one
        assert stopped < 5 and small_seconds < 30


def _gauges(base: str) -> dict[str, float]:
    """The two gauges of analyses in flight, off /metrics."""
    text = httpx.get(f"{base}/metrics", timeout=10).text
    names = ("namesake_analyses_held", "namesake_analyses_waiting_turn")
    return {line.split()[0]: float(line.split()[-1]) for line in text.splitlines() if line.split(" ")[0] in names}


@pytest.mark.slow
def test_an_analysis_waiting_its_turn_runs_after_the_one_running_and_stops_waiting_when_its_client_leaves(
    settings: Settings, make_runtime: MakeRuntime
) -> None:
    s = tuned(settings, analysis_running_limit=1)
    small = {"transcript_id": "small-2", "segments": [{"id": "1", "text": "Thanks to Reiner Blair."}],
             "canonical_entities": {"persons": ["Rainer Blair"]}}  # fmt: skip
    with live_server(create_app(s, make_runtime(s))) as base:
        long_status: list[int] = []
        running = threading.Thread(
            target=lambda: long_status.append(
                httpx.post(f"{base}/v1/reliability/analyze", json=long_analysis(), timeout=300).status_code
            )
        )
        running.start()
        time.sleep(1.0)  # the long one holds the only turn
        seen: list[dict[str, float]] = []

        def look() -> None:
            time.sleep(0.5)
            seen.append(_gauges(base))

        waiter = threading.Thread(target=look)
        waiter.start()  # /metrics read while the small one waits
        with pytest.raises(httpx.ReadTimeout):  # the small one waits its turn; its client gives up meanwhile
            httpx.post(f"{base}/v1/reliability/analyze", json=small, timeout=httpx.Timeout(60, read=1))
        gave_up = time.monotonic()
        waiter.join(10)
        assert seen == [{"namesake_analyses_held": 2.0, "namesake_analyses_waiting_turn": 1.0}]
        while _cancelled(base) < 1:  # it stops waiting, holding no turn
            assert time.monotonic() - gave_up < 5, "the waiting analysis did not notice its client left"
            time.sleep(0.1)
        assert running.is_alive(), "the long analysis ended before the waiter gave up: no wait was tested"
        running.join(300)
        assert long_status == [200]
        listed = httpx.get(f"{base}/v1/transcripts", timeout=10).json()
        assert [t["transcript_id"] for t in listed] == ["long-1"], listed  # nothing of the one that left
        r = httpx.post(f"{base}/v1/reliability/analyze", json=small, timeout=60)
        assert r.status_code == 200, r.text  # the turn was given back
        assert _gauges(base) == {"namesake_analyses_held": 0.0, "namesake_analyses_waiting_turn": 0.0}
