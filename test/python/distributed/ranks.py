"""Run a function on N ranks, one process each, on loopback (tests of the spyre backend).

    ranks.launch("scenario", world=2, timeout=120)   # from a test: (returncode, stdout, stderr) per rank
    python ranks.py scenario                          # a rank: RANK, WORLD_SIZE, MASTER_ADDR/PORT set

Each rank process is bounded in time by `launch`; one that hangs fails the test, never the run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from spyre_mlir.vllm.server import free_port


def launch(scenario: str, world: int, timeout: float, *args: str) -> list[tuple[int, str, str]]:
    port = free_port()
    procs = []
    for rank in range(world):
        env = dict(
            os.environ,
            RANK=str(rank),
            WORLD_SIZE=str(world),
            LOCAL_RANK=str(rank),
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=str(port),
            SPYRE_CACHE="0",
            OMP_NUM_THREADS="1",
        )
        cmd = [sys.executable, str(Path(__file__).with_name("scenarios.py")), scenario, *args]
        procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    results = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise AssertionError(f"a rank of {scenario!r} did not finish within {timeout} s") from None
        results.append((p.returncode, out, err))
    return results
