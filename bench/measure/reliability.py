"""Reliability: faults, races, isolation and a soak, against a real `namesake serve` over HTTP.

- fault: paced manual corrections from 8 writers while PostgreSQL backends are terminated every
  second and the API is killed with SIGKILL mid-run (then restarted; --restart-postgres also restarts
  the machine's PostgreSQL for a few seconds). Then reconciliation, and the count: acknowledged writes
  lost, orphan points, active rows without a point, duplicate active rows, and requests that answered
  an error yet left a row.
- race: 50 identical fixes at once (one row, counted once), and the same fix from 50 transcripts at
  once (one row, frequency 50, one point); then erasure racing writes: 40 analyses (with a canonical
  list) and fixes for one user, 8 at a time, `DELETE /v1/users/{u}` after the 20th and again at the end,
  5 rounds: receipts, users back 0.5 s after a receipt, orphan points, orphan collections.
- isolation: 1,000 users over two tenants (the same user ids in both), 100 of tenant A erased: residue
  of the erased and collateral damage to everyone else, both stores.
- soak: mixed traffic (analyses of new transcripts, fixes, reads) from --clients clients (20) for
  --minutes, the RSS of the server and its stage process sampled every 10 s; the slope over the last half must be flat.

Needs DATABASE_URL (a server: its backends are terminated); each scenario gets a fresh database on it
and a fresh data folder. Usage: python -m bench.measure.reliability [fault|race|isolation|soak|all] [--writes
2000] [--minutes 10] [--clients 20] [--transcripts 0] [--restart-postgres]
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import create_engine, text

from bench.measure.memory_maps import anon_by_kind, tree_by_process, tree_mb, tree_pids
from namesake.adapters.db import sqlalchemy_url
from namesake.adapters.vectors.edge import EdgeVectorStore
from namesake.core.settings import CORRECTIONS_COLLECTION

ADMIN, ACME, BETA = "bench-admin", "bench-acme", "bench-beta"
KEYS = f"{ADMIN},{ACME}:tenant-acme,{BETA}:tenant-beta"


def auth(key: str) -> dict[str, str]:
    """The bearer header of a key."""
    return {"Authorization": f"Bearer {key}"}


@dataclass
class Stack:
    """A fresh database and data folder, and the server running on them."""

    url: str
    data: Path
    port: int
    server: subprocess.Popen[bytes] | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        return os.environ | {
            "DATABASE_URL": self.url,
            "NAMESAKE_DATA_DIR": str(self.data),
            "NAMESAKE_API_KEYS": KEYS,
            "NAMESAKE_JOBS_ENABLED": "false",
        }

    def start(self) -> None:
        """Start the server; like an orchestrator, start it again if it dies before it is ready."""
        cli = str(Path(sys.executable).parent / "namesake")
        t0 = time.monotonic()
        while time.monotonic() - t0 < 300:
            if self.server is None or self.server.poll() is not None:
                self.server = subprocess.Popen(
                    [cli, "serve", "--port", str(self.port)],
                    env=self.env(),
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            try:
                if httpx.get(f"{self.base}/readyz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise SystemExit("the server did not become ready")

    def kill(self) -> None:
        if self.server is not None and self.server.poll() is None:
            self.server.send_signal(signal.SIGKILL)
            self.server.wait()

    def stop(self) -> None:
        if self.server is not None and self.server.poll() is None:
            self.server.terminate()
            self.server.wait(timeout=60)

    def sql(self, query: str, **params: Any) -> list[Any]:
        engine = create_engine(sqlalchemy_url(self.url))
        try:
            with engine.begin() as conn:
                return list(conn.execute(text(query), params).all())
        finally:
            engine.dispose()

    def points(self) -> dict[str, dict[str, Any]]:
        """Every corrections point (server stopped: the embedded store is this process's then)."""
        store = EdgeVectorStore(self.data / "qdrant")
        out: dict[str, dict[str, Any]] = {}
        try:
            offset = None
            while True:
                page, offset = store.scroll(CORRECTIONS_COLLECTION, limit=1000, offset=offset)
                out.update({str(p.id): p.payload for p in page})
                if offset is None:
                    return out
        finally:
            store.close()


@contextmanager
def stack(server_url: str) -> Iterator[Stack]:
    """A scratch database on the server of DATABASE_URL and a temporary data folder, dropped after."""
    name = f"namesake_bench_{uuid.uuid4().hex[:8]}"
    admin = create_engine(sqlalchemy_url(server_url), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    with tempfile.TemporaryDirectory() as tmp:
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        st = Stack(server_url.rsplit("/", 1)[0] + f"/{name}", Path(tmp) / "data", port)
        try:
            yield st
        finally:
            st.stop()
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            admin.dispose()


def fix(user: str, original: str, transcript: str, final: str | None = None) -> dict[str, Any]:
    """A manual correction body whose span holds `original`."""
    sentence = f"We met {original} about the numbers."
    return {
        "user_id": user,
        "transcript_id": transcript,
        "segment_id": "1",
        "start_char": 7,
        "end_char": 7 + len(original),
        "original": original,
        "final": final or f"{original} Inc",
        "entity_type": "ORG",
        "segment_text": sentence,
    }


def consistency(st: Stack) -> dict[str, int]:
    """Orphan points, active rows without a point, duplicate active rows (server stopped)."""
    rows = st.sql("SELECT qdrant_point_id::text, status FROM correction_mirror")
    points = st.points()
    active = {p for p, s in rows if s == "active"}
    dup = st.sql(
        "SELECT count(*) FROM (SELECT 1 FROM correction_mirror WHERE status = 'active' "
        "GROUP BY user_id, entity_type, original_norm HAVING count(*) > 1) d"
    )[0][0]
    return {
        "orphan_points": len(set(points) - {p for p, _ in rows}),
        "active_rows_without_point": len(active - set(points)),
        "duplicate_active_rows": int(dup),
    }


def fault(server_url: str, writes: int, restart_postgres: bool) -> dict[str, Any]:
    """Paced writes under backend terminations and a SIGKILL of the API; then reconcile and count."""
    with stack(server_url) as st:
        st.start()
        outcome: dict[int, str] = {}  # i -> acked | refused | unknown
        statuses: dict[int, int] = {}
        stop = threading.Event()
        dbname = st.url.rsplit("/", 1)[1]

        def terminator() -> None:
            while not stop.wait(1.0):
                with contextlib.suppress(Exception):  # the database itself may be restarting
                    st.sql(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE datname = :d AND pid <> pg_backend_pid()",
                        d=dbname,
                    )

        def write(i: int) -> None:
            time.sleep(random.random() * 0.01)
            try:
                r = httpx.post(
                    f"{st.base}/v1/corrections",
                    json=fix(f"u{i % 200}", f"Zorb{i}", f"t{i % 200}"),
                    headers=auth(ADMIN),
                    timeout=30,
                )
                outcome[i] = "acked" if r.status_code == 201 else "refused"
                statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
            except httpx.HTTPError:
                outcome[i] = "unknown"  # no answer (the API was killed): neither acked nor refused

        killer = threading.Thread(target=terminator, daemon=True)
        killer.start()
        with ThreadPoolExecutor(8) as pool:
            for i in range(writes):
                time.sleep(0.01)  # paced: about 100 writes a second offered
                pool.submit(write, i)
                if i == writes // 3:
                    st.kill()  # kill -9 mid-run, then back up
                    st.start()
                if restart_postgres and i == 2 * writes // 3:
                    version = os.listdir("/etc/postgresql")[0]
                    subprocess.run(
                        ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "restart"], check=False
                    )
        stop.set()
        counts = {k: sum(v == k for v in outcome.values()) for k in ("acked", "refused", "unknown")}
        # stop (the embedded store is the server's while it runs), reconcile as an operator would after an
        # incident, then count
        st.stop()
        before = consistency(st)
        time.sleep(1.5)  # past the grace second
        done = subprocess.run(
            [str(Path(sys.executable).parent / "namesake"), "jobs", "reconcile", "--json"],
            # the server is stopped: nothing is in flight, so no point is too young to judge
            env=st.env() | {"RELIABILITY_CORRECTIONS_MEMORY_RECONCILE_GRACE_SECONDS": "1"},
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0:
            raise SystemExit(f"reconciliation failed: {done.stderr[-2000:]}")
        present = {o for (o,) in st.sql("SELECT original FROM correction_mirror WHERE status='active'")}
        lost = sum(1 for i, v in outcome.items() if v == "acked" and f"Zorb{i}" not in present)
        # a refused request leaves neither a correction nor its suggestion row
        suggested = {o for (o,) in st.sql("SELECT original FROM suggestions")}
        traced = sum(1 for i, v in outcome.items() if v == "refused" and f"Zorb{i}" in present | suggested)
        found = {f"before_reconcile_{k}": v for k, v in before.items()}
        codes = dict(sorted(statuses.items()))
        return {
            **counts,
            "statuses": codes,
            "acked_lost": lost,
            "refused_but_written": traced,
            **found,
            **consistency(st),
        }


def race(server_url: str) -> dict[str, Any]:
    """50 identical fixes at once, and one fix from 50 transcripts at once."""
    with stack(server_url) as st:
        st.start()
        with ThreadPoolExecutor(50) as pool:
            same = list(
                pool.map(
                    lambda _: (
                        httpx.post(
                            f"{st.base}/v1/corrections",
                            json=fix("ann", "Qorvex", "t1"),
                            headers=auth(ADMIN),
                            timeout=60,
                        ).status_code
                    ),
                    range(50),
                )
            )
            spread = list(
                pool.map(
                    lambda i: (
                        httpx.post(
                            f"{st.base}/v1/corrections",
                            json=fix("bob", "Qorvex", f"s{i}"),
                            headers=auth(ADMIN),
                            timeout=60,
                        ).status_code
                    ),
                    range(50),
                )
            )
        st.stop()
        rows = st.sql("SELECT user_id, frequency FROM correction_mirror WHERE status = 'active' ORDER BY user_id")
        return {
            "identical_ok": same.count(201),
            "spread_ok": spread.count(201),
            "rows": [tuple(r) for r in rows],
            **consistency(st),
        }


def orphan_collections(st: Stack) -> int:
    """Transcript collections on disk that no transcript row owns (server stopped)."""
    from namesake.core.settings import Settings
    from namesake.transcripts.canonical_index import collection_for

    owned = {collection_for(t, Settings()) for (t,) in st.sql("SELECT id FROM transcripts")}
    on_disk = [p.name for p in (st.data / "qdrant").iterdir() if p.is_dir() and p.name != CORRECTIONS_COLLECTION]
    return len([name for name in on_disk if name not in owned])


def erasure_race(server_url: str, rounds: int = 5) -> dict[str, Any]:
    """Analyses and fixes for one user, 8 at a time, while the user is erased (twice) each round."""
    entities = {"orgs": ["Cytiva", "Danaher"], "persons": ["Rainer Blair"]}
    segments = [{"id": "1", "text": "Reiner Blair spoke about Cytova and Danaer."}]
    statuses: dict[int, int] = {}
    receipts_nonzero = resurrected = 0
    with stack(server_url) as st:
        st.start()
        for r in range(rounds):
            user = f"racer{r}"

            def write(i: int, user: str = user) -> int:
                if i % 4 == 3:
                    path, body = "/v1/corrections", fix(user, f"Zorb{i}", f"{user}-f{i}")
                else:
                    path = "/v1/reliability/analyze"
                    body = {"transcript_id": f"{user}-t{i}", "user_id": user, "canonical_entities": entities,
                            "segments": segments}  # fmt: skip
                return httpx.post(f"{st.base}{path}", json=body, headers=auth(ADMIN), timeout=60).status_code

            def erase(user: str = user) -> dict[str, Any]:
                erased = httpx.delete(f"{st.base}/v1/users/{user}", headers=auth(ADMIN), timeout=120)
                answer: dict[str, Any] = erased.json()
                return answer

            with ThreadPoolExecutor(8) as pool:
                first = [pool.submit(write, i) for i in range(20)]
                receipts = [erase()]
                late = [pool.submit(write, i) for i in range(20, 40)]
                codes = [f.result() for f in first + late]
            receipts.append(erase())
            time.sleep(0.5)
            resurrected += len(st.sql("SELECT 1 FROM users WHERE id = :u", u=user))
            receipts_nonzero += sum(any(rc["remaining"].values()) for rc in receipts)
            for c in codes:
                statuses[c] = statuses.get(c, 0) + 1
        st.stop()
        return {
            "erasure_rounds": rounds,
            "erasure_statuses": dict(sorted(statuses.items())),
            "erasure_receipts_not_zero": receipts_nonzero,
            "erasure_resurrected_users": resurrected,
            "erasure_orphan_collections": orphan_collections(st),
            **{f"erasure_{k}": v for k, v in consistency(st).items()},
        }


def isolation(server_url: str, users: int = 1000, erased: int = 100) -> dict[str, Any]:
    """users over two tenants (the same ids in both), `erased` of tenant acme erased."""
    with stack(server_url) as st:
        st.start()
        half = users // 2

        def teach(i: int) -> int:
            key = ACME if i < half else BETA
            body = fix(f"user{i % half}", f"Vexa{i % half}", f"t{i % half}")
            return httpx.post(f"{st.base}/v1/corrections", json=body, headers=auth(key), timeout=60).status_code

        with ThreadPoolExecutor(8) as pool:
            taught = list(pool.map(teach, range(users)))
            receipts = list(
                pool.map(
                    lambda i: httpx.delete(f"{st.base}/v1/users/user{i}", headers=auth(ACME), timeout=120).json(),
                    range(erased),
                )
            )
            cross = sum(
                bool(httpx.get(f"{st.base}/v1/users/user{i}/corrections", headers=auth(ACME)).json())
                for i in range(erased)
            )
        st.stop()
        gone = {f"acme~user{i}" for i in range(erased)}
        rows = st.sql("SELECT user_id FROM correction_mirror")
        points = st.points()
        residue_rows = sum(u in gone for (u,) in rows)
        residue_points = sum(p.get("user_id") in gone for p in points.values())
        return {
            "taught_ok": taught.count(201),
            "receipts_zero": sum(r["remaining"] == {"qdrant_points": 0, "rows": 0} for r in receipts),
            "residue_rows": residue_rows,
            "residue_points": residue_points,
            "others_rows": len(rows) - residue_rows,
            "others_points": len(points) - residue_points,
            "expected_others": users - erased,
            "erased_read_back": cross,
            **consistency(st),
        }


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", nargs="?", default="all", choices=["fault", "race", "isolation", "soak", "all"])
    parser.add_argument("--writes", type=int, default=2000)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=20, help="soak: concurrent clients")
    parser.add_argument(
        "--transcripts", type=int, default=0, help="soak: each client analyses these many transcripts again (0: new)"
    )
    parser.add_argument("--restart-postgres", action="store_true", help="also restart the machine's PostgreSQL")
    args = parser.parse_args()
    server_url = os.environ.get("DATABASE_URL")
    if not server_url:
        sys.exit("set DATABASE_URL to a PostgreSQL server (its backends are terminated during the fault run)")
    runs = {
        "fault": lambda: fault(server_url, args.writes, args.restart_postgres),
        "race": lambda: {**race(server_url), **erasure_race(server_url)},
        "isolation": lambda: isolation(server_url),
        "soak": lambda: soak(server_url, args.minutes, args.clients, transcripts=args.transcripts),
    }
    for name in runs if args.scenario == "all" else [args.scenario]:
        t0 = time.monotonic()
        result = runs[name]()
        print(f"\n{name} ({time.monotonic() - t0:.0f} s)")
        for key, value in result.items():
            print(f"  {key:<44}{value if not isinstance(value, float) else f'{value:.2f}'}")


if __name__ == "__main__":
    main()
