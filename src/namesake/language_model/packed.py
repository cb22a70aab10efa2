"""The language model's weights as its GGUF file stores them, for the compiled pass: one compact copy in memory.

SmolLM2-135M's matrices are 4-bit blocks (Q4_1) and its embedding 8-bit blocks (Q8_0): ~100 MB, where the
dequantised float32 matrices take 650 MB. OpenVINO keeps them so and decompresses a block inside each product,
to the same values `gguf` dequantises to (a Q4_1 block's `d·q + m` written as `(q − z)·d`, z = −m/d, which
rounds in the last bit at most). A block type without such a form is dequantised to float32 instead.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from namesake.core import shown

log = logging.getLogger(__name__)

BLOCK = 32
# bytes of one block: its float16 scale (and, for Q4_1, its float16 minimum), then its codes
Q4_1_BYTES, Q8_0_BYTES = 20, 34


@dataclass(frozen=True)
class Blocks:
    """A (rows, columns) matrix as blocks of 32 along each row: value = (code − zero) · scale."""

    codes: np.ndarray  # (rows, blocks, 16) uint8, two 4-bit codes a byte, or (rows, blocks, 32) int8
    scale: np.ndarray  # (rows, blocks, 1) float32
    zero: np.ndarray | None  # (rows, blocks, 1) float32, None where the codes are signed around 0
    shape: tuple[int, int]

    @property
    def bits(self) -> int:
        return 4 if self.codes.dtype == np.uint8 else 8

    def rows(self, which: np.ndarray) -> np.ndarray:
        """Some rows in float32, as the compiled pass decompresses them."""
        codes = self.codes[which]
        if self.bits == 4:  # OpenVINO's order: the low half of byte k is code 2k, the high half code 2k + 1
            codes = np.stack([codes & 15, codes >> 4], axis=-1).reshape(*codes.shape[:-1], BLOCK)
        values = codes.astype(np.float32)
        if self.zero is not None:
            values -= self.zero[which]
        out: np.ndarray = (values * self.scale[which]).reshape(len(which), self.shape[1])
        return out


Matrix = Blocks | np.ndarray


def rows_of(w: Matrix, which: np.ndarray) -> np.ndarray:
    """Some rows of a matrix in float32 (the output head's rows of the scored tokens: their logits exactly)."""
    return w.rows(which) if isinstance(w, Blocks) else np.asarray(w[which])


@dataclass(frozen=True)
class PackedModel:
    """SmolLM2's configuration, weights (each matrix rows = outputs) and vocabulary, read once from its GGUF file."""

    config: dict[str, float]
    embed: Matrix  # (vocabulary, d)
    head: Matrix  # (vocabulary, d): the embedding itself when the file ties them
    out_norm: np.ndarray
    layers: list[dict[str, Matrix]]  # q, k, v, o, gate, up, down (out, in); attn_norm, ffn_norm
    tokens: list[str]
    merges: list[str]
    # the cache folder its blocks were read from or written to: compiled forms of the model are kept beside them
    folder: Path | None = None

    @property
    def d(self) -> int:
        return int(self.out_norm.shape[0])

    @property
    def n_head(self) -> int:
        return int(self.config["n_head"])

    @property
    def n_kv(self) -> int:
        return int(self.config["n_kv"])

    @property
    def head_dim(self) -> int:
        return self.d // self.n_head

    @property
    def eps(self) -> float:
        return float(self.config["eps"])

    @property
    def rope_base(self) -> float:
        return float(self.config["rope_base"])

    @property
    def vocabulary(self) -> int:
        return len(self.tokens)


LAYER_TENSORS = {
    "q": "attn_q", "k": "attn_k", "v": "attn_v", "o": "attn_output",
    "gate": "ffn_gate", "up": "ffn_up", "down": "ffn_down",
    "attn_norm": "attn_norm", "ffn_norm": "ffn_norm",
}  # fmt: skip


def load_packed(path: Path, cache_dir: Path | None = None) -> PackedModel:
    """The model's blocks, through a cache when one is given: reading the GGUF file's vocabulary costs ~3 s, the
    cache ~0.1 s. The first process writes it (~110 MB) and says where."""
    if cache_dir is None:
        return read_packed(path)
    st = path.stat()
    folder = cache_dir / f"{path.stem}-{st.st_size}-{st.st_mtime_ns}.packed"
    if (folder / "index.json").is_file():
        try:
            return read_cache(folder)
        except (OSError, ValueError, KeyError) as exc:
            log.warning("language model cache %s unreadable (%s): reading the GGUF file", folder, exc)
    model = read_packed(path)
    megabytes = sum(a.nbytes for a in _flat(model)[0].values()) / 1e6
    # a first run says what it leaves on disk, and where (WARNING: the CLI shows it without a log setup)
    log.warning("first run: writing the language model's weights (%.0f MB) to %s", megabytes, shown(folder.parent))
    try:
        write_cache(folder, model)
    except OSError as exc:  # a read-only home: run without the cache
        log.warning("language model cache %s not written: %s", folder, exc)
        return model
    return replace(model, folder=folder)


def read_packed(path: Path) -> PackedModel:
    """A llama-architecture GGUF file's weights, kept in their blocks where OpenVINO can decompress them."""
    from gguf import GGUFReader

    from namesake.language_model.weights import read_config

    reader = GGUFReader(str(path))
    config = read_config(reader, path)
    tensors = {t.name: t for t in reader.tensors}
    embed = _matrix(tensors["token_embd.weight"])
    layers = [
        {key: _matrix(tensors[f"blk.{i}.{name}.weight"]) for key, name in LAYER_TENSORS.items()}
        for i in range(int(config["n_layer"]))
    ]
    head = _matrix(tensors["output.weight"]) if "output.weight" in tensors else embed
    tokens = [str(t) for t in reader.fields["tokenizer.ggml.tokens"].contents()]
    merges = [str(m) for m in reader.fields["tokenizer.ggml.merges"].contents()]
    out_norm = np.asarray(_matrix(tensors["output_norm.weight"]))
    return PackedModel(config, embed, head, out_norm, layers, tokens, merges)


def _matrix(tensor: object) -> Matrix:
    """One tensor: in blocks for Q4_1 and Q8_0 (with no zero scale), else dequantised to float32."""
    from gguf.quants import dequantize

    kind = tensor.tensor_type.name  # type: ignore[attr-defined]
    raw = np.asarray(tensor.data)  # type: ignore[attr-defined]
    if kind in ("Q4_1", "Q8_0"):
        packed = _q4_1(raw) if kind == "Q4_1" else _q8_0(raw)
        if packed is not None:
            return packed
    values = dequantize(raw, tensor.tensor_type)  # type: ignore[attr-defined]
    return np.ascontiguousarray(values, dtype=np.float32)


def _q4_1(raw: np.ndarray) -> Blocks | None:
    """Q4_1 rows (d, m, 16 bytes: codes 0–15 in the low halves, 16–31 in the high ones) in OpenVINO's u4 order."""
    rows = raw.shape[0]
    blocks = raw.reshape(rows, -1, Q4_1_BYTES)
    d = blocks[..., 0:2].copy().view(np.float16).astype(np.float32)
    m = blocks[..., 2:4].copy().view(np.float16).astype(np.float32)
    if not d.all():
        return None  # a block of one value: no zero point to write it with
    qs = blocks[..., 4:]
    codes = np.concatenate([qs & 15, qs >> 4], axis=-1)  # (rows, blocks, 32), in order
    packed = np.ascontiguousarray(codes[..., 0::2] | (codes[..., 1::2] << 4), dtype=np.uint8)
    return Blocks(packed, d, np.ascontiguousarray(-m / d), (rows, blocks.shape[1] * BLOCK))


def _q8_0(raw: np.ndarray) -> Blocks:
    """Q8_0 rows (d, 32 signed codes) as codes and scales."""
    rows = raw.shape[0]
    blocks = raw.reshape(rows, -1, Q8_0_BYTES)
    d = blocks[..., 0:2].copy().view(np.float16).astype(np.float32)
    codes = np.ascontiguousarray(blocks[..., 2:]).view(np.int8)
    return Blocks(codes, d, None, (rows, blocks.shape[1] * BLOCK))


def _flat(model: PackedModel) -> tuple[dict[str, np.ndarray], dict[str, int]]:
    """Every array of the model by a name that says where it goes back, and the columns of each matrix in blocks
    (its arrays do not say)."""
    arrays: dict[str, np.ndarray] = {"out_norm": model.out_norm}
    columns: dict[str, int] = {}
    named: list[tuple[str, Matrix]] = [("embed", model.embed)]
    if model.head is not model.embed:
        named.append(("head", model.head))
    named += [(f"{i}.{key}", w) for i, layer in enumerate(model.layers) for key, w in layer.items()]
    for name, w in named:
        if not isinstance(w, Blocks):
            arrays[name] = w
            continue
        arrays[f"{name}.codes"], arrays[f"{name}.scale"] = w.codes, w.scale
        if w.zero is not None:
            arrays[f"{name}.zero"] = w.zero
        columns[name] = w.shape[1]
    return arrays, columns


def _matrix_of(arrays: dict[str, np.ndarray], columns: dict[str, int], name: str) -> Matrix:
    """A matrix back from its arrays (`_flat`'s names)."""
    if name not in columns:
        return arrays[name]
    codes = arrays[f"{name}.codes"]
    return Blocks(codes, arrays[f"{name}.scale"], arrays.get(f"{name}.zero"), (codes.shape[0], columns[name]))


def write_cache(folder: Path, model: PackedModel) -> None:
    """One flat file and its index, written aside and renamed: a reader never sees half a cache."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".writing-"))
    arrays, columns = _flat(model)
    index, offset = [], 0
    with (tmp / "blocks.bin").open("wb") as fh:
        for name, a in arrays.items():
            fh.write(np.ascontiguousarray(a).tobytes())
            index.append([name, a.dtype.str, offset, list(a.shape)])
            offset += a.nbytes
    meta = {"config": model.config, "arrays": index, "columns": columns, "tokens": model.tokens, "merges": model.merges}
    (tmp / "index.json").write_text(json.dumps(meta))
    try:
        os.replace(tmp, folder)
    except OSError:  # another process wrote it first
        shutil.rmtree(tmp, ignore_errors=True)


def read_cache(folder: Path) -> PackedModel:
    """The cached model, each array read into memory of its own (the compiled pass copies what it keeps)."""
    meta = json.loads((folder / "index.json").read_text())
    arrays: dict[str, np.ndarray] = {}
    with (folder / "blocks.bin").open("rb") as fh:
        for name, dtype, offset, shape in meta["arrays"]:
            fh.seek(offset)
            arrays[name] = np.fromfile(fh, dtype=np.dtype(dtype), count=int(np.prod(shape))).reshape(shape)
    config, columns = meta["config"], meta["columns"]
    embed = _matrix_of(arrays, columns, "embed")
    head = _matrix_of(arrays, columns, "head") if "head.codes" in arrays or "head" in arrays else embed
    layers = [
        {key: _matrix_of(arrays, columns, f"{i}.{key}") for key in LAYER_TENSORS} for i in range(int(config["n_layer"]))
    ]
    return PackedModel(config, embed, head, arrays["out_norm"], layers, meta["tokens"], meta["merges"], folder)
