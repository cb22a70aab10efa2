"""Start and stop the embedded PostgreSQL in argv[1] while a thread multiplies as the embedder does; print, for each
process spawned meanwhile, whether a multiplication was in flight and what was spawned (JSON)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

from namesake.adapters.db import start_embedded_postgres, stop_embedded_postgres
from namesake.core.threads import BLAS_LOCK


def main(folder: Path) -> list[tuple[bool, str]]:
    """The spawns seen while the server starts and stops beside a thread that multiplies under BLAS_LOCK, with gaps."""
    in_flight, stop, seen = threading.Event(), threading.Event(), list[tuple[bool, str]]()
    real = subprocess.Popen._execute_child  # type: ignore[attr-defined]

    def spawn(self: subprocess.Popen[bytes], args: object, *rest: object) -> None:
        seen.append((in_flight.is_set(), str(args)[:80]))
        real(self, args, *rest)

    subprocess.Popen._execute_child = spawn  # type: ignore[attr-defined]
    a = np.random.default_rng(0).random((256, 256))

    def multiply() -> None:
        while not stop.is_set():
            with BLAS_LOCK:
                in_flight.set()
                for _ in range(20):
                    a @ a
                in_flight.clear()
            time.sleep(0.005)

    worker = threading.Thread(target=multiply, daemon=True)
    worker.start()
    try:
        _, server = start_embedded_postgres(folder)
        stop_embedded_postgres(server)
    finally:
        stop.set()
        worker.join(timeout=10)
    return seen


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]))))
