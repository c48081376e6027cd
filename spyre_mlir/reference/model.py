"""The numpy reference of a torch model: its FX graph imported to the torch dialect, then
evaluated with the device's error bounds (reference/evaluate.py)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from spyre_mlir.frontend.decompositions import decompositions
from spyre_mlir.frontend.fx_importer import import_fx_graph
from spyre_mlir.reference.evaluate import evaluate
from spyre_mlir.sim.numerics import Numerics


def reference_for_model(model: Any, *inputs: Any, numerics: Numerics) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Exact values and device error bounds of a torch model's outputs, evaluated on the same
    aot_autograd inference graph (core-ATen decompositions) the spyre backend compiles, the
    composites the device lowers whole in their pieces (`reference_decompositions`)."""
    from torch._dynamo.backends.common import aot_autograd

    captured: dict[str, Any] = {}

    def fw(gm: Any, example_inputs: Any) -> Any:
        captured["gm"] = gm

        def run(*args: Any) -> Any:
            captured["args"] = [
                a.detach().to(torch.float64).numpy() if a.is_floating_point() else a.detach().numpy() for a in args
            ]
            return gm(*args)

        return run

    backend = aot_autograd(fw_compiler=fw, decompositions=reference_decompositions())
    torch._dynamo.reset()
    with torch.no_grad():
        torch.compile(model, backend=backend, dynamic=False)(*inputs)
    torch._dynamo.reset()
    module, info = import_fx_graph(captured["gm"])
    return evaluate(module, captured["args"], numerics, info.ctx)


def reference_decompositions() -> dict[Any, Any]:
    """The backend's decompositions, and PyTorch's for the ops the device lowers as a
    composite of stores (log_softmax, var, vector norms, addmv: docs/ops.md): traced into
    their pieces, each piece's rounding is bounded (the reference's rule for an op it takes
    whole, the deviation at the corners of its inputs' error boxes, sees none inside it)."""
    from torch._decomp import decomposition_table

    aten = torch.ops.aten
    composites = (aten._log_softmax.default, aten.linalg_vector_norm.default, aten.addmv.default)
    return {
        **decompositions(),
        **{op: decomposition_table[op] for op in composites},
        aten.var.correction: lambda x, dim=None, *, correction=None, keepdim=False: _var_mean(
            x, dim, correction, keepdim
        )[0],
        aten.var_mean.correction: _var_mean,  # (PyTorch's are prims.var, which the reference has no rule for)
    }


def _var_mean(x: torch.Tensor, dim: Any = None, correction: Any = None, keepdim: bool = False) -> Any:
    """var and mean as the device computes them: the mean, the squared deviations' sum, / (N - c)."""
    dims = list(range(x.dim())) if dim is None or len(dim) == 0 else list(dim)
    n = math.prod(x.shape[d] for d in dims) if x.dim() else 1
    mean = torch.mean(x, dims, keepdim=True)
    dof = max(n - (1 if correction is None else correction), 0)  # (PyTorch: 0/0, NaN, below one)
    var = torch.sum((x - mean) * (x - mean), dims, keepdim=keepdim) / dof
    return var, mean if keepdim else torch.squeeze(mean, dims)
