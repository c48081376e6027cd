"""The "spyre" torch.distributed backend on loopback, one process per rank, each bounded in
time: every collective against gloo's result on the same DL16 values (the spyre result is
gloo's rounded to DL16 once: exactly that), sync and async; the link model's time on the
stream; a rank that dies makes the others fail with a clear error, never hang."""

import json
import os

import pytest
import ranks

pytestmark = pytest.mark.slow  # two to four rank processes a test


def ok(results):
    for rank, (code, _, err) in enumerate(results):
        assert code == 0, f"rank {rank} failed:\n{err[-3000:]}"
    return [json.loads(out.strip().splitlines()[-1]) for _, out, _ in results]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_every_collective_gives_gloos_result_rounded_once(mode):
    got = ok(ranks.launch("collectives", 3, 180, mode))
    every = {c for r in got for c in r["checked"]}
    want = {"all_reduce avg", "all_gather", "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor"}
    want |= {"broadcast", "reduce", "all_to_all_single", "all_to_all", "gather", "scatter", "send/recv"}
    assert want <= every
    assert sum(c.startswith("all_reduce RedOpType") for c in got[0]["checked"]) == 4


def test_a_collective_is_charged_its_link_time_on_the_stream():
    got = ok(ranks.launch("timed", 2, 120))
    assert got[0]["seconds"] > 0


def test_a_programs_values_are_charged_to_its_profile():
    got = ok(ranks.launch("card_values", 2, 120))
    assert got[0]["seconds"] == got[1]["seconds"] > 0


def test_a_rank_that_dies_makes_the_others_fail_clearly():
    results = ranks.launch("dies", 3, 120)
    assert results[1][0] == 3
    for rank in (0, 2):
        code, out, err = results[rank]
        assert code != 0 and "unreachable" not in out
        assert f"spyre: all_reduce on rank {rank} of 3 failed" in err


def test_torchrun_launches_the_ranks():
    import subprocess
    import sys
    from pathlib import Path

    scenario = Path(__file__).with_name("scenarios.py")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-addr", "127.0.0.1"]
    cmd += ["--master-port", str(ranks.free_port()), str(scenario), "timed"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env={**os.environ, "SPYRE_CACHE": "0"})
    assert done.returncode == 0, done.stderr[-3000:]
    got = sorted(json.loads(line)["rank"] for line in done.stdout.splitlines() if line.startswith("{"))
    assert got == [0, 1]
