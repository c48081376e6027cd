"""The numpy reference of a torch model: its FX graph imported to the torch dialect, then
evaluated with the device's error bounds (reference/evaluate.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from spyre_mlir.frontend.fx_importer import import_fx_graph
from spyre_mlir.reference.evaluate import evaluate
from spyre_mlir.sim.numerics import Numerics


def reference_for_model(model: Any, *inputs: Any, numerics: Numerics) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Exact values and device error bounds of a torch model's outputs, evaluated on the same
    aot_autograd inference graph (core-ATen decompositions) the spyre backend compiles."""
    from torch._dynamo.backends.common import aot_autograd

    from spyre_mlir.frontend.decompositions import decompositions

    captured: dict[str, Any] = {}

    def fw(gm: Any, example_inputs: Any) -> Any:
        captured["gm"] = gm

        def run(*args: Any) -> Any:
            captured["args"] = [
                a.detach().to(torch.float64).numpy() if a.is_floating_point() else a.detach().numpy() for a in args
            ]
            return gm(*args)

        return run

    backend = aot_autograd(fw_compiler=fw, decompositions=decompositions())
    torch._dynamo.reset()
    with torch.no_grad():
        torch.compile(model, backend=backend, dynamic=False)(*inputs)
    torch._dynamo.reset()
    module, info = import_fx_graph(captured["gm"])
    return evaluate(module, captured["args"], numerics, info.ctx)
