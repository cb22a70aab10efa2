"""A server runs on the C library's malloc (what its heap trim can give back); the processes it starts on CPython's."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/environ"), reason="reads /proc")

# What the interpreter of a process was started with (what it read its allocator from): /proc/self/environ.
SCRIPT = """
import json, multiprocessing, os, sys
from namesake.core import with_trimmable_allocator

def allocator():
    started = open("/proc/self/environ", "rb").read().split(b"\\0")
    chosen = [e.split(b"=", 1)[1].decode() for e in started if e.startswith(b"PYTHONMALLOC=")]
    return chosen[0] if chosen else "pymalloc"

def report(queue):
    queue.put(allocator())

if __name__ == "__main__":
    with_trimmable_allocator()
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    child = context.Process(target=report, args=(queue,))
    child.start()
    print(json.dumps({"argv": sys.argv[1:], "here": allocator(), "child": queue.get(timeout=60)}))
    child.join()
"""


def _run(tmp_path: object, **env: str) -> dict[str, object]:
    script = os.path.join(str(tmp_path), "serve_like.py")
    with open(script, "w") as fh:
        fh.write(SCRIPT)
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONMALLOC", "NAMESAKE_ALLOCATOR_CHOSEN")}
    done = subprocess.run(
        [sys.executable, script, "--port", "1"], env=clean | env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_the_server_starts_again_on_malloc_with_its_arguments_and_its_stage_process_runs_on_pymalloc(
    tmp_path: object,
) -> None:
    got = _run(tmp_path)
    assert got["here"] == "malloc" and got["argv"] == ["--port", "1"]
    assert got["child"] == "pymalloc"


def test_an_allocator_the_operator_chose_is_kept_for_the_server_and_what_it_starts(tmp_path: object) -> None:
    got = _run(tmp_path, PYTHONMALLOC="pymalloc_debug")
    assert got["here"] == got["child"] == "pymalloc_debug"
