"""`as_strided` reads its input's storage (frontend/storage_views.py): compiled, it gives what
eager PyTorch gives, whatever view of the storage it is applied to."""

from __future__ import annotations

import warnings

import pytest
import torch

from spyre_mlir.frontend.backend import STATS
from spyre_mlir.frontend.storage_views import _run
from spyre_mlir.sim.numerics import DL16


def _compiled(fn, *args):
    torch._dynamo.reset()
    with torch.no_grad():
        return torch.compile(fn, backend="spyre")(*args)


def _chunks(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """Longformer's `_chunk`: overlapping windows of 2w rows, read with as_strided from a
    transposed view of a product (the storage's strides are not the view's)."""
    h = (x @ w).view(32, 2, 16).transpose(0, 1)  # (2, 32, 16): a view with strides (16, 32, 1)
    h = h.view(2, 2, 16, 16)  # strides (16, 512, 32, 1)
    return torch.as_strided(h, (2, 3, 16, 16), (16, 256, 32, 1)) * 2.0


def test_as_strided_of_a_transposed_view_reads_the_storage():
    x, w = torch.randn(32, 24), torch.randn(24, 32)
    want = _chunks(x, w)
    got = _compiled(_chunks, x, w)
    assert got.shape == want.shape
    # x and w rounded to DL16, the product accumulated in f32 and rounded, the doubling exact
    bound = 3 * 24 * DL16.unit_roundoff * (x.abs() @ w.abs()).max() * 2.0
    assert (got - want).abs().max() <= bound


def test_as_strided_runs_on_the_device():
    x, w = torch.randn(32, 24), torch.randn(24, 32)
    before = len(STATS.graphs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a CPU fallback warns
        _compiled(_chunks, x, w)
    assert [g.cpu_fallback for g in STATS.graphs[before:]] == [{}]


@pytest.mark.parametrize(
    ("size", "stride", "offset"),
    [
        ((4, 8), (8, 1), 0),  # the tensor itself
        ((8, 4), (1, 8), 0),  # its transpose
        ((3, 2, 8), (8, 8, 1), 0),  # overlapping windows
        ((2, 4), (8, 1), 4),  # from an offset
        ((6,), (5,), 1),  # single elements
    ],
)
def test_as_strided_of_a_contiguous_input(size, stride, offset):
    x = torch.randn(4, 8)

    def fn(x):
        return torch.as_strided(x + 1.0, size, stride, offset)

    got, want = _compiled(fn, x), fn(x)
    assert torch.allclose(got, want, rtol=DL16.unit_roundoff, atol=DL16.unit_roundoff * 2)


def test_rows_are_the_longest_runs():
    rows = torch.arange(64).view(4, 16)
    assert _run(rows, 64) == 16
    assert _run(rows, 72) == 8  # the table's rows must tile its elements
    assert _run(rows[:, :8] + 4, 64) == 4  # runs of 8 from offsets 4, 20, ...: 4-aligned pieces
    assert _run(torch.tensor([[3, 1], [0, 2]]), 4) == 1
