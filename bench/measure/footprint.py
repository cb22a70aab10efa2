"""Footprint: what a one-file run and a server cost in time and memory, as a user runs them.

Rows: cold one-file `namesake analyze` (a fresh data dir, the caches warm; then again on the data dir that run
made, as a script analysing file after file meets it), `namesake serve` ready (to /readyz),
its resident memory idle after one small analysis, one-file `namesake analyze` forwarded to that server, and 20
clients analysing at once (p50 / p95, and how many were told BUSY). With --baseline-src the same rows for another
source tree (a checkout's `src/`), in the same run: ratios, since the machine is shared.

Usage: python -m bench.measure.footprint [--baseline-src /path/to/checkout/src] [--clients 20]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from bench.measure.coldstart import _free_port, started_server
from bench.measure.memory_maps import tree_mb

ONE = {
    "transcript_id": "one",
    "user_id": "ana",
    "segments": [{"id": "1", "text": "Thanks to Reiner Blair and the Cytova team for the numbers."}],
    "canonical_entities": {"persons": ["Rainer Blair"], "orgs": ["Cytiva"]},
}
# Sentences whose everyday words the language model reads ("teams" or Teams?), different words for every client:
# what the model's shared batches are for (the sentence above reads nothing).
READ = [
    "In region {i} our sales teams worked hard and the teams product grew.",
    "Thanks for joining us today from office {i}, the us market for copilot was strong.",
    "I think that bodes well for azure and the office team in region {i}.",
]
PYTHON = sys.executable


def read_transcript(i: int, k: int) -> dict[str, object]:
    """Client i's k-th transcript that the model reads: its own windows, so nothing is answered from the cache."""
    return {
        "transcript_id": f"read-{i}-{k}",
        "user_id": f"u{i}",
        "segments": [{"id": str(j), "text": t.format(i=100 * k + i)} for j, t in enumerate(READ)],
        "canonical_entities": {"orgs": ["Teams", "US", "Copilot", "Azure", "Office"], "persons": ["Biden"]},
    }


def _env(src: str | None, data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "NAMESAKE_URL", "PYTHONPATH")}
    env["NAMESAKE_DATA_DIR"] = str(data)
    if src:
        env["PYTHONPATH"] = src
    return env


def _cli(env: dict[str, str], *args: str, may_fail: bool = False) -> tuple[float, float, str]:
    """Wall seconds, peak resident MB of the command (its own, from wait4: not the most of every child so far) and
    its stderr; NaN seconds for a command that fails when `may_fail` (a baseline without the feature)."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(
            [PYTHON, "-m", "namesake.cli", *args], env=env, stdout=subprocess.DEVNULL, stderr=err, text=True
        )
        stuck = threading.Timer(900, proc.kill)  # a hung run fails (non-zero) instead of holding the bench
        stuck.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            stuck.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        took = time.perf_counter() - t0
        err.seek(0)
        stderr = err.read()
    if proc.returncode != 0 and may_fail:
        return float("nan"), float("nan"), stderr
    if proc.returncode != 0:
        raise SystemExit(f"namesake {' '.join(args)} failed: {stderr[-800:]}")
    return took, usage.ru_maxrss / 1024, stderr


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def measure(src: str | None, clients: int) -> dict[str, float]:
    """Every row for one source tree, each on a fresh data dir."""
    row: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        one = Path(tmp) / "one.json"
        one.write_text(json.dumps(ONE))
        row["cold_cli_s"], row["cold_cli_peak_mb"], _ = _cli(_env(src, Path(tmp) / "cold"), "analyze", str(one))
        # what a script that analyses file after file pays each time: the data dir made by the run before
        row["again_cli_s"] = sorted(_cli(_env(src, Path(tmp) / "cold"), "analyze", str(one))[0] for _ in range(3))[1]
        data, port = Path(tmp) / "served", _free_port()
        env = _env(src, data)
        argv = [PYTHON, "-m", "namesake.cli", "serve", "--port", str(port)]
        with started_server(argv, env, limit=600) as (base, ready, pid):
            row["serve_ready_s"] = ready
            httpx.post(f"{base}/v1/reliability/analyze", json=ONE, timeout=120).raise_for_status()
            time.sleep(2)
            row["idle_rss_mb"] = tree_mb(pid)  # the server and its stage process
            forwarded = [_cli(env, "analyze", str(one), may_fail=src is not None)[0] for _ in range(3)]
            row["forwarded_cli_s"] = sorted(forwarded)[1]
            row.update(_load(base, clients, lambda i, k: {**ONE, "transcript_id": f"load-{i}-{k}", "user_id": f"u{i}"}))
            row.update({f"read_{k}": v for k, v in _load(base, clients, read_transcript).items()})
    return row


def _load(base: str, clients: int, transcript: Callable[[int, int], dict[str, object]]) -> dict[str, float]:
    """Each client analyses its own transcript at once, three times: latencies and BUSY answers."""

    def one_client(i: int) -> list[tuple[float, int]]:
        out = []
        with httpx.Client(base_url=base, timeout=600) as c:
            for k in range(3):
                t0 = time.perf_counter()
                r = c.post("/v1/reliability/analyze", json=transcript(i, k))
                out.append((time.perf_counter() - t0, r.status_code))
        return out

    with ThreadPoolExecutor(clients) as pool:
        answers = [a for part in pool.map(one_client, range(clients)) for a in part]
    ok = [t for t, status in answers if status == 200]
    return {"load_p50_s": _pct(ok, 0.5), "load_p95_s": _pct(ok, 0.95),
            "load_busy": float(sum(status == 503 for _, status in answers))}  # fmt: skip


ROWS = [
    ("cold one-file `namesake analyze` (no server)", "cold_cli_s", "s", "≤ 3 s"),
    ("  its peak resident memory", "cold_cli_peak_mb", "MB", "≤ 1,200 MB"),
    ("cold one-file `namesake analyze`, on the data dir of a run before (median of 3)", "again_cli_s", "s", "≤ 3 s"),
    ("`namesake serve` ready", "serve_ready_s", "s", "≤ 5 s"),
    ("  idle resident memory (the server and its stage process)", "idle_rss_mb", "MB", "≤ 1,000 MB"),
    ("one-file `namesake analyze`, forwarded to it", "forwarded_cli_s", "s", "≤ 1 s"),
    ("N clients at once: p50", "load_p50_s", "s", ""),
    ("  p95", "load_p95_s", "s", ""),
    ("  answered BUSY", "load_busy", "", ""),
    ("N clients at once, sentences the model reads: p50", "read_load_p50_s", "s", ""),
    ("  p95", "read_load_p95_s", "s", ""),
    ("  answered BUSY", "read_load_busy", "", ""),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline-src", help="another checkout's src/ to measure alongside (the baseline)")
    ap.add_argument("--clients", type=int, default=20)
    args = ap.parse_args()
    now = measure(None, args.clients)
    before = measure(args.baseline_src, args.clients) if args.baseline_src else None
    print(f"| row | {'baseline | ' if before else ''}now | target |")
    print(f"|---|{'---|' if before else ''}---|---|")
    for label, key, unit, target in ROWS:
        cells = ([f"{before[key]:.2f} {unit}"] if before else []) + [f"{now[key]:.2f} {unit}"]
        print(f"| {label.replace('N clients', f'{args.clients} clients')} | {' | '.join(cells)} | {target} |")


if __name__ == "__main__":
    main()
