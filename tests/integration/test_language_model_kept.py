"""The language model kept on disk: weights and blocks cached once, compiled graphs and the measured precision kept,
and read back by the next process; the numpy pass where OpenVINO is missing."""

from __future__ import annotations

import logging
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from namesake.language_model.local import LocalLanguageModel, bundled_model_path
from namesake.reliability.ports import Window


def test_the_float32_weights_are_cached_once_and_mapped_by_the_next_process(tmp_path: Path) -> None:
    path = bundled_model_path()
    assert path is not None
    windows = [Window("we had some workers", "comp", "CMP", " claims this quarter")]
    first = LocalLanguageModel(path, weights_cache=tmp_path, runtime="numpy")
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir() and not p.name.startswith(".")]
    assert (folder / "index.json").is_file() and (folder / "weights.f32").stat().st_size > 400_000_000
    mapped = LocalLanguageModel(path, weights_cache=tmp_path, runtime="numpy")
    assert mapped.model is not None and isinstance(mapped.model.embed, np.memmap)
    assert mapped.gains(windows) == first.gains(windows)
    (folder / "index.json").write_text("{not json")  # a damaged cache: read the GGUF again, same answers
    again = LocalLanguageModel(path, weights_cache=tmp_path, runtime="numpy")
    assert again.gains(windows) == first.gains(windows)


def test_the_blocks_are_cached_once_and_read_back_by_the_next_process(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = bundled_model_path()
    assert path is not None
    windows = [Window("we had some workers", "comp", "CMP", " claims this quarter")]
    with caplog.at_level(logging.WARNING, logger="namesake.language_model.packed"):
        first = LocalLanguageModel(path, weights_cache=tmp_path, precision="f32")
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir() and not p.name.startswith(".")]
    assert folder.name.endswith(".packed") and 80_000_000 < (folder / "blocks.bin").stat().st_size < 150_000_000
    said = [r.getMessage() for r in caplog.records if "first run" in r.getMessage()]
    # the folder that holds it, not its hashed name: a notice a terminal shows in one line
    assert said[0] == f"first run: writing the language model's weights (112 MB) to {folder.parent}"
    # the compiled graph's size depends on the CPU's instruction set; what and where do not
    kept = rf"first run: keeping the compiled language model \(\d+ MB\) in {re.escape(str(folder.parent))}"
    assert len(said) == 2 and re.fullmatch(kept, said[1])
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="namesake.language_model.packed"):
        cached = LocalLanguageModel(path, weights_cache=tmp_path, precision="f32")
    assert not caplog.records and cached.gains(windows) == first.gains(windows)
    (folder / "index.json").write_text("{not json")  # a damaged cache: read the GGUF again, same answers
    again = LocalLanguageModel(path, weights_cache=tmp_path, precision="f32")
    assert again.gains(windows) == first.gains(windows)


def test_the_compiled_graphs_are_kept_imported_by_the_next_process_and_compiled_again_when_damaged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from namesake.language_model.compiled import _probe_rows, runner_at
    from namesake.language_model.packed import load_packed

    path = bundled_model_path()
    assert path is not None
    model = load_packed(path, tmp_path)
    rows = _probe_rows(model.vocabulary)[:6]
    with caplog.at_level(logging.WARNING, logger="namesake.language_model.compiled"):
        first = runner_at(model, "f32")
    assert not first.imported
    assert "first run: keeping the compiled language model" in caplog.text and str(model.folder.parent) in caplog.text
    caplog.clear()
    body, head = sorted(model.folder.glob("compiled-*")) if model.folder else []
    assert body.suffix == ".body" and head.suffix == ".head" and body.stat().st_size > 50_000_000
    again = runner_at(load_packed(path, tmp_path), "f32")  # what the next process does: no compiling
    assert again.imported and again.precision == "f32"
    np.testing.assert_array_equal(again.log_probs(rows), first.log_probs(rows))
    body.write_bytes(b"not a compiled model")
    with caplog.at_level(logging.WARNING, logger="namesake.language_model.compiled"):
        mended = runner_at(load_packed(path, tmp_path), "f32")
    assert not mended.imported and "compiling it again" in caplog.text
    np.testing.assert_array_equal(mended.log_probs(rows), first.log_probs(rows))
    assert body.stat().st_size > 50_000_000  # kept anew
    assert runner_at(load_packed(path, tmp_path), "f32").imported


def test_the_faster_precision_is_measured_once_kept_and_measured_again_when_unreadable(
    lm: LocalLanguageModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import openvino as ov

    from namesake.language_model import compiled as lm_openvino
    from namesake.language_model.packed import load_packed

    if not lm_openvino.has_bfloat16(ov.Core()):
        pytest.skip("this CPU has no bfloat16: float32 is the only precision, nothing to measure")
    probes: list[str] = []
    speeds = {"bf16": 1.0, "f32": 0.5}

    def timed(runner: lm_openvino.OpenVinoRunner, rows: list[lm_openvino.Row]) -> float:
        probes.append(runner.precision)
        assert len(rows) == lm_openvino.PROBE_WINDOWS
        return speeds[runner.precision]

    monkeypatch.setattr(lm_openvino, "_read_seconds", timed)
    path = bundled_model_path()
    assert path is not None
    model = load_packed(path, tmp_path)
    assert lm_openvino.fastest_runner(model, tmp_path).precision == "f32"  # twice as fast: chosen
    assert sorted(probes) == ["bf16", "f32"]
    (kept,) = tmp_path.glob("precision-*.json")
    speeds["f32"] = 0.95  # what a second measurement would say now: never asked, the kept answer stands
    assert lm_openvino.fastest_runner(model, tmp_path).precision == "f32" and len(probes) == 2
    kept.write_text("{not json")
    assert lm_openvino.fastest_runner(model, tmp_path).precision == "bf16"  # measured again: within the margin
    assert len(probes) == 4 and '"bf16"' in kept.read_text()


def test_without_openvino_the_numpy_pass_runs_and_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = bundled_model_path()
    assert path is not None
    monkeypatch.setitem(sys.modules, "openvino", None)  # what an import finds where no wheel was installed
    with caplog.at_level(logging.WARNING, logger="namesake.language_model.local"):
        scorer = LocalLanguageModel(path, weights_cache=tmp_path)
    assert scorer.runtime == "numpy float32"
    assert any("OpenVINO unavailable" in r.getMessage() for r in caplog.records)
    assert scorer.gains([Window("thanks for joining", "us", "US", " today")])[0] < -3


MEMORY_PROBE = """
import sys
from pathlib import Path

from namesake.language_model.local import LocalLanguageModel, bundled_model_path
from namesake.reliability.ports import Window


def resident() -> int:
    return next(int(ln.split()[1]) for ln in open("/proc/self/status") if ln.startswith("VmRSS")) // 1024


LocalLanguageModel(bundled_model_path(), weights_cache=Path(sys.argv[1]), precision="f32")  # writes the cache
before = resident()
lm = LocalLanguageModel(bundled_model_path(), weights_cache=Path(sys.argv[1]), precision="f32")
lm.gains([Window("thanks for joining", "us", "US", " today")] * 8)
print(resident() - before)
"""


def test_the_compiled_model_holds_one_compact_copy_of_its_weights(tmp_path: Path) -> None:
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", MEMORY_PROBE, str(tmp_path)], capture_output=True, text=True, timeout=600, check=True
    )
    grown = int(done.stdout.split()[-1])
    # ~0.3 GB: OpenVINO's copy of the blocks and its buffers (the float32 weights and their compiled copy: ~1.5 GB)
    assert grown < 600, done.stdout
