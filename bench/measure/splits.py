"""Held-out figures over several splits of the calls, and their mean: what to compare a change by.

One split moves with a few candidate rows (60 of 510,253 moved Earnings-21's harm by 0.6 points on one split and
0.2 the other way on another), because every refit draws its trees anew; the mean of three splits moves far less.
Runs `bench/fit/calibrate_reading.py` once on GroupKFold's own split and once per `--seeds` shuffle,
each writing its model to a scratch file (never the shipped one), and prints each split's rows of the
language model's configuration with the mean below them.

    python -m bench.measure.splits --rows-cache bench/out/rows.pkl --gains-cache bench/out/lm_gains_ov.json
    python -m bench.measure.splits --seeds 1 2 3 -- --bars 0.62 --read-from 0.3
    python -m bench.measure.splits --reach   # also how far the held-out suggestions reach, by nearness band

With --reach each split keeps its held-out predictions of the served configuration and the shared `reach.py`
(beside the bench data) reads them: per file and band, the share of misheard entities some suggestion touches
(reached) and makes right (fixed), each split's and their mean.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

# The figures of a table row after its file and configuration cells, in calibrate_reading.py's order.
COLUMNS = ("EER reduction auto", "oracle", "precision_auto_ref", "harm_auto", "FER_auto", "word auto wrong",
           "pending / call", "worth accepting", "unfolded / call", "unfolded worth accepting")  # fmt: skip


def table_rows(output: str) -> dict[tuple[str, str], list[float]]:
    """(file, configuration) → figures, for every table row calibrate_reading.py printed."""
    rows: dict[tuple[str, str], list[float]] = {}
    for line in output.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2 + len(COLUMNS) or cells[0] in ("file", "---"):
            continue
        try:
            rows[(cells[0], cells[1])] = [float(c) for c in cells[2:]]
        except ValueError:
            continue
    return rows


def mean_rows(splits: list[dict[tuple[str, str], list[float]]]) -> dict[tuple[str, str], list[float]]:
    """The mean of each (file, configuration) over the splits that all have it."""
    common = [k for k in splits[0] if all(k in s for s in splits[1:])]
    return {k: [sum(s[k][i] for s in splits) / len(splits) for i in range(len(COLUMNS))] for k in common}


def cells(values: list[float], bold: bool = False) -> str:
    """A row's figures as calibrate_reading.py writes them (pending a call with one decimal)."""
    mark = "**" if bold else ""
    return " | ".join(
        f"{mark}{v:.{1 if c.endswith('/ call') else 4}f}{mark}" for c, v in zip(COLUMNS, values, strict=True)
    )


BAND_ROW = re.compile(r"^\| (?P<band>[^|]+?) \| (?P<n>\d+) \| (?P<r>\d+) \([^)]*\) \| (?P<f>\d+) \([^)]*\) \|$")


def reach_rows(output: str) -> dict[str, tuple[int, int, int]]:
    """band → (misheard, reached, fixed), from reach.py's table."""
    found = {}
    for line in output.splitlines():
        m = BAND_ROW.match(line.strip())
        if m:
            found[m["band"]] = (int(m["n"]), int(m["r"]), int(m["f"]))
    return found


def reach_of(split_file: Path, predictions: Path) -> dict[str, tuple[int, int, int]]:
    """reach.py's band table for one predictions file."""
    from bench.common import BENCH_DATA

    run = subprocess.run(
        [sys.executable, str(BENCH_DATA / "reach.py"), str(split_file), str(predictions)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return reach_rows(run.stdout)


def print_reach(files: list[str], labels: list[str], folders: list[Path]) -> None:
    """Each file's band table over the splits: reached and fixed as shares, each split's and their mean."""
    from bench.common import bench_file

    print("\n### how far the held-out suggestions reach (reach.py; the mean is what to compare)\n")
    print("| file | predictions | band | misheard | reached (splits) | fixed (splits) | **reached** | **fixed** |")
    print("|---|---|---|---|---|---|---|---|")
    for name in files:
        stem = name.split(".")[0]
        for kept in sorted(p.name for p in folders[0].glob(f"{stem}.on*.jsonl")):
            print_bands(stem, kept.removeprefix(f"{stem}.").removesuffix(".jsonl"),
                        [reach_of(bench_file(name), folder / kept) for folder in folders])  # fmt: skip
    print(f"\n(splits: {', '.join(labels)})")


def print_bands(stem: str, variant: str, tables: list[dict[str, tuple[int, int, int]]]) -> None:
    """One predictions variant's band rows: each split's shares and their mean."""
    for band in tables[0]:
        n = tables[0][band][0]
        r = [t[band][1] / max(1, n) for t in tables]
        f = [t[band][2] / max(1, n) for t in tables]
        each = lambda xs: " / ".join(f"{x:.1%}" for x in xs)  # noqa: E731
        print(f"| {stem} | {variant} | {band} | {n} | {each(r)} | {each(f)} | **{sum(r) / len(r):.1%}** |"
              f" **{sum(f) / len(f):.1%}** |")  # fmt: skip


def chosen(key: tuple[str, str], every: bool) -> bool:
    """The served configuration (the language model on, edge forms on) unless every row is asked for."""
    return every or (key[1].startswith("on") and "no edge forms" not in key[1])


def main() -> None:
    """One calibrate_reading.py run per split, then each split's rows and their mean."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="*", default=[1, 2], help="--split-seed of the splits after the default")
    ap.add_argument("--rows-cache", type=Path, help="passed on: the labelled candidates between runs")
    ap.add_argument("--gains-cache", type=Path, help="passed on: the language model's gains between runs")
    ap.add_argument("--every-row", action="store_true", help="also the first trees alone and without edge forms")
    ap.add_argument("--reach", action="store_true", help="also reach.py's band table of each split's predictions")
    ap.add_argument("rest", nargs=argparse.REMAINDER, help="after --: more options of calibrate_reading.py")
    a = ap.parse_args()
    rest = [x for x in a.rest if x != "--"]
    if any(x in rest for x in ("--out", "--split-seed", "--fold-models", "--predictions")):
        sys.exit("--out, --split-seed, --fold-models and --predictions are this script's to set: leave them out")
    shared = [*(["--rows-cache", str(a.rows_cache)] if a.rows_cache else []),
              *(["--gains-cache", str(a.gains_cache)] if a.gains_cache else []), *rest]  # fmt: skip
    scratch = Path(tempfile.mkdtemp(prefix="namesake-splits-"))
    labels = ["default", *(f"seed {s}" for s in a.seeds)]
    splits = []
    for label, seed in zip(labels, [None, *a.seeds], strict=True):
        print(f"split {label}: calibrate_reading.py …", file=sys.stderr, flush=True)
        cmd = [sys.executable, "-m", "bench.fit.calibrate_reading", "--out", str(scratch / f"{seed}.json"), *shared]
        if a.reach:
            cmd += ["--predictions", str(scratch / f"predictions-{seed}")]
        # its progress passes through on stderr; its tables are read from stdout
        run = subprocess.run(
            cmd + ([] if seed is None else ["--split-seed", str(seed)]), stdout=subprocess.PIPE, text=True
        )
        if run.returncode:
            sys.exit(f"split {label}: calibrate_reading.py failed ({run.returncode}), its error above")
        found = table_rows(run.stdout)
        if not found:
            sys.exit(f"split {label}: no table in calibrate_reading.py's output")
        splits.append(found)
    print(f"\n### held out over {len(splits)} splits of the calls (the mean is what to compare)\n")
    print(f"| file | configuration | split | {' | '.join(COLUMNS)} |\n|---|---|---|" + "---|" * len(COLUMNS))
    for key, mean in mean_rows(splits).items():
        if not chosen(key, a.every_row):
            continue
        for label, split in zip(labels, splits, strict=True):
            print(f"| {key[0]} | {key[1]} | {label} | {cells(split[key])} |")
        print(f"| {key[0]} | {key[1]} | **mean** | {cells(mean, bold=True)} |")
    if a.reach:
        files = [x for x in rest if x.endswith(".jsonl.gz")] or ["earnings21.jsonl.gz", "librispeech.jsonl.gz"]
        print_reach(files, labels, [scratch / f"predictions-{seed}" for seed in [None, *a.seeds]])


if __name__ == "__main__":
    main()
