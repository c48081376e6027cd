"""The pass: the adaptations in the order they are tried, applied to a fixed point."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker, RewritePattern

from spyre_mlir.transforms.torch_adapt.attention import (
    GroupedHeadsInRows,
    HeadsFromTransposedLinear,
    ScalingsOnOneOperand,
)
from spyre_mlir.transforms.torch_adapt.forms import (
    MaxDimToAmax,
    PowToMultiplications,
    ScalarTensorOperand,
    SliceOfCat,
    SplitIntoSlices,
    TanhGeluForm,
)
from spyre_mlir.transforms.torch_adapt.lane_moves import (
    InterleavedLaneMovesAsProduct,
    LaneMovesAsProduct,
    LaneMovesInOneSwap,
    NegationsOntoFactor,
)
from spyre_mlir.transforms.torch_adapt.rowwise import (
    ProductsWithOneColumn,
    ReduceWithoutKeepdim,
    SliceBeforeRowwise,
    SoftmaxOverTrailingUnits,
)
from spyre_mlir.transforms.torch_adapt.views import ElementwiseBeforeView, ViewOfView

ADAPTATIONS: tuple[type[RewritePattern], ...] = (
    TanhGeluForm,
    PowToMultiplications,
    MaxDimToAmax,
    SplitIntoSlices,
    SliceOfCat,
    ScalarTensorOperand,
    SoftmaxOverTrailingUnits,
    ProductsWithOneColumn,
    ReduceWithoutKeepdim,
    ElementwiseBeforeView,
    ViewOfView,
    HeadsFromTransposedLinear,
    LaneMovesAsProduct,
    InterleavedLaneMovesAsProduct,
    LaneMovesInOneSwap,
    NegationsOntoFactor,
    ScalingsOnOneOperand,
    GroupedHeadsInRows,
    SliceBeforeRowwise,
)
"""The rewrites, in the order they are tried on each op (the gelu form is matched before its
pow(x, 3) is rewritten)."""


@dataclass(frozen=True)
class TorchAdaptPass(ModulePass):
    """Apply every adaptation to a fixed point (the package docstring lists them)."""

    name = "torch-adapt"

    numerics: str = "dl16"
    """The device's numerics mode: the lane moves become products only with "dl16", which holds
    no infinity (LaneMovesAsProduct)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        products = (LaneMovesAsProduct, InterleavedLaneMovesAsProduct)
        adaptations = [cls() for cls in ADAPTATIONS if self.numerics == "dl16" or cls not in products]
        PatternRewriteWalker(GreedyRewritePatternApplier(adaptations), walk_reverse=True).rewrite_module(op)
