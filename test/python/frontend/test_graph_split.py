"""A kernel a later pass refuses splits the graph at the torch op it stands for (pipeline.py,
"Splitting a graph at a refused kernel"): that op runs on the CPU, saying why, and the ops
around it stay on the device, instead of the whole graph leaving it."""

from __future__ import annotations

import warnings

import pytest
import torch
from xdsl.dialects import math

from spyre_mlir.diagnostics import Unsupported
from spyre_mlir.dialects import spyre
from spyre_mlir.frontend.backend import STATS
from spyre_mlir.lowering.convert_spyre_to_isa import ConvertSpyreToIsaPass
from spyre_mlir.testing.criteria import compare_model_outputs


def _refuse_exp(monkeypatch: pytest.MonkeyPatch) -> None:
    """convert-spyre-to-isa refuses every pointwise kernel computing an exp, as it refuses a
    kernel it has no lowering for."""
    apply = ConvertSpyreToIsaPass.apply

    def refusing(self, ctx, module):
        for op in module.walk():
            if isinstance(op, spyre.PointwiseOp) and any(isinstance(o, math.ExpOp) for o in op.body.walk()):
                raise Unsupported(f"'{op.name}' computing exp: not supported yet (test)")
        apply(self, ctx, module)

    monkeypatch.setattr(ConvertSpyreToIsaPass, "apply", refusing)


def _model(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    z = torch.exp(x @ w)  # two readers: no pointwise chain folds the exp into another op
    return z @ w.T, z * 2.0


def test_a_refused_kernel_leaves_its_op_on_the_cpu_and_the_rest_on_the_device(monkeypatch):
    _refuse_exp(monkeypatch)
    x, w = torch.randn(8, 64) / 4, torch.randn(64, 64) / 8
    torch._dynamo.reset()
    before = len(STATS.graphs)
    with torch.no_grad(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = torch.compile(_model, backend="spyre")(x, w)
    [report] = STATS.graphs[before:]
    assert report.cpu_fallback == {"torch.aten.exp": 1}
    assert "a device kernel it becomes is refused" in report.cpu_reasons["torch.aten.exp"]
    assert "computing exp: not supported yet (test)" in report.cpu_reasons["torch.aten.exp"]
    assert report.torch_ops - sum(report.host_by_design.values()) - 1 >= 3  # both products and the doubling
    assert not any("instead of the device" in str(w.message) for w in caught)
    assert any("torch.aten.exp x1" in str(w.message) for w in caught)
    cmp = compare_model_outputs(got, _model(x, w), layers=1)  # a layer's worth of DL16 roundings
    assert cmp.passed, str(cmp)


def test_strict_mode_refuses_the_graph_instead(monkeypatch):
    _refuse_exp(monkeypatch)
    torch._dynamo.reset()
    with torch.no_grad(), pytest.raises(Exception, match="computing exp: not supported yet"):
        torch.compile(_model, backend="spyre", options={"strict": True})(torch.randn(8, 64), torch.randn(64, 64))


def _rotary(x: torch.Tensor, w: torch.Tensor, angles: torch.Tensor) -> torch.Tensor:
    """Llama 4's rotary embedding: pairs of a projection as complex numbers, rotated by a
    complex product (`polar`), back to floats, then a product on each side."""
    q = (x @ w).view(8, 32, 2)
    rotated = torch.view_as_real(torch.view_as_complex(q) * torch.polar(torch.ones_like(angles), angles))
    return rotated.flatten(1) @ w.T


def test_complex_ops_run_on_the_cpu_between_device_islands():
    """The card has no complex format: each op touching a complex tensor runs on the CPU with
    that reason, the float ops around them stay on the device, and the answer is right."""
    x, w = torch.randn(8, 64) / 4, torch.randn(64, 64) / 8
    angles = torch.linspace(0, 3, 32)
    torch._dynamo.reset()
    before = len(STATS.graphs)
    with torch.no_grad(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = torch.compile(_rotary, backend="spyre")(x, w, angles)
    [report] = STATS.graphs[before:]
    complex_ops = {"torch.aten.view_as_complex", "torch.aten.polar", "torch.aten.mul.Tensor", "torch.aten.view_as_real"}
    assert complex_ops <= set(report.cpu_fallback)
    for name in complex_ops:
        assert "the card has no complex format" in report.cpu_reasons[name]
    assert "torch.aten.mm" not in report.cpu_fallback  # both products on the device
    assert not any("instead of the device" in str(w.message) for w in caught)
    cmp = compare_model_outputs(got, _rotary(x, w, angles), layers=1)
    assert cmp.passed, str(cmp)


def _expert(x: torch.Tensor, w: torch.Tensor, rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """An MoE expert no token chose: its rows are none, so its product and gate are empty."""
    h = torch.sigmoid(x[rows] @ w) + 1.0
    return x @ w, h.mean(-1, keepdim=True)


def test_ops_with_empty_results_compute_nothing_on_either_side():
    """An op whose results hold no element has no work: the host makes its shape (by design,
    not a fallback), and the graph's other ops stay on the device."""
    x, w = torch.randn(8, 64) / 4, torch.randn(64, 64) / 8
    rows = torch.zeros(0, dtype=torch.long)
    torch._dynamo.reset()
    before = len(STATS.graphs)
    with torch.no_grad(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        full, empty = torch.compile(_expert, backend="spyre")(x, w, rows)
    [report] = STATS.graphs[before:]
    assert not report.cpu_fallback, report.cpu_reasons
    assert {"torch.aten.sigmoid", "torch.aten.mean.dim"} <= set(report.host_by_design)
    assert report.torch_ops - sum(report.host_by_design.values()) >= 1  # x @ w on the device
    assert not any("run on the CPU" in str(w.message) for w in caught)
    assert empty.shape == (0, 1) and empty.dtype == torch.float32
    cmp = compare_model_outputs(full, x @ w, layers=1)
    assert cmp.passed, str(cmp)
