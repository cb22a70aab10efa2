"""The language model's weights for the numpy pass: read and dequantised from its GGUF file, or mapped from a
float32 cache (the compiled pass keeps the file's blocks instead: `packed`)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import Tokenizer

LAYER_ARRAYS = ("attn_norm", "qkv", "o", "ffn_norm", "gate_up", "down")
Parts = tuple[dict[str, float], dict[str, np.ndarray], list[str], list[str]]


def read_gguf(path: Path) -> Parts:
    """Dequantise a llama-architecture GGUF into the matrices the forward pass multiplies by."""
    from gguf import GGUFReader
    from gguf.quants import dequantize

    reader = GGUFReader(str(path))
    config = read_config(reader, path)
    w = {t.name: np.ascontiguousarray(dequantize(t.data, t.tensor_type), dtype=np.float32) for t in reader.tensors}
    arrays = {
        "embed": w["token_embd.weight"],
        "head_t": np.ascontiguousarray(w.get("output.weight", w["token_embd.weight"]).T),
        "out_norm": w["output_norm.weight"],
    }
    for i in range(int(config["n_layer"])):
        arrays[f"{i}.attn_norm"] = w[f"blk.{i}.attn_norm.weight"]
        arrays[f"{i}.qkv"] = np.concatenate([w[f"blk.{i}.attn_{n}.weight"] for n in ("q", "k", "v")]).T.copy()
        arrays[f"{i}.o"] = w[f"blk.{i}.attn_output.weight"].T.copy()
        arrays[f"{i}.ffn_norm"] = w[f"blk.{i}.ffn_norm.weight"]
        arrays[f"{i}.gate_up"] = np.concatenate([w[f"blk.{i}.ffn_gate.weight"], w[f"blk.{i}.ffn_up.weight"]]).T.copy()
        arrays[f"{i}.down"] = w[f"blk.{i}.ffn_down.weight"].T.copy()
    tokens = [str(t) for t in reader.fields["tokenizer.ggml.tokens"].contents()]
    merges = [str(m) for m in reader.fields["tokenizer.ggml.merges"].contents()]
    return config, arrays, tokens, merges


def read_config(reader: Any, path: Path) -> dict[str, float]:
    """The shape of a llama-architecture model, from its GGUF header; ValueError for another architecture."""
    meta = {k: f.contents() for k, f in reader.fields.items() if not k.startswith("tokenizer.ggml.")}
    if meta["general.architecture"] != "llama":
        raise ValueError(f"{path.name}: architecture {meta['general.architecture']!r}, only 'llama' is supported")
    return {
        "n_layer": int(meta["llama.block_count"]),
        "n_head": int(meta["llama.attention.head_count"]),
        "n_kv": int(meta["llama.attention.head_count_kv"]),
        "eps": float(meta["llama.attention.layer_norm_rms_epsilon"]),
        "rope_base": float(meta.get("llama.rope.freq_base", 10000.0)),
    }


def write_cache(folder: Path, config: dict[str, float], arrays: dict[str, np.ndarray], tokens: list[str],
                 merges: list[str]) -> None:  # fmt: skip
    """One flat float32 file and its index, written aside and renamed: a reader never sees half a cache."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".writing-"))
    index, offset = [], 0
    with (tmp / "weights.f32").open("wb") as fh:
        for name, a in arrays.items():
            fh.write(np.ascontiguousarray(a, dtype=np.float32).tobytes())
            index.append([name, offset, list(a.shape)])
            offset += a.size
    (tmp / "index.json").write_text(json.dumps({"config": config, "arrays": index, "tokens": tokens, "merges": merges}))
    try:
        os.replace(tmp, folder)
    except OSError:  # another process wrote it first
        shutil.rmtree(tmp, ignore_errors=True)


def read_cache(folder: Path) -> Parts:
    """The cached matrices as views of one copy-on-write memory map: shared pages, and OpenVINO may wrap them."""
    index = json.loads((folder / "index.json").read_text())
    flat = np.memmap(folder / "weights.f32", dtype=np.float32, mode="c")  # copy-on-write: OpenVINO shares it
    arrays = {}
    for name, offset, shape in index["arrays"]:
        arrays[name] = flat[offset : offset + int(np.prod(shape))].reshape(shape)
    return index["config"], arrays, index["tokens"], index["merges"]


def tokenizer_of(tokens: list[str], merges: list[str]) -> Tokenizer:
    """The model's byte-level BPE (digits split one by one, as SmolLM2's own tokenizer does)."""
    from tokenizers import decoders, pre_tokenizers
    from tokenizers.models import BPE

    vocab = {t: i for i, t in enumerate(tokens)}
    pairs = [(a, b) for a, _, b in (m.partition(" ") for m in merges)]
    tok = Tokenizer(BPE(vocab=vocab, merges=pairs))
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([t for t in tokens if t.startswith("<|") and t.endswith("|>")])  # the chat markers
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    return tok
