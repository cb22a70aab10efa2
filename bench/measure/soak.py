"""The soak: mixed traffic against a real server, its memory sampled; the slope over the last half must be flat."""

from __future__ import annotations

import gzip
import json
import threading
import time
from typing import Any

import httpx

from bench.measure.memory_maps import anon_by_kind, tree_by_process, tree_mb, tree_pids
from bench.measure.served import ACME, auth, fix, stack


def last_half_slope(samples: list[tuple[float, float]]) -> float:
    """Least-squares slope (MB per second) of (seconds, MB) samples over the last half of the run."""
    half = [x for x in samples if x[0] >= samples[-1][0] / 2]
    n = len(half)
    mx, my = sum(t for t, _ in half) / n, sum(r for _, r in half) / n
    return sum((t - mx) * (r - my) for t, r in half) / max(1e-9, sum((t - mx) ** 2 for t, _ in half))


def whole_calls() -> list[dict[str, Any]]:
    """Earnings calls of the bench file as a client sends them (segments and their list), one per call."""
    from bench.common import bench_file

    calls: dict[str, dict[str, Any]] = {}
    with gzip.open(bench_file("earnings21.jsonl.gz"), "rt") as fh:
        for line in fh:
            t = json.loads(line)
            if t["group"] not in calls:
                segments = [{"id": s["id"], "text": s["text"]} for s in t["segments"]]
                calls[t["group"]] = {"segments": segments, "canonical_entities": t["canonical_entities"]}
    return list(calls.values())


def soak(
    server_url: str, minutes: float, clients: int = 20, idle_seconds: float = 60, transcripts: int = 0
) -> dict[str, Any]:
    """Mixed traffic from `clients` clients for `minutes` (every tenth analysis a whole earnings call, each call of the
    bench file in turn), RSS every 10 s; the slope over the last half, then RSS after `idle_seconds` with no traffic.

    `transcripts` > 0: each client analyses again the same that many transcripts in turn (the stores hold as much at
    the end as after the first round), so that what grows with the data kept apart from what grows with the work."""
    calls = whole_calls()
    with stack(server_url) as st:
        st.start()
        assert st.server is not None
        stop, done = threading.Event(), {"analyses": 0, "whole_calls": 0, "fixes": 0, "errors": 0}
        samples: list[tuple[float, float]] = []  # (seconds, RSS MB)
        by_process: list[tuple[float, dict[str, float]]] = []  # (seconds, RSS MB of each process)
        anon: list[tuple[float, float]] = []  # (seconds, anonymous MB): what the kernel cannot drop
        text_ = ["Good morning, this is Reiner Blair with the results.", "Our Cytova unit grew, and Backman too."]

        def traffic(worker: int) -> None:
            n = 0
            with httpx.Client(base_url=st.base, headers=auth(ACME), timeout=60) as c:
                while not stop.is_set():
                    n += 1
                    tid = f"w{worker}-{n % transcripts if transcripts else n}"
                    body = {
                        "transcript_id": tid,
                        "user_id": f"u{n % 20}",
                        "segments": [{"id": str(i), "text": t} for i, t in enumerate(text_)],
                        "canonical_entities": {"persons": ["Rainer Blair"], "orgs": ["Cytiva", "Beckman"]},
                    }
                    if n % 10 == 0:  # a whole call, 1,000 to 9,000 words with its list of names
                        body = {**body, **calls[(worker * 7 + n // 10) % len(calls)]}
                        done["whole_calls"] += 1
                    r = c.post("/v1/reliability/analyze", json=body, timeout=300)
                    done["analyses"] += r.status_code == 200
                    r2 = c.post("/v1/corrections", json=fix(f"u{n % 20}", f"Xyl{n % 300}", tid))
                    done["fixes"] += r2.status_code == 201
                    c.get(f"/v1/users/u{n % 20}/corrections?limit=50")
                    done["errors"] += (r.status_code >= 500) + (r2.status_code >= 500)

        pid = st.server.pid  # the server and the processes under it (its stage process): their sum is its memory
        # warm (the server warms up before it says it is ready), no traffic yet
        before, before_anon, before_pss = tree_mb(pid), tree_mb(pid, "RssAnon"), tree_mb(pid, "Pss")
        kinds_before, procs_before = anon_by_kind(pid), tree_by_process(pid)
        workers = [threading.Thread(target=traffic, args=(w,), daemon=True) for w in range(clients)]
        for w in workers:
            w.start()
        t0 = time.monotonic()
        while time.monotonic() - t0 < minutes * 60:
            samples.append((time.monotonic() - t0, tree_mb(pid)))
            by_process.append((samples[-1][0], tree_by_process(pid)))
            anon.append((time.monotonic() - t0, tree_mb(pid, "RssAnon")))
            time.sleep(10)
        stop.set()
        for w in workers:
            w.join(timeout=300)
        busy_end, busy_anon, busy_pss = tree_mb(pid), tree_mb(pid, "RssAnon"), tree_mb(pid, "Pss")
        kinds_busy, procs_busy = anon_by_kind(pid), tree_by_process(pid)
        transcripts_stored = int(st.sql("SELECT count(*) FROM transcripts")[0][0])
        time.sleep(idle_seconds)  # the server gives its caches back once idle (IDLE_GIVE_BACK_SECONDS)
        idle_end, idle_anon, idle_pss = tree_mb(pid), tree_mb(pid, "RssAnon"), tree_mb(pid, "Pss")
        kinds_idle, procs_idle = anon_by_kind(pid), tree_by_process(pid)
        slope, anon_slope = last_half_slope(samples), last_half_slope(anon)
        return {
            **done,
            "rss_start": samples[0][1],
            "rss_mid": next(r for t, r in samples if t >= samples[-1][0] / 2),
            "rss_end": samples[-1][1],
            "rss_when_traffic_stopped": busy_end,
            f"rss_after_{idle_seconds:.0f}_s_idle": idle_end,
            "rss_before_traffic": before,
            "anon_before_traffic": before_anon,
            "anon_when_traffic_stopped": busy_anon,
            f"anon_after_{idle_seconds:.0f}_s_idle": idle_anon,
            "pss before → stopped → idle": f"{before_pss:.0f} → {busy_pss:.0f} → {idle_pss:.0f}",
            "processes_after_idle": len(tree_pids(pid)),
            "idle_vs_before": idle_end / before - 1,
            "slope_last_half_mb_per_min": slope * 60,
            "anon_slope_last_half_mb_per_min": anon_slope * 60,
            "samples": len(samples),
            "clients": clients,
            "transcripts_per_client": transcripts or "all new",
            "transcripts_stored": transcripts_stored,
            "rss_every_minute": [round(r) for t, r in samples if int(t) % 60 < 10],
            "anon_every_minute": [round(r) for t, r in anon if int(t) % 60 < 10],
            **{
                f"rss of the {name} every minute": [round(p.get(name, 0)) for t, p in by_process if int(t) % 60 < 10]
                for name in procs_before
            },
            **{
                f"rss of the {name}: before → stopped → idle": " → ".join(
                    f"{p.get(name, 0):.0f}" for p in (procs_before, procs_busy, procs_idle)
                )
                for name in procs_before
            },
            **{
                f"anon {kind} (server): before → stopped → idle": " → ".join(
                    f"{k[kind]:.0f}" for k in (kinds_before, kinds_busy, kinds_idle)
                )
                for kind in kinds_before
            },
        }
