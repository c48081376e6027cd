"""DL16 arithmetic on eager PyTorch: is a model's error the compiler's, or DL16's own?

The model criterion (criteria.py, `compare_model_outputs`) assumes a model keeps its values near
the scale of its residual stream, so that each layer adds ~16 roundings' worth of error. Some
models do not: the gated delta rule (Qwen3.5, OLMo hybrid, MiniCPM-V 4.6) sums log decays to
-300 and takes exp() of their differences, so a decay's rounding at that magnitude (0.25 in
DL16) moves a weight by a quarter. There the criterion can fail for DL16 arithmetic itself, on
any device, and a failure says nothing about the compiler.

`DL16Eager` runs eager PyTorch with DL16's rounding: every op that is not a view takes its float
inputs rounded to DL16 (so weights and constants are, as on the card) and returns its float
results rounded. With a seed, each result is first scaled by a seeded factor within u/2 of 1
(u = 2^-10): a rounding placed where a compiler may place it (a fused chain keeps its
intermediates in fp32, a matmul sums in another order), each value still within 1.5 u of the
op's exact result. `dl16_spread` runs a model so a number of times, the first without jitter,
and measures each run as the criterion measures a compiled one:

    spread = dl16_spread(lambda: model(**inputs), eager, layers)
    spread.explains(compare_model_outputs(compiled, eager, layers))

`explains` holds where some DL16 run fails the criterion too and the compiled result lies
within the runs' range (its max error at most their largest, its cosine at least their lowest):
the error is within what DL16 arithmetic gives on this model. Otherwise a failure is the
compiler's to find (bench/coverage.py counts the two apart).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_map

from spyre_mlir.sim.numerics import DL16
from spyre_mlir.testing.criteria import ModelComparison, compare_model_outputs

__all__ = ["DL16Eager", "DL16Spread", "dl16_spread"]

RUNS = 16
"""DL16 runs of a model in `dl16_spread`: one without jitter, the others with seeds 1 to 15.
The spread's top is a sample maximum: of 32 runs of qwen3_5_text (sweep shapes), the maximum
error ranges 29.7 to 117.0 u, and the first 8 runs' top (103.1 u) is their 89th percentile,
which a compiled result at 105.4 u (the 88th) lies past; 16 runs' top is 105.8 u."""


def _round(x: torch.Tensor, rng: np.random.Generator | None = None) -> torch.Tensor:
    """x rounded to DL16 (after a jitter, given `rng`), laid out as x is: an op that draws random
    numbers fills its result in its operand's layout (`randn_like` of a transposed tensor draws
    other numbers than of a contiguous one), so the rounding keeps eager's draws."""
    a = x.detach().contiguous().numpy()
    if rng is not None:
        a = a * (1.0 + rng.uniform(-DL16.unit_roundoff / 2, DL16.unit_roundoff / 2, a.shape)).astype(np.float32)
    rounded = torch.from_numpy(DL16.round(a).astype(np.float32, copy=False)).reshape(x.shape)
    return rounded if x.is_contiguous() else torch.empty_like(x).copy_(rounded)


def _is_float32(x: Any) -> bool:
    return isinstance(x, torch.Tensor) and x.dtype == torch.float32


class DL16Eager(TorchDispatchMode):
    """Eager PyTorch with every non-view op's float32 inputs and results rounded to DL16 (the
    results after a jitter within u/2, given a seed). An op that writes its arguments (copy_,
    index_put_) has what it wrote rounded in place."""

    def __init__(self, seed: int | None = None):
        super().__init__()
        self.rng = None if seed is None else np.random.default_rng(seed)

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if func.is_view:
            return func(*args, **kwargs)
        schema = func._schema.arguments
        written = [
            x
            for i, a in enumerate(schema)
            if a.alias_info is not None and a.alias_info.is_write
            for x in [args[i] if i < len(args) else kwargs.get(a.name)]
            if _is_float32(x)
        ]
        for x in written:  # its values before the op are the card's too
            x.copy_(_round(x))

        def read(x: Any) -> Any:
            return _round(x) if _is_float32(x) and not any(x is w for w in written) else x

        args, kwargs = tree_map(read, (args, kwargs))
        out = func(*args, **kwargs)
        if not written:
            return tree_map(lambda x: _round(x, self.rng) if _is_float32(x) else x, out)
        for x in written:
            x.copy_(_round(x, self.rng))
        return out


@dataclass
class DL16Spread:
    """How a model's DL16 runs compare with eager (`compare_model_outputs` of each)."""

    runs: list[ModelComparison]

    @property
    def failing(self) -> int:
        """Runs outside the model criterion."""
        return sum(not r.passed for r in self.runs)

    @property
    def measured(self) -> list[ModelComparison]:
        """The runs whose outputs match eager's in structure (each with an error and a cosine)."""
        return [r for r in self.runs if not r.problem]

    @property
    def max_error(self) -> float:
        return max((r.max_error for r in self.measured), default=0.0)

    @property
    def min_error(self) -> float:
        return min((r.max_error for r in self.measured), default=0.0)

    @property
    def lowest_cosine(self) -> float:
        return min((r.cosine for r in self.measured), default=1.0)

    def explains(self, compiled: ModelComparison) -> bool:
        """Whether DL16 arithmetic accounts for a compiled result that fails the criterion:
        some DL16 run fails it too, and the compiled result lies within the runs' range; or,
        for a structural mismatch (an output's shape that a count rounded one way decides),
        some DL16 run has the same one."""
        if compiled.problem:
            return any(r.problem == compiled.problem for r in self.runs)
        return self.failing > 0 and compiled.max_error <= self.max_error and compiled.cosine >= self.lowest_cosine

    def __str__(self) -> str:
        u = DL16.unit_roundoff
        problems = sorted({r.problem for r in self.runs if r.problem})
        text = f"{self.failing} of {len(self.runs)} DL16 runs of the model fail the criterion too"
        if self.measured:
            text += (
                f": max error {self.min_error / u:.1f} to {self.max_error / u:.1f} u, lowest cosine "
                f"{self.lowest_cosine:.6f}"
            )
        return text + "".join(f"; {len([r for r in self.runs if r.problem == p])} give {p}" for p in problems)


def dl16_spread(run: Callable[[], Any], eager: Any, layers: int, runs: int = RUNS) -> DL16Spread:
    """`run()` (a model's forward) `runs` times under `DL16Eager` (no jitter, then seeds 1, 2,
    ...), each compared with `eager` as a compiled result of depth `layers` is."""
    comparisons = []
    for seed in range(runs):
        with torch.no_grad(), DL16Eager(seed or None):
            out = run()
        comparisons.append(compare_model_outputs(out, eager, layers))
    return DL16Spread(comparisons)
