"""Quality: `namesake analyze` (no LLM) vs the fuzzy find-and-replace baseline, scored in the same run.

Next to the yardstick's columns: the review queue, pending suggestions per transcript and the share of them a
reviewer following the harm rule would accept (fixes an entity or brings the words nearer, breaks nothing).

Usage: python -m bench.measure.quality [earnings21.jsonl.gz] [librispeech.jsonl.gz] [--out DIR]
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from bench.common import bench_file, fresh_env, review_queue, run_to_file, score

COLUMNS = ("EER_before", "EER_auto", "EER_oracle", "EER_rel_reduction_auto", "EER_rel_reduction_oracle",
           "precision_auto_ref", "harm_auto", "broken_auto", "FER_before", "FER_auto", "FER_oracle",
           "WERF_before", "WERF_auto", "WER_before", "WER_auto", "pending_per_call", "worth_accepting",
           "seconds")  # fmt: skip


def fmt(v: object) -> str:
    """Cell text."""
    return "-" if v is None else f"{v:.4f}" if isinstance(v, float) else str(v)


def main() -> None:
    """Run both systems on each file, print the yardstick's tables and a side-by-side summary."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", default=["earnings21.jsonl.gz", "librispeech.jsonl.gz"])
    ap.add_argument("--out", type=Path, default=Path("bench/out"))
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    namesake = shutil.which("namesake") or str(Path(sys.executable).parent / "namesake")
    summary = []
    for name in a.files:
        split = bench_file(name)
        stem = name.split(".")[0]
        ours, base = a.out / f"{stem}.namesake.jsonl", a.out / f"{stem}.baseline.jsonl"
        print(f"== {name}: namesake analyze", file=sys.stderr)
        run_to_file([namesake, "analyze", str(split)], ours, fresh_env(LLM_PROVIDER="none"))
        print(f"== {name}: baseline.py", file=sys.stderr)
        run_to_file([sys.executable, str(bench_file("baseline.py")), str(split)], base)
        for label, path in (("namesake", ours), ("baseline", base)):
            table, rows = score(split, path)
            print(f"\n### {name} — {label}\n{table}")
            pending, accept = review_queue(split, path)
            summary.append((stem, label, {**rows["TOTAL"], "pending_per_call": pending, "worth_accepting": accept}))
    print("\n### summary (TOTAL rows)\n")
    print("| file | system | " + " | ".join(COLUMNS) + " |")
    print("|---|---|" + "---|" * len(COLUMNS))
    for stem, label, row in summary:
        print(f"| {stem} | {label} | " + " | ".join(fmt(row.get(c)) for c in COLUMNS) + " |")


if __name__ == "__main__":
    main()
