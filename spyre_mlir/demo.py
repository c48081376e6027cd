"""`make demo`: an MLP through torch.compile(backend="spyre") on the reference device model.

    Linear(256, 512) -> GELU -> Linear(512, 256), batch 64, random weights (seeded)

Prints the compile time, the error against eager PyTorch (and whether it is inside the DL16
bound the numpy reference propagates), and the simulated-time profile of the kernels.
Set SPYRE_DUMP_IR=dir to see the IR after every pipeline stage.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from spyre_mlir.frontend.backend import STATS, get_device
from spyre_mlir.runtime.numerics import DL16
from spyre_mlir.runtime.profile import Profile
from spyre_mlir.runtime.reference import reference_for_model


def main() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 256)).eval()
    x = torch.randn(64, 256)
    compiled = torch.compile(model, backend="spyre")
    with torch.no_grad():
        t0 = time.perf_counter()
        y = compiled(x)
        t1 = time.perf_counter()
        compiled(x)
        t2 = time.perf_counter()
        eager = model(x)
    err = (y - eager).abs()
    scale = eager.abs().max().item()
    print("model:   Linear(256, 512) -> GELU -> Linear(512, 256), input (64, 256) f32")
    print(f"compile: {t1 - t0:.2f} s (first call), {t2 - t1:.3f} s per later call; graphs compiled: {STATS.compiles}")
    print(f"error:   max |spyre - eager| = {err.max().item():.3g} (max |eager| = {scale:.3g}, relative {err.max().item() / scale:.2e})")
    (exact,), (bound,) = reference_for_model(model, x, numerics=DL16)
    inside = bool(np.all(np.abs(y.double().numpy() - exact) <= bound))
    print(f"bound:   DL16 error bound (runtime/reference.py) max {bound.max():.3g}; every element inside it: {'yes' if inside else 'NO'}")
    device = get_device()
    per_call = device.profile.kernels[len(device.profile.kernels) // 2 :]
    print()
    print("simulated device time, one forward pass (reference device model, 32 cores):")
    print(Profile(per_call).table())


if __name__ == "__main__":
    main()
