"""Fallbacks only for what is unsupported: the device path raises `diagnostics.Unsupported`
for an op or form it has no lowering for, and only that becomes a CPU fallback; any other
exception inside the compiler is a bug that propagates, naming the pass and the op, on the
compiled path and on the native device alike. A store past DL16's range is counted and warned."""

from __future__ import annotations

import warnings

import pytest
import torch

from spyre_mlir.diagnostics import InternalCompilerError, Unsupported
from spyre_mlir.frontend.backend import get_device_model
from spyre_mlir.lowering import convert_torch_to_spyre
from spyre_mlir.sim.numerics import DL16


def _inject(monkeypatch: pytest.MonkeyPatch, error: Exception) -> None:
    def lower(self, op):
        raise error

    monkeypatch.setattr(convert_torch_to_spyre.LowerUnary, "lower", lower)


def test_an_internal_error_on_the_compiled_path_propagates(monkeypatch, no_compile_cache):
    _inject(monkeypatch, RuntimeError("injected"))
    torch._dynamo.reset()
    with pytest.raises(Exception) as caught:
        torch.compile(torch.exp, backend="spyre")(torch.randn(3, 64))
    error = getattr(caught.value, "inner_exception", caught.value)  # Dynamo's BackendCompilerFailed wraps it
    assert isinstance(error, InternalCompilerError), repr(caught.value)
    assert "convert-torch-to-spyre" in str(error) and "torch.aten.exp" in str(error) and "injected" in str(error)


def test_an_internal_error_on_the_native_device_propagates(monkeypatch, no_compile_cache):
    _inject(monkeypatch, RuntimeError("injected"))
    x = torch.randn(5, 64).to("spyre")
    with pytest.raises(InternalCompilerError, match="injected"):
        torch.exp(x)


def test_unsupported_becomes_a_cpu_fallback_saying_why(monkeypatch, no_compile_cache):
    _inject(monkeypatch, Unsupported("'torch.aten.exp': injected form"))
    torch._dynamo.reset()
    x = torch.randn(6, 64)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = torch.compile(torch.exp, backend="spyre")(x)
    assert torch.equal(y, torch.exp(x))  # the CPU's answer
    assert any("injected form" in str(w.message) for w in caught)
    x = torch.randn(7, 64).to("spyre")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = torch.exp(x)
    assert any("injected form" in str(w.message) for w in caught)
    assert torch.equal(y.cpu(), torch.from_numpy(DL16.round(torch.exp(x.cpu()).numpy())))  # the CPU's, stored


def test_a_saturating_store_is_counted_and_warned_naming_its_kernel():
    x = torch.full((4, 64), 30.0)  # exp(30) = 1.07e13, past DL16's largest 8.57e9
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = torch.exp(x.to("spyre")).cpu()
    said = [str(w.message) for w in caught if "past DL16's range" in str(w.message)]
    assert len(said) == 1 and "sfp_exp" in said[0], said
    kernel = said[0].split("kernel ")[1].split(" ")[0]
    assert get_device_model().profile.saturated.get(kernel) == 256
    assert torch.all(y == DL16.max_value)


def _saturation_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if "past DL16's range" in str(w.message)]


def test_a_masks_infinity_stand_in_is_not_a_saturation():
    """An attention mask's finfo.min (or -inf) is stored as DL16's largest negative value, the
    format's stand-in for an infinity: selected by a kernel (an immediate past the range) or
    added to scores (an input already at it), it warns nowhere, and softmax's answer is right."""
    x, keep = torch.randn(8, 64), torch.rand(8, 64) > 0.3

    def masked(x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x.masked_fill(~keep, torch.finfo(torch.float32).min), -1)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = torch.compile(masked, backend="spyre")(x, keep)
        bias = torch.where(keep, 0.0, float("-inf")).to("spyre")
        z = torch.softmax(x.to("spyre") + bias, -1).cpu()
    assert not _saturation_warnings(caught), _saturation_warnings(caught)
    want = masked(x, keep)
    assert torch.allclose(y, want, atol=4 * DL16.unit_roundoff) and torch.allclose(z, want, atol=4 * DL16.unit_roundoff)
    assert torch.all(y[~keep] == 0) and torch.all(z[~keep] == 0)
