"""`namesake serve` on the embedded default, as a user runs it: up, then stopped with SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import psutil
import pytest

from tests.live import free_port


def _postgres_of(folder: Path) -> bool:
    found = subprocess.run(["pgrep", "-f", str(folder)], capture_output=True, text=True).stdout.split()
    return any(pid != str(os.getpid()) for pid in found)


def _wait_until_ready(server: subprocess.Popen[str], port: int, log: Path) -> None:
    """Until /readyz answers 200, however long a loaded machine takes; at once when the server exits instead."""
    deadline = time.monotonic() + 600  # a stuck start, not a slow one
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"the server exited ({server.returncode}) before it was ready: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    pytest.fail(f"the server did not become ready in 10 minutes: {log.read_text()[-2000:]}")


def _stop(server: subprocess.Popen[str]) -> None:
    """SIGTERM, as a user stops it; killed if it has not stopped in a minute (and the test fails)."""
    if server.poll() is not None:
        return
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(timeout=60)
    except subprocess.TimeoutExpired:
        server.kill()
        raise


@pytest.mark.slow
def test_sigterm_stops_the_server_and_its_embedded_postgresql(tmp_path: Path) -> None:
    port, data = free_port(), tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"} | {"NAMESAKE_DATA_DIR": str(data)}
    log = (tmp_path / "serve.log").open("w")
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "namesake"), "serve", "--port", str(port)],
        env=env, stdout=subprocess.DEVNULL, stderr=log, text=True,
    )  # fmt: skip
    try:
        _wait_until_ready(server, port, tmp_path / "serve.log")
        assert _postgres_of(data / "postgres")
        httpx.get(f"http://127.0.0.1:{port}/healthz", headers={"X-Request-ID": "probe-1"}, timeout=5)
        server.send_signal(signal.SIGTERM)
        # uvicorn shuts down gracefully, then exits by the signal it got (-15), as servers conventionally do
        assert server.wait(timeout=60) in (0, -signal.SIGTERM)
        assert not _postgres_of(data / "postgres")  # nothing left running once the server is gone
        lines = (tmp_path / "serve.log").read_text().splitlines()
        assert lines and all(line.startswith("{") for line in lines)  # JSON log lines only, no initdb chatter
        assert "Application shutdown complete." in lines[-2] + lines[-1]
        assert len(lines) < 40  # start and stop in a few lines: no initdb or pg_ctl narration
        access = [json.loads(line) for line in lines if "/healthz" in line]
        assert access and access[0]["request_id"] == "probe-1"  # the request's id reaches the access line too
    finally:
        if server.poll() is None:
            server.kill()
        log.close()


@pytest.mark.slow
def test_analyze_sends_its_work_to_the_server_on_the_data_dir_and_local_still_refuses(tmp_path: Path) -> None:
    port, data = free_port(), tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "NAMESAKE_URL")}
    env |= {"NAMESAKE_DATA_DIR": str(data)}
    log = (tmp_path / "serve.log").open("w")
    cli = str(Path(sys.executable).parent / "namesake")
    server = subprocess.Popen([cli, "serve", "--port", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=log,
                              text=True)  # fmt: skip
    call = {"user_id": "ana", "segments": [{"id": "1", "text": "Thanks to Reiner Blair and the Cytova team."}],
            "canonical_entities": {"persons": ["Rainer Blair"], "orgs": ["Cytiva"]}}  # fmt: skip
    try:
        _wait_until_ready(server, port, tmp_path / "serve.log")
        assert json.loads((data / "serve.json").read_text())["url"] == f"http://127.0.0.1:{port}"
        by_route = httpx.post(f"http://127.0.0.1:{port}/v1/reliability/analyze", json={**call, "transcript_id": "a"},
                              timeout=60).json()  # fmt: skip
        (tmp_path / "b.json").write_text(json.dumps({**call, "transcript_id": "b"}))
        t0 = time.monotonic()
        sent = subprocess.run([cli, "analyze", str(tmp_path / "b.json")], env=env, capture_output=True, text=True,
                              timeout=120)  # fmt: skip
        took = time.monotonic() - t0
        assert sent.returncode == 0, sent.stderr
        assert f"the server at http://127.0.0.1:{port}" in sent.stderr
        by_cli = json.loads(sent.stdout)

        def same(body: dict[str, object]) -> object:
            keep = ("segment_id", "start_char", "end_char", "original", "final", "entity_type", "confidence", "status")
            return ([{k: s[k] for k in keep} for s in body["suggestions"]], body["corrected_segments"], body["mode"])  # type: ignore[attr-defined, index]

        assert same(by_cli) == same(by_route) and by_cli["suggestions"]
        assert set(by_cli) == set(by_route)  # the route's answer, as it wrote it
        print(f"forwarded one-file analyze: {took:.2f} s")
        local = subprocess.run([cli, "analyze", "--local", str(tmp_path / "b.json")], env=env, capture_output=True,
                               text=True, timeout=300)  # fmt: skip
        assert local.returncode != 0 and "namesake serve" in local.stderr and local.stdout == ""
    finally:
        _stop(server)
        log.close()
    assert not (data / "serve.json").exists()  # gone with the server


@pytest.mark.slow
def test_every_command_with_a_route_asks_the_running_server_and_prints_what_it_prints_alone(tmp_path: Path) -> None:
    """The README's walk-through beside `namesake serve`: export, vocabulary, jobs and erasure each exit 0 (before,
    each refused the held store, then aborted at exit: 134), and print what they print with the server stopped."""
    port, data = free_port(), tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "NAMESAKE_URL")}
    env |= {"NAMESAKE_DATA_DIR": str(data)}
    cli = str(Path(sys.executable).parent / "namesake")
    log = (tmp_path / "serve.log").open("w")
    server = subprocess.Popen([cli, "serve", "--port", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=log,
                              text=True)  # fmt: skip
    call = {"segments": [{"id": "1", "text": "Thanks to Reiner Blair and the Cytova team."}],
            "canonical_entities": {"persons": ["Rainer Blair"], "orgs": ["Cytiva"]}}  # fmt: skip

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([cli, *args], env=env, capture_output=True, text=True, timeout=300)

    exports = [("transcripts", "export", "q3", "--format", "txt"), ("transcripts", "export", "q3"),
               ("vocab", "export", "--user", "ana", "--format", "deepgram")]  # fmt: skip
    try:
        _wait_until_ready(server, port, tmp_path / "serve.log")
        base = f"http://127.0.0.1:{port}"
        for tid, user in (("q3", "ana"), ("other", "bo")):
            r = httpx.post(f"{base}/v1/reliability/analyze", json={**call, "transcript_id": tid, "user_id": user},
                           timeout=120)  # fmt: skip
            assert r.status_code == 200, r.text
        beside = {}
        for args in [*exports, ("jobs", "promote", "--json"), ("jobs", "reconcile", "--json"),
                     ("users", "erase", "bo", "--json")]:  # fmt: skip
            done = run(*args)
            assert done.returncode == 0, (args, done.returncode, done.stderr)
            assert f"asking the server at {base}" in done.stderr
            beside[args] = done.stdout
        assert json.loads(beside["users", "erase", "bo", "--json"])["remaining"] == {"qdrant_points": 0, "rows": 0}
        assert json.loads(beside["jobs", "promote", "--json"])["job"] == "promotion"
        missing = run("transcripts", "export", "nope")
        assert missing.returncode == 1 and "nope not found" in missing.stderr  # as a local run says it
    finally:
        _stop(server)
        log.close()
    for args in exports:  # the server stopped: the same commands open the store themselves, and print the same
        alone = run(*args)
        assert alone.returncode == 0, (args, alone.stderr)
        assert "asking the server" not in alone.stderr
        assert alone.stdout == beside[args], args


@pytest.mark.slow
def test_sigterm_during_a_long_analysis_stops_it_and_the_server_within_the_grace(tmp_path: Path) -> None:
    """SHUTDOWN_GRACE_SECONDS for what runs, then its work is stopped: the process ends soon after, saving nothing."""
    from tests.e2e.test_cancel import long_analysis

    port, data = free_port(), tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "NAMESAKE_URL")}
    env |= {"NAMESAKE_DATA_DIR": str(data), "SHUTDOWN_GRACE_SECONDS": "1"}
    log = (tmp_path / "serve.log").open("w")
    server = subprocess.Popen([str(Path(sys.executable).parent / "namesake"), "serve", "--port", str(port)], env=env,
                              stdout=subprocess.DEVNULL, stderr=log, text=True)  # fmt: skip
    answers: list[object] = []

    def send() -> None:
        try:
            answers.append(httpx.post(f"http://127.0.0.1:{port}/v1/reliability/analyze", json=long_analysis(),
                                      timeout=120).status_code)  # fmt: skip
        except httpx.HTTPError as exc:
            answers.append(type(exc).__name__)

    try:
        _wait_until_ready(server, port, tmp_path / "serve.log")
        client = threading.Thread(target=send)
        client.start()
        time.sleep(3)  # the analysis is under way (it takes ten seconds and more)
        under = psutil.Process(server.pid).children(recursive=True)  # its stage process, the resource tracker
        assert under
        t0 = time.monotonic()
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=60) in (0, -signal.SIGTERM)
        took = time.monotonic() - t0
        _, left = psutil.wait_procs(under, timeout=10)
        assert not left, left  # nothing of it outlives it
        client.join(timeout=60)
        assert answers and answers[0] != 200, answers  # stopped, not finished
        print(f"stopped in {took:.1f} s: {answers}")
        assert took < 1 + 10, f"the server took {took:.1f} s to stop"  # the grace, then a few seconds to close
    finally:
        _stop(server)
        log.close()
