"""The pass: the adaptations in the order they are tried, applied to a fixed point."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker, RewritePattern

from spyre_mlir.analysis.origins import carrying
from spyre_mlir.dialects import spyre
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
    ViewAsItsOwnDtype,
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
    ViewAsItsOwnDtype,
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
    """Apply every adaptation to a fixed point (the package docstring lists them); the lane
    moves become products only where the module's `spyre.target` has DL16 numerics, which hold
    no infinity (LaneMovesAsProduct)."""

    name = "torch-adapt"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        dl16 = spyre.module_target(op).numerics == "dl16"
        products = (LaneMovesAsProduct, InterleavedLaneMovesAsProduct)
        adaptations = [cls() for cls in ADAPTATIONS if dl16 or cls not in products]
        # an adaptation may be equivalent only where its ops meet (a scaling moved from one
        # operand of a product to the other): the ops it makes claim no torch op's value
        applier = carrying(op, GreedyRewritePatternApplier(adaptations), values=False)
        PatternRewriteWalker(applier, walk_reverse=True).rewrite_module(op)
