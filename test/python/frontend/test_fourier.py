"""The real or imaginary part of a Fourier transform of real data runs on the device as
products with the transform's cosine and sine tables (frontend/fourier.py): FNet's token
mixing, which would otherwise leave the card for three complex ops per layer."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from helpers import seeded_randn as randn

from spyre_mlir.frontend.backend import STATS
from spyre_mlir.testing.criteria import compare_model_outputs

CASES = {
    "fnet-real": lambda x: torch.fft.fftn(x.to(torch.complex64), dim=(1, 2)).real,
    "imag-ortho": lambda x: torch.fft.fftn(x.to(torch.complex64), dim=(1, 2), norm="ortho").imag,
    "inverse-by-n-one-dim": lambda x: torch.fft.ifft(x.to(torch.complex64), dim=1).real,
    "last-dim-forward": lambda x: torch.fft.fft(x.to(torch.complex64), dim=-1).imag * 0.5,
}


def _compiled(fn: Any, x: torch.Tensor) -> tuple[Any, Any]:
    """fn compiled for the device and called on x: its outputs and its one graph's report."""
    torch._dynamo.reset()
    before = len(STATS.graphs)
    with torch.no_grad():
        got = torch.compile(fn, backend="spyre")(x)
    [report] = STATS.graphs[before:]
    return got, report


@pytest.mark.parametrize("case", list(CASES))
def test_a_part_of_a_real_transform_runs_on_the_device(case):
    fn = CASES[case]
    x = randn(2, 23, 64, seed=60)
    got, report = _compiled(fn, x)
    assert not report.cpu_fallback, report.cpu_reasons
    cmp = compare_model_outputs(got, fn(x), layers=1)
    assert cmp.passed, str(cmp)


def test_a_transform_whose_complex_value_is_read_elsewhere_keeps_it_on_the_host():
    """The real part through the tables; the magnitude reads the complex value itself, whose
    ops stay on the host (the card has no complex format), and both answers are right."""

    def fn(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        f = torch.fft.fftn(x.to(torch.complex64), dim=(1, 2))
        return f.real * 2.0, f.abs()

    x = randn(1, 23, 64, seed=61)
    got, report = _compiled(fn, x)
    assert "torch.aten._fft_c2c" in report.cpu_fallback
    assert "torch.aten.mm" not in report.cpu_fallback
    cmp = compare_model_outputs(got, fn(x), layers=1)
    assert cmp.passed, str(cmp)
