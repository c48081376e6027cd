"""Decompositions the backend traces with (spyre_mlir/frontend/decompositions.py) that put on the
device an op it has no lowering for, through torch.compile on the device model, against the
exact answer within the DL16 bound (spyre_mlir.testing.criteria)."""

import pytest
import torch
from helpers import compiled_within_bound, seeded_randn

from spyre_mlir.frontend.decompositions import CUMSUM_MATMUL_MAX


@pytest.mark.parametrize(
    "shape, dim",
    [((1, 4, 1, 64), -1), ((2, 23, 8), 1), ((5, 100), 1), ((3, 16), 1)],
    ids=["gated-delta-chunk", "middle-dim", "rows", "short"],
)
def test_a_cumsum_runs_on_the_device(shape, dim):
    """Along more than 16 elements a product with a triangle of ones (the prefix sums in the
    PT's float32, each rounded once); along at most 16, a chain of adds."""
    _, report = compiled_within_bound(lambda x: torch.cumsum(x, dim), seeded_randn(*shape))
    assert not report.cpu_fallback, f"ran on the CPU: {dict(report.cpu_fallback)}"


def test_a_cumsum_longer_than_its_mask_allows_stays_on_the_host_and_is_right():
    x = seeded_randn(1, CUMSUM_MATMUL_MAX + 1)
    _, report = compiled_within_bound(lambda x: torch.cumsum(x, 1) + 1.0, x)  # (a device op after it)
    assert report.cpu_fallback.get("torch.aten.cumsum") == 1
