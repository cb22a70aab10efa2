"""The bundled language model (SmolLM2-135M compiled by OpenVINO, numpy as reference), and the pipeline reading."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import numpy as np
import pytest

from namesake.core.settings import Settings
from namesake.domain.types import Candidate, CanonicalDictionary, Disposition, Segment
from namesake.language_model import local as language_model
from namesake.language_model.local import LocalLanguageModel, bundled_model_path, load_language_model
from namesake.reliability.pipeline import PipelineInputs, run_stages
from namesake.reliability.ports import LanguageModel, Window
from namesake.reliability.reading import GAIN, PAIR_GAIN, PAIR_READS, window_of
from namesake.reliability.reading import needs_reading as reading_needed
from namesake.reliability.refusal_policy import REFUSED_READ_GAIN, refusal_key

# an everyday word where it is meant (the first three) and the name where it is (the last two)
EVERYDAY = [
    Window("I think that", "bodes", "Biden's", " well for the company"),
    Window("thanks for joining", "us", "US", " today"),
    Window("our sales", "teams", "Teams", " worked hard"),
    Window("the United States and the", "us", "US", " market"),
    Window("our Microsoft", "teams", "Teams", " product is growing"),
]


def test_the_model_ships_in_a_package_and_is_a_context_model(lm: LocalLanguageModel) -> None:
    path = bundled_model_path()
    assert path is not None and path.stat().st_size > 50_000_000
    assert isinstance(lm, LanguageModel)
    assert lm.runtime.startswith("openvino") and lm.model is None  # no float32 copy beside the compiled pass


def test_the_compiled_pass_keeps_the_files_blocks_and_decompresses_them_to_the_dequantised_values() -> None:
    from gguf import GGUFReader
    from gguf.quants import dequantize

    from namesake.language_model.packed import Blocks, read_packed

    path = bundled_model_path()
    assert path is not None
    packed = read_packed(path)
    assert len(packed.layers) == 30 and packed.embed.shape == (49152, 576) and packed.head is packed.embed
    assert isinstance(packed.embed, Blocks) and packed.embed.bits == 8  # Q8_0
    matrices = [packed.layers[0][k] for k in ("q", "k", "v", "o", "gate", "up", "down")]
    assert all(isinstance(w, Blocks) and w.bits == 4 for w in matrices)  # Q4_1
    tensors = {t.name: t for t in GGUFReader(str(path)).tensors}
    which = np.array([0, 7, 1000, 49151])
    embed = dequantize(tensors["token_embd.weight"].data, tensors["token_embd.weight"].tensor_type)
    assert np.array_equal(packed.embed.rows(which), embed[which])  # (code)·scale: exact
    gate = tensors["blk.3.ffn_gate.weight"]
    exact = dequantize(gate.data, gate.tensor_type)[which[:2]]
    # (code − z)·d with z = −m/d for d·code + m: the last bit at most
    assert np.allclose(packed.layers[3]["gate"].rows(which[:2]), exact, rtol=1e-6, atol=1e-6)


def test_a_reader_hears_the_everyday_word_where_it_is_meant_and_the_name_where_it_is() -> None:
    scorer = load_language_model()
    assert scorer is not None
    gains = scorer.gains(EVERYDAY)
    assert gains[0] < -3 and gains[1] < -3 and gains[2] < -3
    assert gains[3] > 3 and gains[4] > 3


def test_batched_scoring_equals_one_at_a_time_and_is_cached(lm: LocalLanguageModel) -> None:
    windows = [Window(f"in quarter {i} we saw that the", "revenue", "Revenue", " grew") for i in range(5)]
    windows.append(Window("", "cup", "Cup", " of coffee"))  # nothing on the left
    together = lm.gains(windows)
    lm.clear_cache()
    alone = [lm.gains([w])[0] for w in windows]
    # bfloat16 rounding depends a little on what shares the line: ~0.01 nat on average, one window of six moved by
    # 0.0104 on one AVX-512 BF16 core without AMX and 0.0675 on another; float32 passes agree within 2e-3
    drift = np.abs(np.array(together) - np.array(alone))
    if "bf16" in lm.runtime:
        assert drift.mean() < 0.03 and drift.max() < 0.3
    else:
        assert drift.max() < 2e-3
    before = len(lm._cache)
    assert lm.gains(windows) == alone and len(lm._cache) == before


def _anonymous_mb() -> float:
    """This process's anonymous resident memory (what the kernel cannot drop), in MB."""
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"RssAnon:\s+(\d+)", status).group(1)) / 1024  # type: ignore[union-attr]


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_an_idle_model_gives_its_working_memory_back_and_reads_the_same_after(lm: LocalLanguageModel) -> None:
    if lm._compiled is None:
        pytest.skip("the numpy pass keeps no working buffers")
    from namesake.core.caches import give_back

    # a full batch: every line of a batch, each window its own line (the head's logits at their widest)
    said = "the board of our company said that the"
    windows = [Window(f"in quarter {i} {said}", "teams", "Teams", " grew") for i in range(60)]
    lm.clear_cache()
    before = lm.gains(windows)
    give_back()  # what the heap can give back without the runtime's help
    held = _anonymous_mb()
    lm.release_buffers()
    give_back()
    assert held - _anonymous_mb() > 40  # ~100 MB on two cores, the head's (128, 49,152) logits among it
    lm.clear_cache()
    assert lm.gains(windows) == before


def test_reads_led_by_short_lived_threads_all_run_on_the_runners_one_thread(lm: LocalLanguageModel) -> None:
    """The runtime keeps state for every thread that ever ran an inference: a server's request threads come and go."""
    import threading

    runner = lm._compiled
    if runner is None:
        pytest.skip("the numpy pass has no runtime of its own")
    ran_on: set[int] = set()
    read = runner._read_lines

    def recording(rows: object, lines: list[list[int]]) -> np.ndarray:
        ran_on.add(threading.get_ident())
        return read(rows, lines)  # type: ignore[arg-type]

    runner._read_lines = recording  # type: ignore[method-assign]
    try:
        lm.clear_cache()
        alone = lm.gains(EVERYDAY)
        got: list[list[float]] = []

        def request() -> None:
            lm.clear_cache()  # read again, not answered from the cache
            got.append(lm.gains(EVERYDAY))

        callers = [threading.Thread(target=request) for _ in range(3)]
        for t in callers:
            t.start()
            t.join()  # each reads, then ends, as an idle request thread does
    finally:
        del runner._read_lines
    assert len(ran_on) == 1 and not ran_on & {t.ident for t in callers} and threading.get_ident() not in ran_on
    assert got == [alone] * 3


def test_a_transcripts_gains_do_not_depend_on_what_the_process_read_before(lm: LocalLanguageModel) -> None:
    # a worker reads many transcripts: windows it already read must not change how the next one is batched
    speech = (
        "so the teams in our logistics group worked with us on the market and the cup of coffee sales in the"
        " quarter grew while our contract logistics business and the microsoft teams product kept growing"
    )
    text = speech.split()
    finals = {"teams": "Teams", "logistics": "Logistics", "us": "US", "cup": "Cup", "microsoft": "Microsoft"}
    windows = [
        Window(" ".join(text[max(0, i - 8) : i]), word, finals[word], " " + " ".join(text[i + 1 : i + 4]))
        for i, word in enumerate(text)
        if word in finals
    ]
    lm.clear_cache()
    fresh = lm.gains(windows)
    lm.clear_cache()
    lm.gains(windows[::3])  # an earlier transcript shared a few of them
    assert lm.gains(windows) == fresh


def test_a_missing_model_is_said_once_and_the_pipeline_runs_without_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    missing = str(tmp_path / "nowhere.gguf")
    language_model._LOADED.pop((missing, "openvino", "auto"), None)
    with caplog.at_level(logging.WARNING, logger="namesake.language_model.local"):
        assert load_language_model(missing) is None
        assert load_language_model(missing) is None
    assert sum("language model not found" in r.getMessage() for r in caplog.records) == 1
    corrupt = tmp_path / "corrupt.gguf"
    corrupt.write_bytes(b"GGUF not really")
    with caplog.at_level(logging.WARNING, logger="namesake.language_model.local"):
        assert load_language_model(str(corrupt)) is None
    assert any("could not load" in r.getMessage() for r in caplog.records)


def test_a_window_is_the_words_around_the_span_as_written() -> None:
    text = "Well, I think that bodes well for the company, and for us."
    start = text.index("bodes")
    w = window_of(text, start, start + 5, "Biden's", left_words=3, right_words=4)
    assert w == Window("I think that", "bodes", "Biden's", " well for the company,")
    assert window_of(text, 0, 4, "Wells", left_words=8, right_words=0) == Window("", "Well", "Wells", ",")
    last = text.rindex("for")
    assert window_of(text, last, last + 3, "Ford", left_words=1, right_words=3) == Window("and", "for", "Ford", " us.")


def test_only_words_in_use_that_could_be_shown_are_read() -> None:
    def cand(original: str, final: str, **signals: float) -> Candidate:
        c = Candidate("1", 0, len(original), original, final, "ORG", "canonical", signals=dict(signals))
        c.disposition, c.confidence = Disposition.PENDING, 0.4
        return c

    def needs_reading(c: Candidate, language: str) -> bool:
        return reading_needed(c, language, read_from=0.15)

    assert needs_reading(cand("teams", "Teams", everyday_word=0.8, form_only=1, case_only=1), "en")
    assert needs_reading(cand("bodes", "Biden's", everyday_word=0.5), "en")
    # a word in use, however rare, is read: "genomics" (Zipf 2.99) is the noun as often as the company's name
    assert needs_reading(cand("genomics", "Genomics", everyday_word=2.99 / 7, form_only=1, case_only=1), "en")
    assert not needs_reading(cand("Cytova", "Cytiva", everyday_word=0.1), "en")  # an unknown form: the list knows best
    assert not needs_reading(cand("kword", "Kword", everyday_word=1.4 / 7, form_only=1, case_only=1), "en")
    assert not needs_reading(cand("e commerce", "e-commerce", everyday_word=0.8, form_only=1), "en")
    assert not needs_reading(cand("bodes", "Biden's", everyday_word=0.5), "fr")  # the model reads English
    # below the suggest bar, a rewrite is read from RELIABILITY_READ_FROM: what it reads may lift it into the queue
    dropped = cand("bodes", "Biden's", everyday_word=0.5)
    dropped.disposition, dropped.confidence = Disposition.DROPPED, 0.16
    assert needs_reading(dropped, "en")
    dropped.confidence = 0.14
    assert not needs_reading(dropped, "en")
    shown = cand("bodes", "Biden's", everyday_word=0.5)
    shown.confidence = 0.1  # shown below the reading floor: the first trees' confidence decides alone
    assert not needs_reading(shown, "en")
    shown.memory_bonus = 0.05  # the memory put it in the queue: read whatever its confidence
    assert needs_reading(shown, "en")
    repeating = cand("Coulter", "Beckman Coulter", everyday_word=0.5)
    repeating.disposition, repeating.confidence, repeating.repeats_neighbour = Disposition.DROPPED, 0.3, True
    assert not needs_reading(repeating, "en")  # dropped whatever it reads


LISTED = CanonicalDictionary({"acronyms": ["CMP"], "orgs": ["Microsoft Teams", "Teams"]})


def test_the_pipeline_leaves_an_everyday_word_alone_unless_the_words_around_it_back_the_name(
    lm: LocalLanguageModel,
) -> None:
    segs = [
        Segment("1", "We saw higher workers comp claims in the third quarter."),
        Segment("2", "Our sales teams worked hard across every region this quarter."),
        Segment("3", "Customers now use Microsoft teams for every meeting they hold."),
    ]
    without, _ = run_stages(PipelineInputs(segs, LISTED), Settings(reliability_language_model="none"))
    alone = {c.original: c.disposition for c in without}
    assert alone["teams"] is Disposition.AUTO_APPLIED  # the trees alone
    assert "comp" not in alone  # "workers CMP claims": letters nobody says as a word, never proposed (nor read)
    kept, stats = run_stages(PipelineInputs(segs, LISTED), Settings(), language_model=lm)
    assert stats.language_model["read"] >= 2 and "language_model" in stats.stage_seconds
    by_span = {(c.segment_id, c.original): c for c in kept}
    assert ("1", "comp") not in by_span
    teams = by_span.get(("2", "teams"))  # "our sales Teams worked": nobody says that
    assert teams is None or (teams.disposition is not Disposition.AUTO_APPLIED and teams.signals[GAIN] < 0)
    backed = by_span[("3", "Microsoft teams")]
    assert backed.disposition is Disposition.AUTO_APPLIED and backed.signals[GAIN] > 0
    assert backed.signals[PAIR_READS] == 1 and backed.signals[PAIR_GAIN] == backed.signals[GAIN]  # how its pair reads


def test_a_refused_pair_comes_back_by_itself_only_where_its_sentence_reads_the_name(lm: LocalLanguageModel) -> None:
    """Rejecting "teams" → Teams in "our sales teams" says nothing about "using Microsoft teams"; it is never queued."""
    segs = [
        Segment("1", "We kicked that off virtually, using Zoom and Microsoft teams, just two weeks ago."),
        Segment("2", "Our sales teams did very well this quarter, and the service teams too."),
    ]
    teams = CanonicalDictionary({"orgs": ["Teams", "Zoom"]})
    fresh, _ = run_stages(PipelineInputs(segs, teams), Settings(), language_model=lm)
    proposed = {(c.segment_id, c.disposition) for c in fresh if c.original == "teams"}
    assert ("1", Disposition.AUTO_APPLIED) in proposed
    # "our sales teams" is proposed by the list alone; pending or applied depends on the host's precision (its pair's
    # mean reading sits on a split of the reading trees: −4.28 nats in bfloat16 on AVX-512, −4.31 in float32)
    assert {d for seg, d in proposed if seg == "2"} <= {Disposition.PENDING, Disposition.AUTO_APPLIED}
    assert any(seg == "2" for seg, _ in proposed)
    refused = {refusal_key("teams", "Teams"): 1}
    kept, stats = run_stages(PipelineInputs(segs, teams, refused=refused), Settings(), language_model=lm)
    back = [c for c in kept if c.original == "teams"]
    assert [(c.segment_id, c.disposition) for c in back] == [("1", Disposition.AUTO_APPLIED)]
    assert back[0].signals[GAIN] >= REFUSED_READ_GAIN and back[0].audit()["refused"] == 1.0
    assert stats.refused_by_user == 2  # the two in "our sales teams … the service teams" stay refused
    unread, _ = run_stages(PipelineInputs(segs, teams, refused=refused), Settings(reliability_language_model="none"))
    assert not [c for c in unread if c.original == "teams"]  # nothing read: the refusal holds everywhere
    # refused among these very words (the same sentence in the next call): it holds whatever the sentence reads
    around = {"teams": ["off virtually, using Zoom and Microsoft teams, just two weeks ago"]}
    there = PipelineInputs(segs, teams, refused=refused, refused_around=around)
    assert not [c for c in run_stages(there, Settings(), language_model=lm)[0] if c.original == "teams"]


def test_the_compiled_pass_reads_as_the_numpy_pass_does(lm: LocalLanguageModel, tmp_path: Path) -> None:
    path = bundled_model_path()
    assert path is not None and lm.runtime.startswith("openvino")
    reference = LocalLanguageModel(path, weights_cache=tmp_path, runtime="numpy")
    windows = [
        *EVERYDAY,
        Window("we had some workers", "comp", "CMP", " claims this quarter"),
        Window("", "cup", "Cup", " of coffee"),
        Window("revenue from the", "logistics", "Logistics", " segment grew in the quarter"),
    ]
    compiled, numpy_pass = np.array(lm.gains(windows)), np.array(reference.gains(windows))
    # bfloat16 in the body drifts ~0.1 nat on average (docs/benchmarks/speed.md); never the side a reading falls on
    assert np.abs(compiled - numpy_pass).max() < 0.75, (compiled, numpy_pass)
    assert (np.sign(compiled) == np.sign(numpy_pass)).all()


def test_the_compiled_pass_in_float32_reads_as_the_numpy_pass_does(lm: LocalLanguageModel, tmp_path: Path) -> None:
    from namesake.language_model.compiled import OpenVinoRunner
    from namesake.language_model.packed import read_packed

    path = bundled_model_path()
    assert path is not None
    f32 = LocalLanguageModel(path, weights_cache=tmp_path, runtime="openvino", precision="f32")
    assert f32.runtime == "openvino f32"
    reference = LocalLanguageModel(path, weights_cache=tmp_path, runtime="numpy")
    compiled, numpy_pass = np.array(f32.gains(EVERYDAY)), np.array(reference.gains(EVERYDAY))
    assert np.abs(compiled - numpy_pass).max() < 0.05, (compiled, numpy_pass)  # the same arithmetic, reordered
    assert OpenVinoRunner(read_packed(path), precision="f32").precision == "f32"


def test_each_reading_has_its_own_log_probability_and_their_difference_is_the_gain(lm: LocalLanguageModel) -> None:
    windows = [
        Window("thanks for joining", "us", "US", " today"),
        Window("our Microsoft", "teams", "Teams", " product"),
    ]
    both = lm.readings(windows)
    assert both.shape == (2, 2) and (both < 0).all()
    assert (
        both[0, 1] < both[0, 0] and both[1, 1] > both[1, 0]
    )  # "joining US today" reads worse, "Microsoft Teams" better
    assert np.allclose(both[:, 1] - both[:, 0], lm.gains(windows), atol=1e-3)
