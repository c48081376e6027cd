"""The pass criteria for compiled programs and models, each stated once (tests and benches use them).

Small programs (the MLP and op tests): a compiled result passes when every element is within
the DL16 error bound that `reference` (spyre_mlir.reference.model's `reference_for_model`)
propagates through the same torch-level graph (docs/numerics.md derives it), measured against
the exact (float64) answer:

    |y_device - y_exact| <= bound                                  (element-wise)

and the device result is not secretly exact: some element differs from the exact answer by
more than u/8 of the output's scale (DL16 rounding must be visible).

Whole models (test/python/models, bench/coverage.py): `compare_model_outputs`, against eager
PyTorch, with a tolerance derived from DL16's unit roundoff and the model's depth (its docstring
gives the criterion and the reasoning).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from spyre_mlir.reference.model import reference_for_model as reference
from spyre_mlir.sim.numerics import DL16, Numerics

__all__ = [
    "COSINE_MIN",
    "ROUNDINGS_PER_LAYER",
    "U_DL16",
    "ModelComparison",
    "accumulation_bound",
    "assert_within_device_bound",
    "compare_model_outputs",
    "model_tolerance",
    "output_tensors",
    "reference",
]


def assert_within_device_bound(y: torch.Tensor, exact: np.ndarray, bound: np.ndarray, numerics: Numerics) -> None:
    err = np.abs(y.detach().to(torch.float64).numpy() - exact)
    worst = np.unravel_index(np.argmax(err - bound), err.shape)
    assert np.all(err <= bound), (
        f"error {err[worst]:.3g} exceeds the {numerics.name} bound {bound[worst]:.3g} at {worst} "
        f"(device {float(y[worst]):.6g}, exact {exact[worst]:.6g})"
    )
    scale = np.max(np.abs(exact))
    assert err.max() > numerics.unit_roundoff / 8 * scale, "the result shows no device rounding at all"


U32 = 2.0**-24
"""fp32's unit roundoff: the PT's partial sums are fp32."""


def accumulation_bound(a: np.ndarray, b: np.ndarray, r1: np.ndarray, r2: np.ndarray, numerics: Numerics) -> np.ndarray:
    """How far two device results r1, r2 of one matmul a @ b (DL16-exact operands, results
    stored in `numerics`) may be apart when they differ only in the order of their fp32 sums
    (work division, tile shapes, a k split): docs/numerics.md derives

        |r1 - r2| <= 2 gamma(K - 1) (|a| @ |b|) + 2u max(|r1|, |r2|),   gamma(n) = n u32 / (1 - n u32)
    """
    k = a.shape[-1]
    gamma = (k - 1) * U32 / (1 - (k - 1) * U32)
    spread = 2 * gamma * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
    return spread + 2 * numerics.unit_roundoff * np.maximum(np.abs(r1), np.abs(r2)).astype(np.float64)


# region Whole models: compiled vs eager

U_DL16 = DL16.unit_roundoff
"""2^-10, DL16's unit roundoff: one store rounds a value by at most u of its magnitude."""
ROUNDINGS_PER_LAYER = 16
"""DL16 stores on the longest dependency chain of one transformer layer run on the device."""
COSINE_MIN = 0.999
"""Cosine floor: relative RMS error <= sqrt(2 (1 - 0.999)) = 4.5%."""


def model_tolerance(layers: int) -> float:
    """Max |compiled - eager| allowed, as a fraction of max |eager| (see `compare_model_outputs`)."""
    return ROUNDINGS_PER_LAYER * U_DL16 * (layers + 1)


@dataclass
class ModelComparison:
    """Compiled vs eager outputs of one model call, under the model criterion."""

    max_error: float
    """Worst output's max |compiled - eager| / max |eager|."""
    cosine: float
    """Lowest cosine between a flattened compiled output and its eager counterpart."""
    tolerance: float
    outputs: int
    worst: str
    """Name of the output with the largest relative error."""
    problem: str = ""
    """A structural mismatch (shape, dtype, missing output, non-finite value), if any."""

    @property
    def passed(self) -> bool:
        return not self.problem and self.max_error <= self.tolerance and self.cosine >= COSINE_MIN

    def __str__(self) -> str:
        if self.problem:
            return self.problem
        return (
            f"max |compiled - eager| = {self.max_error:.3g} x max |eager| ({self.max_error / U_DL16:.1f} u; allowed "
            f"{self.tolerance:.3g} = {self.tolerance / U_DL16:.0f} u) in '{self.worst}', cosine {self.cosine:.6f} "
            f"(floor {COSINE_MIN})"
        )


def output_tensors(out: Any, prefix: str = "out") -> list[tuple[str, torch.Tensor]]:
    """The floating-point tensors of a model's output (tensor, tuple/list, dict or transformers
    ModelOutput), named by their path; caches and other objects are skipped."""
    if isinstance(out, torch.Tensor):
        return [(prefix, out)] if out.is_floating_point() else []
    if isinstance(out, dict):  # ModelOutput is an OrderedDict of its non-None fields
        return [t for k, v in out.items() for t in output_tensors(v, f"{prefix}.{k}" if prefix != "out" else str(k))]
    if isinstance(out, tuple | list):
        return [t for i, v in enumerate(out) for t in output_tensors(v, f"{prefix}[{i}]")]
    return []


def compare_model_outputs(compiled: Any, eager: Any, layers: int) -> ModelComparison:
    """The model pass criterion, stated once (tests and bench/coverage.py use it).

    Every floating-point output of the compiled call is compared with eager PyTorch (fp32,
    whose own error is ~2^-24 and negligible here), each flattened:

        cosine(compiled, eager) >= 0.999
        max |compiled - eager|  <= tol * max |eager|,   tol = 16 u (layers + 1),  u = 2^-10

    Why these numbers. Every value the device stores is rounded to DL16, a relative error of at
    most u = 2^-10. Along the longest dependency chain of one transformer layer run entirely on
    the device there are about 16 such stores (norm; Q/K/V projection; scores; scale and mask;
    softmax's exp and quotient; context; output projection; residual add; norm; two MLP matmuls
    and the activation; residual add; plus the bias adds that do not fold into a matmul).
    Normalisations keep every intermediate near the scale of the residual stream, and the
    residual stream carries each layer's error forward, so the worst case grows linearly: ~16 u
    of the stream's scale per layer, plus one more layer's worth for the embeddings, the host ->
    device conversion and the final norm or pooler. Worst-case alignment is the rule here
    (unlike the element-wise bound of the MLP tests, which is propagated op by op);
    round-to-nearest errors mostly cancel, so a correct model sits well below it: 2-7 u for the
    2-layer models of bench/corpus.py, 25 u for T5 with head_dim 64, whose attention logits are
    not scaled by 1/sqrt(d) and so magnify their own rounding. Measuring against max |eager|
    rather than element by element keeps near-zero elements (where a relative error means
    nothing) from deciding. The cosine floor bounds the relative RMS error by
    sqrt(2 (1 - 0.999)) = 4.5%: it catches an error spread thinly over a large output.

    Sensitivity (BERT, 2 layers, weights from `randomize_weights`): a dropped FFN bias (310 u),
    a lost attention mask (280 u) or value rows rolled by one head (1300 u) fail; a dropped
    query bias in the last layer (33 u) and weights rounded to bf16 (9 u) pass.

    Depth is the number of transformer layers; ops the device cannot run yet execute on the CPU
    in fp32, which only makes the error smaller. A model that fails this is reported with its
    numbers, never passed by loosening the tolerance.
    """
    tol = model_tolerance(layers)
    got, want = output_tensors(compiled), output_tensors(eager)
    worst_err, worst_name, lowest_cos = 0.0, "", 1.0
    names_got = [n for n, _ in got]
    if names_got != [n for n, _ in want]:
        return ModelComparison(
            math.inf, 0.0, tol, len(want), "", f"outputs differ: compiled {names_got}, eager {[n for n, _ in want]}"
        )
    if not want:
        return ModelComparison(math.inf, 0.0, tol, 0, "", "the model returned no floating-point tensor")
    for (name, y), (_, e) in zip(got, want):
        if y.shape != e.shape or y.dtype != e.dtype:
            return ModelComparison(
                math.inf,
                0.0,
                tol,
                len(want),
                name,
                f"'{name}': compiled {y.dtype}{list(y.shape)}, eager {e.dtype}{list(e.shape)}",
            )
        y64, e64 = y.detach().double().flatten(), e.detach().double().flatten()
        if not torch.isfinite(y64).all() and torch.isfinite(e64).all():
            return ModelComparison(
                math.inf, 0.0, tol, len(want), name, f"'{name}': compiled output has non-finite values"
            )
        scale = e64.abs().max().item()
        err = (y64 - e64).abs().max().item() / (scale if scale > 0 else 1.0)
        norms = y64.norm() * e64.norm()
        cos = (y64 @ e64 / norms).item() if norms > 0 else float(torch.equal(y64, e64))
        if err > worst_err or not worst_name:
            worst_err, worst_name = err, name
        lowest_cos = min(lowest_cos, cos)
    return ModelComparison(worst_err, lowest_cos, tol, len(want), worst_name)


# endregion
