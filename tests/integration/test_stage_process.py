"""The server's stage process: a cancel stops the child's work, a child that dies is replaced, one recycled at idle
gives its memory back whole and answers the same."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from namesake.analysis import StageProcess
from namesake.core import CancelledWork, Settings, WorkerError, cancellable
from namesake.domain import CanonicalDictionary, Segment
from namesake.reliability import PipelineInputs

LISTS = {"persons": ["Rainer Blair"], "orgs": ["Cytiva", "Beckman Coulter"]}
SMALL = PipelineInputs(
    [
        Segment("1", "Good morning, this is Reiner Blair."),
        Segment("2", "Our Cytova unit grew, and Backman Coulter too."),
    ],
    CanonicalDictionary(dict(LISTS)),
)


def long_inputs() -> PipelineInputs:
    """Seconds of stage work: many segments of near misses and everyday words for the model to read."""
    line = "Reiner Blair said our sales teams met Cytova and Backman Coulter buyers in the west region this quarter. "
    return PipelineInputs([Segment(str(i), line * 12) for i in range(400)], CanonicalDictionary(dict(LISTS)))


@pytest.fixture(scope="module")
def stages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StageProcess]:
    process = StageProcess(Settings(namesake_data_dir=tmp_path_factory.mktemp("stage-data")))
    assert process.wait_ready()
    yield process
    process.close()


def _answer(stages: StageProcess) -> list[tuple[str, str, str]]:
    kept, _ = stages.run(SMALL, None)
    return [(c.original, c.final, c.disposition.value) for c in kept]


def _child(stages: StageProcess) -> psutil.Process:
    child = stages._child
    assert child is not None and child.process.pid is not None
    return psutil.Process(child.process.pid)


def test_a_cancel_stops_the_childs_work_within_seconds_and_the_child_goes_on_serving(stages: StageProcess) -> None:
    child = _child(stages)
    gone = threading.Event()
    threading.Timer(1.0, gone.set).start()
    t0 = time.monotonic()
    with pytest.raises(CancelledWork), cancellable(gone):
        stages.run(long_inputs(), None)
    assert time.monotonic() - t0 < 5
    busy = child.cpu_times().user + child.cpu_times().system
    time.sleep(1.0)
    assert child.cpu_times().user + child.cpu_times().system - busy < 0.2  # its CPU is free
    assert ("Cytova", "Cytiva", "auto_applied") in _answer(stages)


def test_a_child_killed_mid_analysis_fails_that_analysis_and_the_next_one_runs_in_a_new_child(
    stages: StageProcess,
) -> None:
    before = _answer(stages)
    child = _child(stages)
    threading.Timer(1.0, lambda: os.kill(child.pid, signal.SIGKILL)).start()
    with pytest.raises(WorkerError, match="ended while analysing"):
        stages.run(long_inputs(), None)
    assert _answer(stages) == before
    assert _child(stages).pid != child.pid


def test_recycled_at_idle_the_child_ends_and_a_fresh_one_answers_the_same(stages: StageProcess) -> None:
    before, old = _answer(stages), _child(stages)
    busy = threading.Thread(target=stages.run, args=(long_inputs(), None))
    busy.start()
    time.sleep(0.5)
    assert not stages.recycle()  # not while an analysis runs in it
    busy.join()
    assert stages.recycle()
    old.wait(timeout=10)
    assert not old.is_running()
    assert stages.wait_ready() and _child(stages).pid != old.pid
    assert _answer(stages) == before


ORPHAN = """
import sys, time
from namesake.analysis import StageProcess
from namesake.core import Settings

if __name__ == "__main__":
    stages = StageProcess(Settings(namesake_data_dir=sys.argv[1]))
    assert stages.wait_ready()
    print(stages._child.process.pid, flush=True)
    time.sleep(600)
"""


def test_a_stage_process_whose_server_is_killed_ends_by_itself(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(ORPHAN)
    server = subprocess.Popen([sys.executable, str(script), str(tmp_path / "data")], stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    child = psutil.Process(int(server.stdout.readline()))
    server.kill()
    server.wait()
    child.wait(timeout=10)  # psutil.TimeoutExpired if it outlived its server
