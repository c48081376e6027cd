"""Shared test helpers: the pass criterion for compiled models, stated once.

A compiled result passes when every element is within the DL16 error bound that
`spyre_mlir.runtime.reference` propagates through the same torch-level graph
(docs/numerics.md derives it), measured against the exact (float64) answer:

    |y_device - y_exact| <= bound                                  (element-wise)

and the device result is not secretly exact: some element differs from the exact answer by
more than u/8 of the output's scale (DL16 rounding must be visible).
"""

from __future__ import annotations

import numpy as np
import torch

from spyre_mlir.runtime.numerics import Numerics
from spyre_mlir.runtime.reference import reference_for_model as reference  # noqa: F401


def assert_within_device_bound(y: torch.Tensor, exact: np.ndarray, bound: np.ndarray, numerics: Numerics) -> None:
    err = np.abs(y.detach().to(torch.float64).numpy() - exact)
    worst = np.unravel_index(np.argmax(err - bound), err.shape)
    assert np.all(err <= bound), (
        f"error {err[worst]:.3g} exceeds the {numerics.name} bound {bound[worst]:.3g} at {worst} "
        f"(device {float(y[worst]):.6g}, exact {exact[worst]:.6g})"
    )
    scale = np.max(np.abs(exact))
    assert err.max() > numerics.unit_roundoff / 8 * scale, "the result shows no device rounding at all"
