"""Cold start: the first concurrent writes after `/readyz` says ready, against warm ones.

Starts `namesake serve` on a fresh data folder (embedded Qdrant; PostgreSQL from DATABASE_URL, else
embedded), waits for `/readyz`, then sends N concurrent manual corrections (POST /v1/corrections,
distinct users) and, once they are answered, N more. Twice: with the warm-up (the default) and
without it (NAMESAKE_WARM_UP=false, the baseline), in the same run.

Usage: python -m bench.measure.coldstart [--writers 50]
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx

KEY = "bench-key"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _fix(i: int, wave: str) -> dict[str, object]:
    text = f"We met Zorblax{i} today about the numbers."
    return {"user_id": f"{wave}-user-{i}", "transcript_id": f"{wave}-t-{i}", "segment_id": "1", "start_char": 7,
            "end_char": 7 + len(f"Zorblax{i}"), "original": f"Zorblax{i}", "final": f"Zorblax {i} Inc",
            "entity_type": "ORG", "segment_text": text}  # fmt: skip


def _wave(base: str, n: int, wave: str) -> tuple[float, float]:
    """Wall time of n concurrent writes, and the slowest one."""
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {KEY}"}, timeout=300) as client:

        def one(i: int) -> float:
            t0 = time.perf_counter()
            r = client.post("/v1/corrections", json=_fix(i, wave))
            r.raise_for_status()
            return time.perf_counter() - t0

        t0 = time.perf_counter()
        with ThreadPoolExecutor(n) as pool:
            each = list(pool.map(one, range(n)))
        return time.perf_counter() - t0, max(each)


@contextmanager
def started_server(argv: list[str], env: dict[str, str], limit: float = 300) -> Iterator[tuple[str, float, int]]:
    """`namesake serve` started with `argv` (its port last): its base URL, the seconds until /readyz said ready, and
    its pid; terminated on the way out."""
    t0 = time.perf_counter()
    server = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{argv[-1]}"
    try:
        while True:
            try:
                if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None or time.perf_counter() - t0 > limit:
                raise SystemExit("the server did not become ready")
            time.sleep(0.1)
        yield base, time.perf_counter() - t0, server.pid
    finally:
        server.terminate()
        server.wait(timeout=60)


def run(warm: bool, writers: int) -> dict[str, float]:
    """One server start: seconds to ready, then the first and the second wave."""
    with tempfile.TemporaryDirectory() as tmp:
        port = _free_port()
        env = os.environ | {"NAMESAKE_DATA_DIR": str(Path(tmp) / "data"), "NAMESAKE_API_KEYS": KEY,
                            "NAMESAKE_WARM_UP": str(warm).lower(), "NAMESAKE_JOBS_ENABLED": "false"}  # fmt: skip
        namesake = str(Path(sys.executable).parent / "namesake")
        with started_server([namesake, "serve", "--port", str(port)], env) as (base, ready, _):
            first, first_max = _wave(base, writers, "cold")
            second, second_max = _wave(base, writers, "warm")
    return {"ready": ready, "first": first, "first_max": first_max, "second": second, "second_max": second_max}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=50)
    args = parser.parse_args()
    rows = [("no warm-up (baseline)", run(False, args.writers)), ("warm-up (default)", run(True, args.writers))]
    print(f"\n{args.writers} concurrent writes right after /readyz, then {args.writers} more")
    print(f"{'start':<24}{'ready s':>9}{'first s':>9}{'second s':>10}{'first/second':>14}{'slowest first s':>17}")
    for name, r in rows:
        print(f"{name:<24}{r['ready']:>9.2f}{r['first']:>9.2f}{r['second']:>10.2f}"
              f"{r['first'] / r['second']:>14.2f}{r['first_max']:>17.2f}")  # fmt: skip
    base, warm = rows[0][1], rows[1][1]
    print(f"first wave with warm-up / without: {warm['first'] / base['first']:.2f}")


if __name__ == "__main__":
    main()
