"""The llama architecture's forward pass in numpy (float32 through BLAS): the reference the compiled pass matches.

SmolLM2-135M's weights, read and dequantised by `weights`, its byte-level BPE rebuilt with `tokenizers`.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from namesake.core import shown
from namesake.language_model.weights import LAYER_ARRAYS, read_cache, read_gguf, write_cache

log = logging.getLogger(__name__)

# Rows of the output head computed together: the (rows, vocabulary) logits stay in the cache.
HEAD_ROWS = 32


def _rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    out: np.ndarray = x * (1.0 / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)) * weight
    return out


def _rope_tables(dim: int, length: int, base: float) -> tuple[np.ndarray, np.ndarray]:
    inv = base ** (-np.arange(0, dim, 2, dtype=np.float64) / dim)
    angles = np.outer(np.arange(length), inv)
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def _rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """Rotate adjacent pairs (llama.cpp's GGUF stores Q and K permuted for this layout); x: (N, H, D)."""
    even, odd = x[..., 0::2], x[..., 1::2]
    c, s = cos, sin
    out = np.empty_like(x)
    out[..., 0::2] = even * c - odd * s
    out[..., 1::2] = even * s + odd * c
    return out


class LlamaModel:
    """The llama-architecture forward pass over a batch of right-padded token sequences."""

    def __init__(self, config: dict[str, float], arrays: dict[str, np.ndarray], tokens: list[str], merges: list[str]):
        self.n_layer = int(config["n_layer"])
        self.n_head = int(config["n_head"])
        self.n_kv = int(config["n_kv"])
        self.eps = float(config["eps"])
        self.rope_base = float(config["rope_base"])
        self.embed = arrays["embed"]  # (vocab, d)
        self.head_t = arrays["head_t"]  # (d, vocab): tied to the embedding in SmolLM2
        self.out_norm = arrays["out_norm"]
        self.layers = [{k: arrays[f"{i}.{k}"] for k in LAYER_ARRAYS} for i in range(self.n_layer)]
        self.d = self.embed.shape[1]
        self.head_dim = self.d // self.n_head
        self.tokens, self.merges = tokens, merges

    @classmethod
    def load(cls, path: Path, cache_dir: Path | None = None) -> LlamaModel:
        """The model from its GGUF file, through a float32 cache when one is given: the first process pays the
        dequantising (~4 s), the next ones map the cache (~0.1 s) and share its pages."""
        folder = None
        if cache_dir is not None:
            st = path.stat()
            folder = cache_dir / f"{path.stem}-{st.st_size}-{st.st_mtime_ns}"
            if (folder / "index.json").is_file():
                try:
                    return cls(*read_cache(folder))
                except (OSError, ValueError, KeyError) as exc:
                    log.warning("language model cache %s unreadable (%s): reading the GGUF file", folder, exc)
        parts = read_gguf(path)
        if folder is not None:
            megabytes = sum(a.nbytes for a in parts[1].values()) / 1e6
            # a first run says what it leaves on disk, and where (WARNING: the CLI shows it without a log setup)
            log.warning(
                "first run: writing the language model's float32 weights (%.0f MB) to %s",
                megabytes,
                shown(folder.parent),
            )
            try:
                write_cache(folder, *parts)
            except OSError as exc:  # a read-only home: run without the cache
                log.warning("language model cache %s not written: %s", folder, exc)
        return cls(*parts)

    def forward(
        self,
        ids: np.ndarray,
        lengths: np.ndarray,
        start: np.ndarray | None = None,
        past: list[tuple[np.ndarray, np.ndarray]] | None = None,
        past_valid: np.ndarray | None = None,
    ) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
        """Hidden states (B, T, d) of right-padded rows, and each layer's keys and values for a continuation.

        Only the `lengths` real tokens of each row go through the matrix products (padding costs nothing there);
        row b's tokens stand at positions start[b], start[b] + 1, …. `past`: keys and values (B·kv, S, D) of a
        prefix each row continues, `past_valid` (B, S) which of them are real.
        """
        b, t = ids.shape
        hd, nh, nkv = self.head_dim, self.n_head, self.n_kv
        group = nh // nkv
        real = (np.arange(t)[None, :] < lengths[:, None]).ravel()
        where = np.flatnonzero(real)
        offsets = np.zeros(b, dtype=np.int64) if start is None else start
        positions = (np.arange(t)[None, :] + offsets[:, None]).ravel()[where]
        cos, sin = _rope_tables(hd, int(positions.max()) + 1, self.rope_base)
        cos, sin = cos[positions][:, None, :], sin[positions][:, None, :]
        # queries of one key-value head are one matrix: (B·kv, g·T, D) against (B·kv, S + T, D)
        causal = np.tile(np.triu(np.full((t, t), -np.inf, dtype=np.float32), 1), (group, 1))
        prefix_mask = None
        if past is not None and past_valid is not None:
            prefix_mask = np.repeat(np.where(past_valid, 0.0, -np.inf).astype(np.float32), nkv, axis=0)[:, None, :]
        x = self.embed[ids.ravel()[where]]
        n = len(where)
        scale = np.float32(1.0 / np.sqrt(hd))
        kv_out: list[tuple[np.ndarray, np.ndarray]] = []
        for i, layer in enumerate(self.layers):
            qkv = _rms_norm(x, layer["attn_norm"], self.eps) @ layer["qkv"]
            q = _grid(_rope(qkv[:, : nh * hd].reshape(n, nh, hd), cos, sin) * scale, where, b * t)
            k = _grid(_rope(qkv[:, nh * hd : (nh + nkv) * hd].reshape(n, nkv, hd), cos, sin), where, b * t)
            v = _grid(qkv[:, (nh + nkv) * hd :].reshape(n, nkv, hd), where, b * t)
            q = q.reshape(b, t, nkv, group, hd).transpose(0, 2, 3, 1, 4).reshape(b * nkv, group * t, hd)
            k = k.reshape(b, t, nkv, hd).transpose(0, 2, 1, 3).reshape(b * nkv, t, hd)
            v = v.reshape(b, t, nkv, hd).transpose(0, 2, 1, 3).reshape(b * nkv, t, hd)
            kv_out.append((k, v))
            att = q @ k.transpose(0, 2, 1) + causal
            if past is not None and prefix_mask is not None:
                pk, pv = past[i]
                att = np.concatenate([q @ pk.transpose(0, 2, 1) + prefix_mask, att], axis=-1)
                v = np.concatenate([pv, v], axis=1)
            att = np.exp(att - att.max(axis=-1, keepdims=True))
            att /= att.sum(axis=-1, keepdims=True)
            o = (att @ v).reshape(b, nkv, group, t, hd).transpose(0, 3, 1, 2, 4).reshape(b * t, nh * hd)[where]
            x = x + o @ layer["o"]
            gu = _rms_norm(x, layer["ffn_norm"], self.eps) @ layer["gate_up"]
            gate, up = gu[:, : gu.shape[1] // 2], gu[:, gu.shape[1] // 2 :]
            x = x + ((gate / (1.0 + np.exp(-gate))) * up) @ layer["down"]
        return _grid(_rms_norm(x, self.out_norm, self.eps), where, b * t).reshape(b, t, self.d), kv_out

    def log_probs(self, hidden: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """log P(target) for each row of (n, d) hidden states: the head runs on the rows asked for only, a block
        at a time (a (n, 49152) matrix at once would be memory-bound, not compute-bound)."""
        out = np.empty(len(targets), dtype=np.float32)
        for i in range(0, len(targets), HEAD_ROWS):
            logits = hidden[i : i + HEAD_ROWS] @ self.head_t
            rows = np.arange(len(logits))
            picked = logits[rows, targets[i : i + HEAD_ROWS]]
            top = logits.max(axis=1)
            logits -= top[:, None]
            np.exp(logits, out=logits)
            out[i : i + HEAD_ROWS] = picked - top - np.log(logits.sum(axis=1))
        return out


def _grid(packed: np.ndarray, where: np.ndarray, cells: int) -> np.ndarray:
    """Packed real-token rows back on the padded (B·T, …) grid, zeros elsewhere."""
    out = np.zeros((cells, *packed.shape[1:]), dtype=np.float32)
    out[where] = packed
    return out
