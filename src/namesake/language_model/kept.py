"""The compiled language model kept on disk beside its blocks: where, for which machine, and how it is read back.

The first process on a machine compiles the graphs and measures the faster precision; later ones import both
(`compiled.py`). A file another runtime wrote, or a damaged one, is compiled or measured again.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np

from namesake.language_model.packed import PackedModel

# The precisions weighed on a CPU that has both (compiled.fastest_runner).
PRECISIONS = ("bf16", "f32")
log = logging.getLogger(__name__)


def machine_key(model: PackedModel, openvino_version: str) -> str:
    """What the faster precision depends on: the CPU, the runtime and the model's shape (not the threads: one or two,
    the same precision won by about the same ratio, and a pool's one-thread workers then share what a one-call
    run measured)."""
    try:
        cpu = [ln for ln in Path("/proc/cpuinfo").read_text().splitlines() if ln.startswith(("model name", "flags"))]
    except OSError:
        cpu = []
    said = [*cpu[:2], openvino_version, str(len(model.layers)), str(model.d), "packed"]
    return hashlib.sha256("\n".join(said).encode()).hexdigest()[:16]


def kept_paths(model: PackedModel, config: dict[str, str], openvino_version: str) -> tuple[Path, Path] | None:
    """Where the compiled body and head are kept for this model, machine, runtime and configuration (None: the
    model's blocks are not on disk, so neither is what was compiled from them). Not the threads: an import takes
    its own, so a pool's one-thread workers map the same files as a two-thread run."""
    if model.folder is None:
        return None
    said = [machine_key(model, openvino_version)]
    said += [f"{k}={v}" for k, v in sorted(config.items()) if k != "INFERENCE_NUM_THREADS"]
    key = hashlib.sha256("\n".join(said).encode()).hexdigest()[:16]
    return model.folder / f"compiled-{key}.body", model.folder / f"compiled-{key}.head"


def imported(
    core: Any, kept: tuple[Path, Path] | None, config: dict[str, str]
) -> tuple[Any, Any, list[np.ndarray]] | None:
    """The kept compiled graphs and the file maps they read their weights from (OpenVINO keeps using them: they
    must live as long as the graphs; copy-on-write since it takes them as writable, so processes share the pages);
    None when there are none, or they cannot be read (another runtime wrote them: compiled again, kept anew)."""
    if kept is None or not all(p.is_file() for p in kept):
        return None
    import openvino as ov

    try:
        maps: list[np.ndarray] = [np.memmap(p, dtype=np.uint8, mode="c") for p in kept]
        body, head = (core.import_model(ov.Tensor(m, shared_memory=True), "CPU", config) for m in maps)
    except (OSError, ValueError, RuntimeError) as exc:
        log.warning("compiled language model %s unreadable (%s): compiling it again", kept[0], exc)
        for p in kept:
            p.unlink(missing_ok=True)
        return None
    return body, head, maps


def kept_precision(kept: Path | None) -> str | None:
    """The precision measured before on this machine, or None (never measured, or the file unreadable)."""
    if kept is None or not kept.is_file():
        return None
    try:
        chosen = json.loads(kept.read_text())["precision"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return chosen if chosen in PRECISIONS else None
