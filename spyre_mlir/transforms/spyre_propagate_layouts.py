"""`spyre-propagate-layouts`: make every operand's layout one its consumer can read, with an
explicit `spyre.restickify` where it is not, then move what can be moved to the host.

    matmul      c in the generic stick layout (a batched one's: batch-major, as converted);
                a (sticked on K) and b (on N) in a layout whose
                sticks hold what the generic layout's hold, each dim one device dim
                (`matmul_reads`: the generic layout or a stick permutation of it)
    pointwise   each input's sticks hold the same elements as the output's sticks (any
                device dim order; broadcast inputs read with stride 0); otherwise the input
                is restickified to the output's layout (or, if it broadcasts, to its own
                generic layout, or to a splat when it broadcasts along the stick dim)
    reduce      the input in the generic layout (the result is its splat)
    slice       the input as it is where its sticks hold the result's by one stride per loop
                (`slice_strides`), else in the generic layout
    concat      every input in the generic layout
    gather      the table in the generic layout (each row a DMA of whole sticks)
    fold        restickify(views(to_device(x))) -> to_device(x) straight into the wanted
                layout: the host transposes/reshapes for free on the way in
    drop        restickify to the layout it already has; restickify of a restickify;
                two restickifies of one value to one layout (CSE)

Layouts are compared in canonical form (`Layout.canonical`): equal forms place the tensor
identically.

Before the rules above, each pointwise result chooses its layout (option `choose`, on by
default). Candidates: the layout it was converted with (generic) and the layouts of its inputs
of the same shape (e.g. a transposed view's). Cost of a candidate L, in estimated seconds of
restickify kernels (analysis/cost.py: relayout_seconds, from the DDR bandwidth and the
dispatch of a kernel within a launch sequence of the module's `spyre.target`):

    cost(op, L)    = sum over inputs that cannot be read in L of relayout(input)
                   + future(result, L)
    future(v, L)   = sum over v's pointwise readers u of min over u's candidates L' of cost(u, L')
                   + relayout(v) if any other reader (matmul, reduce, view, a slice whose
                     part L does not hold by one stride per loop) needs v's original layout
                     and L is not it;  from_device reads any layout (free)

A pointwise op that is the only reader of a 2-D matmul's result (directly, or through a
reshape only it reads) becomes that matmul's epilogue in spyre-fuse when its result is placed
as the product's (a residual add after o_proj or down_proj): in any other candidate it is a
kernel of its own, which stores the product's result and loads it again, so that candidate
costs relayout(product's result) more; the product's layout is a candidate.

The cheapest candidate wins; a tie keeps the converted layout. Readers that need the original
layout then read a restickify of the result back to it (one, shared). So a pointwise chain on a
transposed value whose result goes to the host runs in the transposed layout (no relayout at
all), and one that feeds a matmul relayouts once, at the chain's input.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
from xdsl.utils.exceptions import PassFailedException

from spyre_mlir.analysis.cost import relayout_seconds
from spyre_mlir.analysis.origins import carrying, relayout_origin
from spyre_mlir.analysis.sticks import matmul_reads, slice_strides
from spyre_mlir.analysis.views import transfer_permutation
from spyre_mlir.diagnostics import Unsupported
from spyre_mlir.dialects import spyre
from spyre_mlir.layout import Layout, broadcast_dim_map, operand_strides
from spyre_mlir.target.config import DeviceConfig


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


def _operand_generic(op: Operation, index: int, rewriter: PatternRewriter) -> None:
    """Restickify operand `index` of `op` to the generic layout unless it is in it."""
    v = op.operands[index]
    if spyre.device_layout(v.type).canonical() != _generic(v):
        _restickify_operand(op, index, _generic(v), rewriter)


class MatmulOperandsReadable(RewritePattern):
    """The result in a layout the matmul writes as it is (`matmul_reads`: the generic one, or a
    batched product's batch-major one); an operand the matmul cannot read as it is is
    restickified to the generic layout."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: spyre.MatmulOp, rewriter: PatternRewriter):
        if _in_kernel(op):
            return
        if not matmul_reads(spyre.device_layout(op.result.type)):
            raise PassFailedException(
                f"'spyre.matmul': result {op.result.type} must be in a layout whose sticks hold the generic "
                f"layout's, each dim one device dim"
            )
        for i in (0, 1):
            v = op.operands[i]
            if not matmul_reads(spyre.device_layout(v.type)):
                _restickify_operand(op, i, _generic(v), rewriter)


def _wide_splat(lay: Layout) -> bool:
    """A splat whose last dim is wider than 1: an element per stick along it (a reduction's
    result, permuted). No splat of an operand that varies along that dim holds the operand, so
    the chooser offers the generic layout beside it (`LayoutChooser.candidates`)."""
    return lay.is_splat and bool(lay.shape) and lay.shape[-1] != 1


def _operand_target(out: Layout, lay: Layout) -> Layout:
    """The layout a pointwise input in `lay` is restickified to, for an output in `out`."""
    if lay.shape == out.shape:
        return out
    if out.is_splat and lay.shape and lay.shape[-1] != 1:  # no splat of `lay` (_wide_splat)
        return Layout.generic(lay.shape, lay.element_bytes)
    if out.is_splat or out.stick_dim is not None and (not lay.shape or lay.shape[-1] == 1) and out.shape[-1] != 1:
        # broadcast along the stick, or into a splat result (e.g. a () operand of a (1,) result)
        return Layout.splat(lay.shape, lay.element_bytes)
    return Layout.generic(lay.shape, lay.element_bytes)


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
            target = _operand_target(out, lay)
            if operand_strides(out, target, dim_map) is None:
                raise Unsupported(
                    f"'spyre.pointwise': input {i} of shape {lay.shape} broadcasts along the output's stick dim "
                    f"(shape {out.shape}); the SFP has no lane broadcast yet"
                )
            _restickify_operand(op, i, target, rewriter)


class FoldRestickifyIntoTransfer(RewritePattern):
    """The host lays the data out directly; permutes before any reshape compose."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: spyre.RestickifyOp, rewriter: PatternRewriter):
        if _in_kernel(op):
            return
        found = transfer_permutation(op.input)
        if found is None:
            return
        transfer, perm = found
        new = spyre.ToDeviceOp(transfer.input, op.result.type, perm if perm != sorted(perm) else None)
        rewriter.replace(op, [new])


class ReduceInputGeneric(RewritePattern):
    """A reduction along the stick dim reads its input in the generic layout."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: spyre.ReduceOp, rewriter: PatternRewriter):
        if _in_kernel(op):
            return
        if _generic(op.input).stick_dim != op.dim.value.data:
            raise Unsupported(
                f"'spyre.reduce': along dim {op.dim.value.data} of {spyre.device_layout(op.input.type).shape}: "
                f"the device reduces along the stick dim (the last, of extent > 1) only"
            )
        _operand_generic(op, 0, rewriter)


class SliceInputShareSticks(RewritePattern):
    """A slice copies whole sticks from its start on, the box one strided loop nest: it reads
    its input as it is where the input's sticks hold the result's by one stride per loop
    (`slice_strides`: e.g. a rotary embedding's halves of attention heads, transposed, whose
    sticks each hold 64 elements of one head and row), else in the generic layout."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: spyre.SliceOp, rewriter: PatternRewriter):
        if _in_kernel(op) or slice_strides(op) is not None:
            return
        _operand_generic(op, 0, rewriter)


class ConcatInputsGeneric(RewritePattern):
    """A concat copies whole sticks of each input to an offset of the result: it reads its
    inputs in the generic layout."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: spyre.ConcatOp, rewriter: PatternRewriter):
        if _in_kernel(op):
            return
        for i in range(len(op.inputs)):
            _operand_generic(op, i, rewriter)


class GatherTableGeneric(RewritePattern):
    """A gather copies a row of the table per index, each row's sticks by one stride: a table
    whose rows are not (a computed value viewed, e.g. rows in a permuted device-dim order) is
    restickified to the generic layout. A table read as it is (`spyre.table_rows`: a KV
    cache's pages, viewed from the cache's own layout) is left as it is: the gather reads
    only the rows it picks."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: spyre.GatherOp, rewriter: PatternRewriter):
        if _in_kernel(op) or spyre.table_rows(spyre.device_layout(op.table.type)) is not None:
            return
        _operand_generic(op, 0, rewriter)


class ScatterValuesByRows(RewritePattern):
    """A scatter reads its values a row at a time, each dim by one stick stride: values in
    another layout are restickified to the generic one. (The destination, written in place,
    keeps its layout: the op's verifier requires rows of it.)"""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: spyre.ScatterOp, rewriter: PatternRewriter):
        if _in_kernel(op) or spyre.rows_by_strides(spyre.device_layout(op.values.type)):
            return
        _restickify_operand(op, 2, _generic(op.values), rewriter)


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


def _product_read_alone(op: spyre.PointwiseOp) -> tuple[Layout, Layout] | None:
    """(the layout of `op`'s result placed as the product's, the product's layout) when `op`
    reads, once, the result of a 2-D matmul that nothing else reads, directly or through a
    reshape that nothing else reads and that moves no element: what spyre-fuse needs of an
    epilogue but the result's layout; else None."""
    out = spyre.device_layout(op.result.type)
    for v in dict.fromkeys(op.inputs):
        src = v
        if isinstance(v.owner, spyre.ReshapeOp) and len(list(v.uses)) == 1:
            src = v.owner.input
        mm = src.owner
        if not isinstance(mm, spyre.MatmulOp) or _in_kernel(mm) or len(list(mm.result.uses)) != 1:
            continue
        if len([u for u in op.inputs if u is v]) != 1:
            continue
        product = spyre.device_layout(mm.result.type)
        if len(product.shape) != 2 or product.element_bytes != out.element_bytes:
            continue
        there = product.reshaped(out.shape)
        if there is not None:
            return there, product
    return None


def _slice_reads(op: Operation, lay: Layout) -> bool:
    """Whether `op` is a slice that copies its part from a value in `lay` as it is (its
    sticks hold the part by one stride per loop: `slice_strides`), needing no relayout back;
    the chooser's cost and its placement of restickifies ask the same."""
    return isinstance(op, spyre.SliceOp) and not _in_kernel(op) and slice_strides(op, src=lay) is not None


class LayoutChooser:
    """The min-cost choice of pointwise result layouts (module docstring)."""

    def __init__(self, config: DeviceConfig, fold_transfers: bool):
        self.config = config
        self.fold_transfers = fold_transfers
        self.memo: dict[tuple[SSAValue, Layout], float] = {}
        self.products: dict[Operation, tuple[Layout, Layout] | None] = {}
        """`_product_read_alone` per op (the products and views it looks at are not rewritten)."""

    def product(self, op: spyre.PointwiseOp) -> tuple[Layout, Layout] | None:
        if op not in self.products:
            self.products[op] = _product_read_alone(op)
        return self.products[op]

    def layout(self, v: SSAValue, override: dict[SSAValue, Layout]) -> Layout:
        return override[v] if v in override else spyre.device_layout(v.type)

    def candidates(self, op: spyre.PointwiseOp, override: dict[SSAValue, Layout]) -> list[Layout]:
        out = spyre.device_layout(op.result.type)
        found = [out]
        if _wide_splat(out):
            found.append(Layout.generic(out.shape, out.element_bytes))
        seen = {lay.canonical() for lay in found}
        product = self.product(op)
        for lay in [self.layout(v, override) for v in op.inputs] + ([product[0]] if product else []):
            if lay.shape != out.shape or lay.element_bytes != out.element_bytes or lay.is_splat or lay.is_sparse:
                continue
            lay = Layout(out.shape, out.element_bytes, lay.device_size, lay.stride_map)
            if lay.canonical() not in seen:
                seen.add(lay.canonical())
                found.append(lay)
        return found

    def own_cost(self, op: spyre.PointwiseOp, out: Layout, override: dict[SSAValue, Layout]) -> float:
        """The inputs' restickifies for an output in `out`, plus the product's round trip
        through DDR where `op` could be its epilogue in another layout only (module docstring)."""
        total = self.inputs_cost(op, out, override)
        product = self.product(op)
        if product is not None and not out.places_like(product[0]):
            total += relayout_seconds(product[1], self.config)
        return total

    def inputs_cost(self, op: spyre.PointwiseOp, out: Layout, override: dict[SSAValue, Layout]) -> float:
        """The restickifies the inputs need for an output in `out` (PointwiseOperandsShareSticks
        places them); infinite if an input could not be read at all (a broadcast along the
        output's stick needs a splat, which only a one-element-wide input has)."""
        total = 0.0
        for v in op.inputs:
            lay = self.layout(v, override)
            dim_map = broadcast_dim_map(out.shape, lay.shape)
            if operand_strides(out, lay, dim_map) is not None:
                continue
            if operand_strides(out, _operand_target(out, lay), dim_map) is None:
                return math.inf
            if not (self.fold_transfers and transfer_permutation(v) is not None):  # the host lays it out free
                total += relayout_seconds(lay, self.config)
        return total

    def future(self, v: SSAValue, lay: Layout) -> float:
        key = (v, lay.canonical())
        if key not in self.memo:
            total, converted = 0.0, spyre.device_layout(v.type).canonical()
            back = False
            for use in v.uses:
                u = use.operation
                if isinstance(u, spyre.FromDeviceOp):
                    continue
                if isinstance(u, spyre.PointwiseOp) and not _in_kernel(u):
                    override = {v: lay}
                    total += min(
                        self.own_cost(u, c, override) + self.future(u.result, c) for c in self.candidates(u, override)
                    )
                elif _slice_reads(u, lay):
                    continue
                elif lay.canonical() != converted:
                    back = True
            if back:
                total += relayout_seconds(lay, self.config)
            self.memo[key] = total
        return self.memo[key]

    def choose(self, op: spyre.PointwiseOp) -> Layout:
        costs = [
            (self.own_cost(op, c, {}) + self.future(op.result, c), i, c) for i, c in enumerate(self.candidates(op, {}))
        ]
        return min(costs)[2]

    def apply(self, module: ModuleOp) -> None:
        for op in list(module.walk()):
            if not isinstance(op, spyre.PointwiseOp) or _in_kernel(op):
                continue
            converted = spyre.device_layout(op.result.type)
            best = self.choose(op)
            if best.canonical() == converted.canonical():
                continue
            old_type = op.result.type
            others = [
                (use.operation, use.index)
                for use in op.result.uses
                if not isinstance(use.operation, spyre.PointwiseOp | spyre.FromDeviceOp)
                and not _slice_reads(use.operation, best)
            ]
            result = Rewriter.replace_value_with_new_type(op.result, spyre.device_tensor_type(best.shape, best))
            if others:  # readers that need the converted layout read one restickify back to it
                back = spyre.RestickifyOp(result, old_type)
                Rewriter.insert_op(back, InsertPoint.after(op))
                relayout_origin(back, op)  # (op's ops: a value no torch op holds has no op of its own)
                for user, index in others:
                    user.operands[index] = back.result
            self.memo.clear()


@dataclass(frozen=True)
class SpyrePropagateLayoutsPass(ModulePass):
    """Insert spyre.restickify where a consumer cannot read its operand's layout, and fold
    relayouts of host inputs into their transfers."""

    name = "spyre-propagate-layouts"

    fold_transfers: bool = True
    """Fold restickifies of transferred host values into the transfer (off: keep them on the device)."""

    choose: bool = True
    """Choose each pointwise result's layout by least relayout cost (off: the converted one)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.choose:
            LayoutChooser(spyre.module_target(op), self.fold_transfers).apply(op)
        PatternRewriteWalker(
            carrying(
                op,
                GreedyRewritePatternApplier(
                    [
                        MatmulOperandsReadable(),
                        PointwiseOperandsShareSticks(),
                        ReduceInputGeneric(),
                        SliceInputShareSticks(),
                        ConcatInputsGeneric(),
                        GatherTableGeneric(),
                        ScatterValuesByRows(),
                    ]
                ),
            ),
            apply_recursively=False,
        ).rewrite_module(op)
        patterns: list[RewritePattern] = [DropNeedlessRestickify()]
        if self.fold_transfers:
            patterns.append(FoldRestickifyIntoTransfer())
        PatternRewriteWalker(carrying(op, GreedyRewritePatternApplier(patterns))).rewrite_module(op)
        CommonSubexpressionElimination().apply(ctx, op)  # one restickify per value and layout
