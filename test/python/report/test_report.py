"""The explorer report (spyre_mlir/report/): origins carried through the pipeline, the report's
numbers equal the profile's, a CPU fallback marked."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

from spyre_mlir.diagnostics import LocatingParser, verify_module
from spyre_mlir.dialects import spyre, spyre_isa
from spyre_mlir.pipeline import run_pipeline
from spyre_mlir.report.capture import Capture
from spyre_mlir.report.html import page
from spyre_mlir.report.run import report_data
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.tools.spyre_opt import make_tool_context
from spyre_mlir.tools.spyre_report import main as spyre_report
from spyre_mlir.transforms.spyre_track_origins import SpyreTrackOriginsPass

MLP = Path(__file__).resolve().parents[2] / "fixtures" / "mlp_torch_mlir.mlir"

FALLBACK = """
func.func @main(%x: !torch.vtensor<[64,128],f32>, %w: !torch.vtensor<[128,128],f32>) -> !torch.vtensor<[64,128],f32> {
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %0 = torch.aten.mm %x, %w : !torch.vtensor<[64,128],f32>, !torch.vtensor<[128,128],f32> -> !torch.vtensor<[64,128],f32>
  %1 = torch.aten.cumsum %0, %int1, %none : !torch.vtensor<[64,128],f32>, !torch.int, !torch.none -> !torch.vtensor<[64,128],f32>
  %2 = torch.aten.tanh %1 : !torch.vtensor<[64,128],f32> -> !torch.vtensor<[64,128],f32>
  return %2 : !torch.vtensor<[64,128],f32>
}
"""
"""A float op with no device lowering (cumsum) between two device ops."""


def compiled(text: str, config: DeviceConfig = DeviceConfig()):
    ctx = make_tool_context()
    module = LocatingParser(ctx, text).parse_module()
    SpyreTrackOriginsPass().apply(ctx, module)
    capture = Capture()
    run_pipeline(ctx, module, config, on_stage=capture, verify_each=True)  # the contract after every pass
    return ctx, module, capture


def inputs(module, seed=0):
    from spyre_mlir.report.capture import entry_function
    from spyre_mlir.tools.spyre_run import input_types, random_input

    rng = np.random.default_rng(seed)
    return [random_input(rng, s, e) for s, e in input_types(entry_function(module))]


def test_every_launch_says_which_torch_ops_it_computes():
    ctx, module, capture = compiled(MLP.read_text())
    launches = [op for op in module.walk() if isinstance(op, spyre_isa.LaunchOp)]
    origins = [spyre.origin_of(op) for op in launches]
    assert all(o is not None for o in origins)
    names = {
        spyre.origin_of(op).op_ids[0]: op.name  # the numbered torch ops, as they entered
        for op in capture.torch_module.walk()
        if spyre.origin_of(op) is not None and op.name.startswith("torch.")
    }
    computed = [[names[i] for i in o.op_ids] for o in origins]
    # Linear -> GELU -> Linear: the first product with its bias and GELU, the second with its bias
    assert computed == [
        ["torch.aten.mm", "torch.aten.add.Tensor", "torch.aten.gelu"],
        ["torch.aten.mm", "torch.aten.add.Tensor"],
    ]
    assert [names[v] for o in origins for v in o.value_ids] == ["torch.aten.gelu", "torch.aten.add.Tensor"]


def test_a_pass_that_drops_an_origin_is_caught():
    ctx, module, _ = compiled(MLP.read_text())
    launch = next(op for op in module.walk() if isinstance(op, spyre_isa.LaunchOp))
    del launch.attributes[spyre.ORIGIN_ATTR]
    with pytest.raises(VerifyException, match="'spyre_isa.launch': carries no spyre.origin"):
        verify_module(module)


def test_origins_are_no_part_of_the_program():
    """The same kernels with and without origins: the same programs (kernel_key ignores them)."""
    ctx, numbered, _ = compiled(MLP.read_text())
    plain_ctx = make_tool_context()
    plain = LocatingParser(plain_ctx, MLP.read_text()).parse_module()
    run_pipeline(plain_ctx, plain, DeviceConfig())

    def programs(m):
        return [str(op) for op in m.ops if isinstance(op, spyre_isa.ProgramOp)]

    assert programs(numbered) == programs(plain)


def test_the_reports_numbers_are_the_profiles(tmp_path):
    config = DeviceConfig()
    ctx, module, capture = compiled(MLP.read_text(), config)
    rd = report_data(module, ctx, capture, inputs(module), config, "mlp")
    prof, data = rd.profile, rd.data
    assert len(data["kernels"]) == len(prof.kernels) == 2
    for k, rec in zip(data["kernels"], prof.kernels):
        assert k["name"] == rec.name
        for key in ("time_s", "overhead_s", "cycles", "ddr_read_bytes", "ddr_write_bytes", "macs", "ring_bytes"):
            assert k[key] == getattr(rec, key), key
        assert k["attainment"] == rec.attainment and k["bottleneck"] == rec.bottleneck
        # every engine's busy time fits in the kernel's time
        assert max(k["engines_s"].values()) <= rec.time_s
    s = data["summary"]
    assert s["total_time_s"] == prof.total_time_s and s["ddr_bytes"] == prof.total_ddr_bytes
    assert s["transfers_s"] == prof.transfers_s and s["host_round_trips"] == prof.host_round_trips
    # the page holds the same numbers, and its figures draw them
    html = page(data)
    embedded = json.loads(re.search(r'id="report-data">(.*?)</script>', html, re.S).group(1))
    assert [k["time_s"] for k in embedded["kernels"]] == [r.time_s for r in prof.kernels]
    figures = json.loads(re.search(r'id="report-figures">(.*?)</script>', html, re.S).group(1))
    bars = [(y, x) for tr in figures["timeline"]["data"] for y, x in zip(tr["y"], tr["x"]) if y == "kernels"]
    assert sorted(x for _, x in bars) == sorted(r.time_s * 1e6 for r in prof.kernels)
    # each kernel's LX use stays within LX on every core
    assert all(0 < max(k["lx_bytes"]) <= config.lx_bytes for k in data["kernels"])


def test_errors_against_the_reference_are_within_the_dl16_bound():
    config = DeviceConfig()
    ctx, module, capture = compiled(MLP.read_text(), config)
    data = report_data(module, ctx, capture, inputs(module), config).data
    compared = [e for k in data["kernels"] for e in k["errors"] if e["compared"]]
    assert compared, "the MLP's output is compared with the reference"
    assert all(e["within"] for e in compared)
    # the first kernel keeps its result in LX for the second: not in DDR, not compared
    first = data["kernels"][0]
    assert first["plan"]["resident_out"] and not first["errors"][0]["compared"]
    assert {o["short"]: o["placement"] for o in data["ops"]}["gelu"] == "device"


def test_a_cpu_fallback_is_marked():
    config = DeviceConfig()
    ctx, module, capture = compiled(FALLBACK, config)
    data = report_data(module, ctx, capture, inputs(module), config).data
    placement = {o["short"]: o["placement"] for o in data["ops"]}
    assert placement == {"mm": "device", "cumsum": "cpu", "tanh": "device"}
    cumsum = next(o for o in data["ops"] if o["short"] == "cumsum")
    assert cumsum["reason"] and cumsum["home"] is None
    assert data["summary"]["host_round_trips"] >= 1  # the device waits for cumsum on the host
    assert any(st["kind"] == "cpu" and st["name"] == "cumsum" for st in data["host_sequence"])
    # the device ops on either side are compared with the reference, within the bound
    assert all(e["within"] for k in data["kernels"] for e in k["errors"] if e["compared"])


def test_spyre_report_writes_one_self_contained_file(tmp_path, capsys):
    out = tmp_path / "mlp.html"
    assert spyre_report([str(MLP), "-o", str(out)]) == 0
    html = out.read_text()
    assert "report:" in capsys.readouterr().out
    # nothing is fetched: no script or stylesheet from elsewhere
    assert not re.search(r'<(script|link)[^>]+(src|href)="(https?:)?//', html)
    assert "cytoscape" in html and "Plotly" in html


def test_spyre_mlir_report_of_a_torch_model(tmp_path):
    """spyre_mlir.report(model, x): torch.compile with the report option, one call, one file per
    graph; the graph's torch ops as the FX importer numbered them."""
    import torch

    import spyre_mlir
    from spyre_mlir.frontend.backend import STATS

    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 64)).eval()
    torch._dynamo.reset()
    paths = spyre_mlir.report(mlp, torch.randn(8, 64), path=tmp_path / "mlp.html")
    assert paths == [tmp_path / "mlp.html"] and STATS.graphs[-1].report == str(paths[0])
    html = paths[0].read_text()
    data = json.loads(re.search(r'id="report-data">(.*?)</script>', html, re.S).group(1))
    assert {o["short"] for o in data["ops"] if o["placement"] == "device"} >= {"addmm", "gelu"}
    assert all(e["within"] for k in data["kernels"] for e in k["errors"] if e["compared"])


@pytest.mark.slow
def test_a_corpus_decoder_is_within_the_bound_everywhere_it_is_compared(tmp_path):
    """Llama (bench/corpus.py): rotary lane moves and SDPA's scalings rewritten by torch-adapt,
    which claim no torch value of their own; the reference runs the whole graph."""
    out = tmp_path / "llama.html"
    assert spyre_report(["llama", "-o", str(out)]) == 0
    data = json.loads(re.search(r'id="report-data">(.*?)</script>', out.read_text(), re.S).group(1))
    assert data["summary"]["reference"].startswith("float64 reference")
    compared = [e for k in data["kernels"] for e in k["errors"] if e["compared"]]
    assert len(compared) >= 10 and all(e["within"] for e in compared)


def test_moves_of_a_moved_scaling_claim_no_value(tmp_path):
    """SDPA's two scalings folded onto q (torch-adapt's ScalingsOnOneOperand): the relayout of
    q's moves holds q * c * d, no torch op's value, and is not compared as if it were."""
    import torch

    import spyre_mlir

    class Scores(torch.nn.Module):
        def forward(self, q, k):
            a = (q * 0.42).expand(7, 12, 12, 32).clone().view(84, 12, 32)
            b = (k.transpose(-1, -2) * 0.42).expand(7, 12, 32, 12).clone().view(84, 32, 12)
            return torch.bmm(a, b)

    torch.manual_seed(0)
    torch._dynamo.reset()
    q, k = torch.randn(7, 12, 12, 32), torch.randn(7, 12, 12, 32)
    (path,) = spyre_mlir.report(Scores(), q, k, path=tmp_path / "scores.html")
    data = json.loads(re.search(r'id="report-data">(.*?)</script>', path.read_text(), re.S).group(1))
    compared = [e for k in data["kernels"] for e in k["errors"] if e["compared"]]
    assert compared and all(e["within"] for e in compared)
    relayouts = [k for k in data["kernels"] if k["relayout"]]
    assert relayouts and all(v == -1 for k in relayouts for v in k["values"])
