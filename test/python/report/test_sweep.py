"""spyre-sweep (spyre_mlir/report/sweep.py): values, grids, the Pareto front, and a sweep of the
MLP fixture whose rerun loads every point from the compile cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spyre_mlir.report.sweep import grid, pareto, parse_value
from spyre_mlir.tools.spyre_sweep import main as spyre_sweep

MLP = Path(__file__).resolve().parents[2] / "fixtures" / "mlp_torch_mlir.mlir"


def test_values_are_parsed_by_the_fields_type():
    assert parse_value("lx_bytes", "2M") == 2 * 1024 * 1024
    assert parse_value("cores", "16") == 16
    assert parse_value("ddr_bytes_per_s", "204.8e9") == 204.8e9
    assert parse_value("ddr_bytes_per_s", "400G") == 400e9  # a rate: decimal
    assert parse_value("numerics", "ieee-fp16") == "ieee-fp16"
    with pytest.raises(ValueError, match="not a DeviceConfig field"):
        parse_value("corez", "4")
    with pytest.raises(ValueError, match="is an integer"):
        parse_value("cores", "2.5")


def test_the_grid_and_its_pareto_front():
    assert grid({"a": [1, 2], "b": [3, 4]}) == [{"a": 1, "b": 3}, {"a": 1, "b": 4}, {"a": 2, "b": 3}, {"a": 2, "b": 4}]
    points = [
        {"config": {"cores": 8, "lx": 1}, "simulated_s": 4.0},
        {"config": {"cores": 8, "lx": 2}, "simulated_s": 4.0},  # more LX, no faster: dominated
        {"config": {"cores": 32, "lx": 1}, "simulated_s": 1.0},
        {"config": {"cores": 32, "lx": 2}, "simulated_s": 2.0},  # dominated by (32, 1)
        {"config": {"cores": 16, "lx": 1}, "error": "past LX"},
    ]
    assert pareto(points, ["cores", "lx"]) == [0, 2]


def test_the_plan_digest_is_the_programs_not_the_targets():
    from spyre_mlir.diagnostics import LocatingParser
    from spyre_mlir.dialects.spyre.target import TargetAttr
    from spyre_mlir.pipeline import run_pipeline
    from spyre_mlir.report.sweep import plan_digest
    from spyre_mlir.target.config import DeviceConfig
    from spyre_mlir.tools.spyre_opt import make_tool_context

    ctx = make_tool_context()
    module = LocatingParser(ctx, MLP.read_text()).parse_module()
    run_pipeline(ctx, module, DeviceConfig())
    digest = plan_digest(module)
    module.attributes["spyre.target"] = TargetAttr(DeviceConfig(ddr_bytes_per_s=1e9))
    assert plan_digest(module) == digest  # the same program, named for another device
    next(op for op in module.walk() if op.name == "spyre_isa.dma_load").detach()
    assert plan_digest(module) != digest


@pytest.mark.slow  # eight points compiled and simulated, four in spawned workers
def test_a_sweep_prints_points_and_reuses_the_compile_cache(tmp_path, capsys):
    plot = tmp_path / "sweep.html"
    argv = [str(MLP), "--set", "cores=2,32", "--set", "lx_bytes=1M,2M", "--json", "--plot", str(plot)]
    assert spyre_sweep([*argv, "--workers", "1"]) == 0
    said = capsys.readouterr()
    first = json.loads(said.out)
    assert "[4/4] cores=32 lx_bytes=2097152: " in said.err  # each point as it finishes
    assert [p["config"] for p in first["points"]] == grid({"cores": [2, 32], "lx_bytes": [2**20, 2**21]})
    for p in first["points"]:
        assert p["simulated_s"] > 0 and len(p["plan"]) == 12 and p["compile"] == "compiled"
    assert len({p["plan"] for p in first["points"]}) == 4  # each point's program is its own
    assert plot.read_text().count("Pareto front") >= 1
    assert spyre_sweep([*argv, "--workers", "2"]) == 0  # in worker processes
    again = json.loads(capsys.readouterr().out)
    assert [p["compile"] for p in again["points"]] == ["cache"] * 4
    assert [(p["plan"], p["simulated_s"]) for p in again["points"]] == [
        (p["plan"], p["simulated_s"]) for p in first["points"]
    ]
