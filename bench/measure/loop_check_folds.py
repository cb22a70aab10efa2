"""The shared loop check (`loop_check.py` beside the bench data), held out: no call is analysed by trees that saw it.

Picks the transcripts `loop_check.py` picks (N spread over the file), groups them by the fold that held their call
out (`folds.json` of `calibrate_reading.py --fold-models`), and per fold starts `namesake serve` on an embedded data
dir of its own with that fold's two sets of trees, runs `loop_check.py` on the fold's transcripts through HTTP, and
adds the counts up. The second halves and both prediction sets of every fold are scored together with the
yardstick, so harm is the file's, not a mean of folds. The fresh user (no memory) is the baseline of the same run.

Usage: python -m bench.measure.loop_check_folds --fold-models bench/out/folds [--n 0] [--policy rules|learned]
       [--keep DIR]
Every transcript of the file by default (147 Earnings-21 transcripts, about 20 minutes here): 42 (`loop_check.py`'s
own default) is too few to judge harm by, 18 of them in one fold.
Nothing is in-sample: the scorer's trees are the fold's, and so is the learned memory policy (`--policy learned` needs
`fold-K.memory.json` beside them, fitted without the fold's calls; it refuses to run on the shipped policy). The
rules policy's seven bounds were chosen on these sessions fold by fold (`bench.fit.memory_bounds`): the figures are
held out for them as far as every fold chooses the shipped value or its neighbour. Besides the shares by kind, the
table gives the repeats a fresh user does not fix by itself, the memory's own work (on calls the scorer does not know,
most repeats are of that kind), and `untaught_lost` (by kind: `bench.measure.untaught_lost` over `--keep`'s folder).
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.common import BENCH_DATA, bench_file, shared_module, yardstick
from bench.measure.coldstart import _free_port, started_server
from bench.measure.learning_loop import fold_of
from namesake.core.settings import Settings

KEY = "loop-check-key"


def picked(lines: list[str], n: int) -> list[dict[str, Any]]:
    """The transcripts loop_check.py takes from a file of `lines`: every step-th, N of them."""
    step = max(1, len(lines) // n)
    return [json.loads(lines[i]) for i in range(0, len(lines), step)][:n]


def memory_model(folds: Path, fold: int, policy: str) -> dict[str, str]:
    """The settings of the memory policy a fold's server runs: the rules, or the learned policy fitted without it."""
    if policy == "rules":
        return {"RELIABILITY_MEMORY_POLICY": "rules"}
    path = folds / f"fold-{fold}.memory.json"
    if not path.exists():
        raise SystemExit(f"{path} is missing: the shipped learned policy saw every dev call (in-sample); fit one per"
                         " fold with bench.fit.calibrate_memory --fold-models, or run with --policy rules")  # fmt: skip
    return {"RELIABILITY_MEMORY_POLICY": "learned", "RELIABILITY_MEMORY_MODEL": str(path)}


def run_fold(
    folds: Path, fold: int, calls: list[dict[str, Any]], policy: str, work: Path, src: Path | None = None
) -> dict[str, Any]:
    """loop_check.py over `calls` against a server with the fold's trees (the code of `src`, when given: a baseline
    in the same run); its JSON and the folder it scored in."""
    split = work / f"fold-{fold}.jsonl.gz"
    with gzip.open(split, "wt") as fh:
        fh.writelines(json.dumps(t) + "\n" for t in calls)
    tmp = work / f"fold-{fold}-tmp"
    tmp.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "NAMESAKE_URL")}
    env |= {
        "NAMESAKE_DATA_DIR": str(work / f"fold-{fold}-data"),
        "NAMESAKE_API_KEYS": KEY,
        "RELIABILITY_SCORER_MODEL": str(folds / f"fold-{fold}.scorer.json"),
        "RELIABILITY_READING_MODEL": str(folds / f"fold-{fold}.reading.json"),
        "JOBS_ENABLED": "false",  # no promotion run in the middle of a fold
        **memory_model(folds, fold, policy),
        **({"PYTHONPATH": str(src)} if src else {}),
    }
    argv = [str(Path(sys.executable).parent / "namesake"), "serve", "--port", str(_free_port())]
    with started_server(argv, env) as (base, _, _):
        run = subprocess.run(
            [sys.executable, str(BENCH_DATA / "loop_check.py"), str(split), base, KEY, str(len(calls))],
            env={**os.environ, "TMPDIR": str(tmp)}, capture_output=True, text=True, check=True,
        )  # fmt: skip
    out: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    out["scored_in"] = next(tmp.glob("loopcheck-*"))
    return out


def merged(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts over the folds (each fold's rates times its repeats), and the yardstick over every fold's halves."""
    repeats = sum(r["repeats"] for r in runs)
    counts: collections.Counter[str] = collections.Counter()
    kinds: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for r in runs:
        for view in ("mem_auto", "mem_any", "fresh_auto", "fresh_any"):
            counts[view] += round(r[f"repeat_{view}"] * r["repeats"])
        for kind, v in r["by_kind"].items():
            kinds[kind]["n"] += v["repeats"]
            kinds[kind]["auto"] += round(v["auto"] * v["repeats"])
            kinds[kind]["any"] += round(v["any"] * v["repeats"])
    total = scored_together([r["scored_in"] for r in runs])
    actions: collections.Counter[str] = collections.Counter()
    errors: collections.Counter[str] = collections.Counter()
    for r in runs:
        actions.update(r["actions"])
        errors.update(r["api_errors"])
        for k in ("untaught_lost", "untaught_fixed_auto_fresh"):
            counts[k] += r[k]
    return {"repeats": repeats, "counts": counts, "kinds": kinds, "total": total, "actions": actions, "errors": errors,
            "transcripts": sum(r["transcripts"] for r in runs)}  # fmt: skip


def scored_together(folders: list[Path]) -> dict[str, dict[str, Any]]:
    """The yardstick's summary of each user's predictions (`mem`, `fresh`) over every folder's second halves at once:
    harm is the file's, not a mean of folds."""
    y = yardstick()
    total: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as d:
        second = Path(d) / "second.jsonl.gz"
        with gzip.open(second, "wt") as fh:
            for folder in folders:
                with gzip.open(folder / "second.jsonl.gz", "rt") as part:
                    fh.writelines(part)
        for lab in ("mem", "fresh"):
            preds = Path(d) / f"{lab}.jsonl"
            preds.write_text("".join((folder / f"{lab}.jsonl").read_text() for folder in folders))
            tot: collections.Counter[str] = collections.Counter()
            for c in y.score(str(second), str(preds), "asr_system").values():
                tot.update(c)
            total[lab] = y.summarise(tot)
    return total


def second_half_errors(
    kept: list[Path], calls: dict[str, dict[str, Any]]
) -> Iterator[tuple[str, dict[str, Any], dict[str, Any], bool, dict[str, list[dict[str, Any]]]]]:
    """Every second-half error that is not a deletion, over the folders loop_check.py scored in: its transcript,
    segment, whether the reviewer taught its pair (loop_check.py's own rule: every first-half error that is not a
    deletion nor function words only) and both users' suggestions for its transcript."""
    y, check = yardstick(), loop_check()
    for d in kept:
        with gzip.open(d / "second.jsonl.gz", "rt") as fh:
            halves = [json.loads(line) for line in fh]
        preds = {lab: {p["transcript_id"]: p["suggestions"] for p in map(json.loads, (d / f"{lab}.jsonl").open())}
                 for lab in ("mem", "fresh")}  # fmt: skip
        for t in halves:
            whole = calls[t["transcript_id"]]["segments"]
            taught = {
                (y.norm(g["hyp_span"]), y.norm(g["ref_span"]))
                for seg in whole[: len(whole) // 2]
                for g in seg["errors"]
                if g.get("kind") != "deletion" and not check.function_only(g["hyp_span"])
            }
            got = {lab: preds[lab].get(t["transcript_id"], []) for lab in preds}
            for seg in t["segments"]:
                for g in seg["errors"]:
                    if g.get("kind") != "deletion":
                        yield t["transcript_id"], seg, g, (y.norm(g["hyp_span"]), y.norm(g["ref_span"])) in taught, got


def unknown_to_scorer(calls: dict[str, dict[str, Any]], runs: list[dict[str, Any]]) -> collections.Counter[str]:
    """The repeats a fresh user does not get fixed by itself, and how many of them the memory fixes by itself
    (recomputed from each fold's second halves and predictions with the yardstick's `entity_ok`)."""
    y = yardstick()
    out: collections.Counter[str] = collections.Counter()
    for _, seg, g, taught, got in second_half_errors([r["scored_in"] for r in runs], calls):
        if taught and not fixed_by_itself(y, seg, g, got["fresh"]):
            out["unknown"] += 1
            out["unknown_mem"] += fixed_by_itself(y, seg, g, got["mem"])
    return out


def fixed_by_itself(y: Any, seg: dict[str, Any], error: dict[str, Any], suggestions: list[dict[str, Any]]) -> bool:
    """Whether the auto-applied suggestions of a segment make this error right (the yardstick's rule)."""
    return fixed_by(y, seg, error, [s for s in suggestions if s["status"] == "auto_applied"])


def fixed_by(y: Any, seg: dict[str, Any], error: dict[str, Any], suggestions: list[dict[str, Any]]) -> bool:
    """Whether the given suggestions of a segment, applied together, make this error right (the yardstick's rule)."""
    mine = [s for s in suggestions if str(s["segment_id"]) == seg["id"]]
    new, edits = y.apply(seg["text"], y.clean(mine, seg["text"], collections.Counter()))
    return bool(y.entity_ok(error, new, edits))


def loop_check() -> Any:
    """The shared loop check's module (beside the bench data), for its rule of what a reviewer taught."""
    return shared_module("loop_check")


def table(m: dict[str, Any]) -> str:
    """The issue's table: repeats fixed automatically and suggested, with the memory and without, by kind."""
    n = max(1, m["repeats"])
    c, t = m["counts"], m["total"]
    rows = [
        "| repeats of a fixed pair (held out) | repeats | fixed automatically | suggested at all |",
        "|---|---|---|---|",
        f"| all, with the memory (fresh user) | {m['repeats']} | {c['mem_auto'] / n:.1%} ({c['fresh_auto'] / n:.1%}) "
        f"| {c['mem_any'] / n:.1%} ({c['fresh_any'] / n:.1%}) |",
    ]
    for kind, k in sorted(m["kinds"].items()):
        kn = max(1, k["n"])
        rows.append(f"| {kind} | {k['n']} | {k['auto'] / kn:.1%} | {k['any'] / kn:.1%} |")
    u = m.get("unknown")
    if u is not None:
        rows.append(f"| not fixed by itself for a fresh user (the memory's own work) | {u['unknown']} "
                    f"| {u['unknown_mem'] / max(1, u['unknown']):.1%} | |")  # fmt: skip
    rows += [
        "",
        "| second halves | EER_auto | EER_oracle | harm_auto | precision_auto_ref |",
        "|---|---|---|---|---|",
    ]
    for lab, name in (("mem", "with the reviewer's memory"), ("fresh", "fresh user (baseline)")):
        s = t[lab]
        rows.append(f"| {name} | {s['EER_auto']:.4f} | {s['EER_oracle']:.4f} | {s['harm_auto']:.2%} "
                    f"| {s['precision_auto_ref']:.4f} |")  # fmt: skip
    rows.append(f"\nuntaught_lost: {c['untaught_lost']} of the fresh user's {c['untaught_fixed_auto_fresh']} right"
                " automatic fixes of errors nobody taught")  # fmt: skip
    rows.append(f"\n{m['transcripts']} transcripts; reviewer actions {dict(m['actions'])}; "
                f"API errors {dict(m['errors']) or 'none'}")  # fmt: skip
    return "\n".join(rows)


def main() -> None:
    """Per fold: a server with that fold's trees, loop_check.py on its calls; then the merged table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fold-models", type=Path, required=True, help="calibrate_reading.py --fold-models' folder")
    ap.add_argument("--file", default="earnings21.jsonl.gz")
    ap.add_argument(
        "--n",
        type=int,
        default=0,
        help="transcripts, spread over the file as loop_check.py spreads them "
        "(0, the default: every transcript of the file; loop_check.py's own default is 42)",
    )
    ap.add_argument("--policy", choices=["learned", "rules"], default=Settings().reliability_memory_policy,
                    help="RELIABILITY_MEMORY_POLICY (default: the settings'); learned: fold-K.memory.json")  # fmt: skip
    ap.add_argument("--keep", type=Path, help="keep each fold's second halves and predictions in this folder")
    ap.add_argument("--src", type=Path, help="run the servers on this source tree (another commit's src/: a baseline)")
    a = ap.parse_args()
    with gzip.open(bench_file(a.file), "rt") as fh:
        lines = fh.read().splitlines()
    stem = a.file.split(".")[0]
    by_fold: dict[int, list[dict[str, Any]]] = collections.defaultdict(list)
    n = a.n or len(lines)
    for t in picked(lines, n):
        by_fold[fold_of(a.fold_models, t, stem)].append(t)
    with tempfile.TemporaryDirectory(prefix="loop-folds-") as d:
        work = a.keep or Path(d)
        work.mkdir(parents=True, exist_ok=True)
        runs = []
        for fold, calls in sorted(by_fold.items()):
            print(f"fold {fold}: {len(calls)} transcripts", file=sys.stderr, flush=True)
            runs.append(run_fold(a.fold_models, fold, calls, a.policy, work, a.src))
        m = merged(runs)
        m["unknown"] = unknown_to_scorer({t["transcript_id"]: t for t in picked(lines, n)}, runs)
        print(table(m))


if __name__ == "__main__":
    main()
