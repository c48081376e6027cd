"""reference/evaluate.py on graphs the OpInfo conformance test meets: the scalar conversions
the importer spells (a bool where the schema wants an int), and dtype arguments, which the
schema types as int codes (they must reach PyTorch as dtypes, widened to float64)."""

import numpy as np
import torch
from torch.fx.experimental.proxy_tensor import make_fx

from spyre_mlir.frontend.fx_importer import import_fx_graph
from spyre_mlir.reference.evaluate import evaluate
from spyre_mlir.sim.numerics import DL16


def _evaluate(fn, *inputs):
    module, info = import_fx_graph(make_fx(fn, tracing_mode="fake")(*inputs))
    return evaluate(module, [x.to(torch.float64).numpy() for x in inputs], DL16, info.ctx)


def test_a_bool_filled_mask_is_evaluated():
    # full(..., True) imports as torch.aten.full of torch.aten.Int.bool: a number, not a tensor
    x = torch.randn(3, 6)
    (value,), (bound,) = _evaluate(lambda x: torch.where(torch.ones(3, 6, dtype=torch.bool).tril(), x, 0.0), x)
    want = torch.where(torch.ones(3, 6, dtype=torch.bool).tril(), x, 0.0).double().numpy()
    assert np.array_equal(value, want)
    # the transfer's rounding and the where's store: about 2u of each element (and tiny ones)
    assert np.all(bound <= 3 * DL16.unit_roundoff * np.abs(want) + 3 * DL16.min_normal)


def test_a_dtype_argument_reaches_pytorch_as_a_dtype():
    x = torch.randn(4, 5)
    (value,), (bound,) = _evaluate(lambda x: torch.linalg.vector_norm(x, 2.0, dim=1, dtype=torch.float32), x)
    assert np.allclose(value, np.linalg.norm(x.double().numpy(), axis=1), rtol=1e-12, atol=0)
    assert np.all(bound > 0)
