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
import os
import random
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from bench.measure.served import ACME, ADMIN, BETA, Stack, auth, consistency, fix, stack
from bench.measure.soak import soak
from namesake.core.settings import CORRECTIONS_COLLECTION


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
