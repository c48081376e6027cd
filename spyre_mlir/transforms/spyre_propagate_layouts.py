"""`spyre-propagate-layouts`: make every operand's layout one its consumer can read, with an
explicit `spyre.restickify` where it is not, then move what can be moved to the host.

    matmul      a, b and c in the generic stick layout (a sticked on K, b and c on N)
    pointwise   each input's sticks hold the same elements as the output's sticks (any
                device dim order; broadcast inputs read with stride 0); otherwise the input
                is restickified to the output's layout (or, if it broadcasts, to its own
                generic layout, or to a splat when it broadcasts along the stick dim)
    reduce      the input in the generic layout (the result is its splat)
    slice       the input in the generic layout
    fold        restickify(views(to_device(x))) -> to_device(x) straight into the wanted
                layout: the host transposes/reshapes for free on the way in
    drop        restickify to the layout it already has; restickify of a restickify;
                two restickifies of one value to one layout (CSE)

Layouts are compared in canonical form (`Layout.canonical`): equal forms place the tensor
identically. This first version keeps every compute result in the generic layout.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
from xdsl.utils.exceptions import PassFailedException

from spyre_mlir.analysis.sticks import broadcast_dim_map, operand_strides
from spyre_mlir.dialects import spyre
from spyre_mlir.layout import Layout


def _in_kernel(op: Operation) -> bool:
    """Kernels already formed (a spyre-level input with spyre.kernel ops) are left as they
    are: rewriting a kernel's body would break its one-compute-op form."""
    return isinstance(op.parent_op(), spyre.KernelOp)


def _generic(v: SSAValue) -> Layout:
    lay = spyre.device_layout(v.type)
    return Layout.generic(lay.shape, lay.element_bytes)


def _restickify_operand(op: Operation, index: int, target: Layout, rewriter: PatternRewriter) -> None:
    v = op.operands[index]
    r = spyre.RestickifyOp(v, spyre.device_tensor_type(target.shape, target))
    rewriter.insert(r, InsertPoint.before(op))
    op.operands[index] = r.result


class MatmulOperandsGeneric(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: spyre.MatmulOp, rewriter: PatternRewriter):
        if _in_kernel(op):
            return
        if spyre.device_layout(op.result.type).canonical() != _generic(op.result):
            raise PassFailedException(f"'spyre.matmul': result {op.result.type} must be in the generic stick layout")
        for i in (0, 1):
            v = op.operands[i]
            if spyre.device_layout(v.type).canonical() != _generic(v):
                _restickify_operand(op, i, _generic(v), rewriter)


class PointwiseOperandsShareSticks(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: spyre.PointwiseOp, rewriter: PatternRewriter):
        if _in_kernel(op):
            return
        out = spyre.device_layout(op.result.type)
        for i, v in enumerate(op.inputs):
            lay = spyre.device_layout(v.type)
            dim_map = broadcast_dim_map(out.shape, lay.shape)
            if operand_strides(out, lay, dim_map) is not None:
                continue
            if lay.shape == out.shape:
                target = out
            elif out.is_splat or out.stick_dim is not None and (not lay.shape or lay.shape[-1] == 1) and out.shape[-1] != 1:
                # broadcast along the stick, or into a splat result (e.g. a () operand of a (1,) result)
                target = Layout.splat(lay.shape, lay.element_bytes)
            else:
                target = Layout.generic(lay.shape, lay.element_bytes)
            if operand_strides(out, target, dim_map) is None:
                raise PassFailedException(
                    f"'spyre.pointwise': input {i} of shape {lay.shape} broadcasts along the output's stick dim "
                    f"(shape {out.shape}); the SFP has no lane broadcast yet"
                )
            _restickify_operand(op, i, target, rewriter)


def _view_chain(v: SSAValue) -> tuple[spyre.ToDeviceOp, list[Operation]] | None:
    """to_device and the views (outermost last) that lead to v, if v is such a chain."""
    views: list[Operation] = []
    while isinstance(v.owner, spyre.PermuteOp | spyre.ReshapeOp):
        views.append(v.owner)
        v = v.owner.input
    if not isinstance(v.owner, spyre.ToDeviceOp):
        return None
    return v.owner, list(reversed(views))


class FoldRestickifyIntoTransfer(RewritePattern):
    """The host lays the data out directly; permutes before any reshape compose."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: spyre.RestickifyOp, rewriter: PatternRewriter):
        if _in_kernel(op):
            return
        chain = _view_chain(op.input)
        if chain is None:
            return
        transfer, views = chain
        src = transfer.input.type
        assert isinstance(src, TensorType)
        perm = list(transfer.permutation.as_tuple()) if transfer.permutation else list(range(len(src.get_shape())))
        reshaped = spyre.device_layout(transfer.result.type).shape != tuple(src.get_shape()[p] for p in perm)
        for view in views:
            if isinstance(view, spyre.PermuteOp):
                if reshaped:
                    return  # a permute after a reshape is not one host transpose
                perm = [perm[p] for p in view.permutation.as_tuple()]
            else:
                reshaped = True
        new = spyre.ToDeviceOp(transfer.input, op.result.type, perm if perm != sorted(perm) else None)
        rewriter.replace(op, [new])


class ReduceInputGeneric(RewritePattern):
    """A reduction along the stick dim reads its input in the generic layout."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: spyre.ReduceOp, rewriter: PatternRewriter):
        if _in_kernel(op):
            return
        if _generic(op.input).stick_dim != op.dim.value.data:
            raise PassFailedException(
                f"'spyre.reduce': along dim {op.dim.value.data} of {spyre.device_layout(op.input.type).shape}: "
                f"the device reduces along the stick dim (the last, of extent > 1) only"
            )
        if spyre.device_layout(op.input.type).canonical() != _generic(op.input):
            _restickify_operand(op, 0, _generic(op.input), rewriter)


class SliceInputShareSticks(RewritePattern):
    """A slice copies whole sticks from its start on: it reads its input in the generic
    layout (one digit per host dim, so the box is one strided loop nest)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: spyre.SliceOp, rewriter: PatternRewriter):
        if _in_kernel(op):
            return
        if spyre.device_layout(op.input.type).canonical() != _generic(op.input):
            _restickify_operand(op, 0, _generic(op.input), rewriter)


class DropNeedlessRestickify(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: spyre.RestickifyOp, rewriter: PatternRewriter):
        if _in_kernel(op):
            return
        src = op.input
        if isinstance(src.owner, spyre.RestickifyOp):
            op.operands[0] = src.owner.input
            rewriter.notify_op_modified(op)
            return
        if spyre.device_layout(src.type).canonical() == spyre.device_layout(op.result.type).canonical():
            rewriter.replace(op, [], [src])


@dataclass(frozen=True)
class SpyrePropagateLayoutsPass(ModulePass):
    """Insert spyre.restickify where a consumer cannot read its operand's layout, and fold
    relayouts of host inputs into their transfers."""

    name = "spyre-propagate-layouts"

    fold_transfers: bool = True
    """Fold restickifies of transferred host values into the transfer (off: keep them on the device)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [MatmulOperandsGeneric(), PointwiseOperandsShareSticks(), ReduceInputGeneric(), SliceInputShareSticks()]
            ),
            apply_recursively=False,
        ).rewrite_module(op)
        patterns: list[RewritePattern] = [DropNeedlessRestickify()]
        if self.fold_transfers:
            patterns.append(FoldRestickifyIntoTransfer())
        PatternRewriteWalker(GreedyRewritePatternApplier(patterns)).rewrite_module(op)
        CommonSubexpressionElimination().apply(ctx, op)  # one restickify per value and layout
