"""bench/calibrate.py runs and its figures keep the relations the device model promises
(simulated time, deterministic: not a wall-clock assertion)."""

import json

import pytest

from spyre_mlir.report.sweep import load_bench

pytestmark = pytest.mark.slow  # the whole bench: make test, not make quick


def test_calibration_figures(capsys):
    """`bench/calibrate.py --json`, run in this process (its main, from the script's file)."""
    bench = load_bench("calibrate")
    assert bench.main(["--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["published_softmax_ddr_us"] == 32.51 and r["published_softmax_lx_us"] == 23.67
    # within 2x of each published time, and at least the published relative gain
    assert 0.5 <= r["softmax_ddr_us"] / 32.51 <= 2
    assert 0.5 <= r["softmax_lx_us"] / 23.67 <= 2
    assert 1 - r["softmax_lx_us"] / r["softmax_ddr_us"] >= 1 - 23.67 / 32.51
    # both programs compute softmax: the DDR one stores x - max in DL16 (|x - max| < 10 for these
    # normal inputs, so exp's argument is off by < 10u, its value by < 10u relative) and rounds
    # exp, the sums and the quotient (4u more)
    assert r["softmax_max_error"] < 14 * 2**-10
    assert 0 < r["matmul_1024_attainment"] <= 1 and r["matmul_1024_max_error"] < 0.01
    mem = r["membound_us_by_cores"]
    assert set(mem) == {"1", "8", "32"}
    # shared DDR: 32 cores are not 32x faster than 1; 8 -> 32 gains little
    assert mem["1"] / mem["32"] < 4 and mem["8"] / mem["32"] < 1.1
