"""Row-wise ops in the forms the lowering takes: a softmax over trailing unit dims, a product
with one column as a sum, reductions with keepdim, and a slice of rows moved before them."""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from spyre_mlir.dialects import torch as t
from spyre_mlir.transforms.torch_adapt.utils import erase_dead, int_list, new_op, sized


class SoftmaxOverTrailingUnits(RewritePattern):
    """_softmax(x, d) whose dims after d all have extent 1 -> view(_softmax(view(x, x.shape[:d + 1]),
    -1), x.shape): exact, the same rows normalised (ConvBERT's dynamic convolution weights,
    (46, 9, 1) along dim 1); the lowering reduces along the last dim only."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name != "torch.aten._softmax" or not sized(x_type := op.operands[0].type):
            return
        shape = list(x_type.get_shape())
        d = t.constant_int_value(op.operands[1])
        if d is None or not -len(shape) <= d < len(shape) or d % len(shape) == len(shape) - 1:
            return
        d %= len(shape)
        if any(n != 1 for n in shape[d + 1 :]) or op.results[0].type != x_type:
            return
        inner = t.ValueTensorType(shape[: d + 1], x_type.get_dtype())
        to_rows, rows = int_list(shape[: d + 1])
        back, full = int_list(shape)
        last = t.ConstantIntOp(-1)
        flat = new_op("torch.aten.view", [op.operands[0], rows], inner)
        soft = new_op("torch.aten._softmax", [flat.results[0], last.result, op.operands[2]], inner)
        out = new_op("torch.aten.view", [soft.results[0], full], x_type)
        rewriter.replace(op, [*to_rows, *back, last, flat, soft, out], [out.results[0]])


class ProductsWithOneColumn(RewritePattern):
    """bmm(A, B) with B of one column (N = 1) -> sum(A * transpose(B, 1, 2), [-1], keepdim):
    the same products, summed along the stick dim by a reduction (ConvBERT's dynamic
    convolution, (46, 16, 9) @ (46, 9, 1)). The matmul would read B sticked along its one
    column, an element per stick, which a relayout from B's own layout (its K along the
    sticks) cannot reach; here B's K stays along the sticks. Each product is stored in DL16
    before the sum (one rounding more than the matmul's, within the op-by-op bound)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name != "torch.aten.bmm":
            return
        a, b, r = op.operands[0], op.operands[1], op.results[0].type
        if not (sized(a.type) and sized(b.type) and sized(r)) or b.type.get_shape()[2] != 1:
            return
        (n, m, k), dtype = a.type.get_shape(), a.type.get_dtype()
        one, two = t.ConstantIntOp(1), t.ConstantIntOp(2)
        bt = new_op(t.AtenTransposeIntOp.name, [b, one.result, two.result], t.ValueTensorType([n, 1, k], dtype))
        products = new_op("torch.aten.mul.Tensor", [a, bt.results[0]], t.ValueTensorType([n, m, k], dtype))
        last_ops, last = int_list([-1])
        keep, none = t.ConstantBoolOp(True), t.ConstantNoneOp()
        total = new_op("torch.aten.sum.dim_IntList", [products.results[0], last, keep.result, none.result], r)
        rewriter.replace(op, [one, two, bt, products, *last_ops, keep, none, total], [total.results[0]])


class ReduceWithoutKeepdim(RewritePattern):
    """mean.dim / sum.dim_IntList / amax / amin with keepdim=False -> keepdim=True, then a view."""

    NAMES = ("torch.aten.mean.dim", "torch.aten.sum.dim_IntList", "torch.aten.amax", "torch.aten.amin")

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name not in self.NAMES:
            return
        keep = op.operands[2].owner
        if not isinstance(keep, t.ConstantBoolOp) or keep.value.value.data:
            return
        rt, xt = op.results[0].type, op.operands[0].type
        dims = t.constant_list_ints(op.operands[1])
        if not (
            isinstance(rt, t.ValueTensorType) and isinstance(xt, t.ValueTensorType) and rt.has_sizes and xt.has_sizes
        ):
            return
        if dims is None or len(dims) != 1 or not xt.get_shape():
            return
        shape = list(xt.get_shape())
        if not -len(shape) <= dims[0] < len(shape):  # out of range: left for the reference / host to refuse
            return
        if list(rt.get_shape()) != shape[: dims[0] % len(shape)] + shape[dims[0] % len(shape) + 1 :]:
            return  # a result type that is not the reduction's: not rewritten into an invalid view
        shape[dims[0] % len(shape)] = 1
        kept_type = t.ValueTensorType(shape, rt.get_dtype())
        true = t.ConstantBoolOp(True)
        kept = new_op(op.name, [op.operands[0], op.operands[1], true.result, *op.operands[3:]], kept_type)
        size_ops, sizes = int_list(rt.get_shape())
        view = new_op(t.AtenViewOp.name, [kept.results[0], sizes], rt)
        rewriter.replace(op, [true, kept, *size_ops, view], [view.results[0]])


class SliceBeforeRowwise(RewritePattern):
    """slice(f(a, b, ...), d, s, e, k) -> f(slice(a, d', s, e, k), slice(b, ...), ...) for f an
    element-wise op or a reduction with keepdim along other dims than d, whose result only the
    slice reads, and a slice keeping at most half of dim d: exact (each element of the result
    is computed from the same elements). An operand that broadcasts along d (missing, or of
    extent 1) is not sliced. Applied to a fixed point, a slice moves up to the first value
    something else reads: generate's prefill keeps the last position's logits
    (`hidden[:, -1:]` after the final norm), so the norm runs on that row instead of every
    prompt position's, and the slices of the value it normalises (the last residual sum, read
    by the norm's square and its scaling) are one after CSE; the residual add itself stays
    whole (its result has several readers), so the last layer runs as every other."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name != "torch.aten.slice.Tensor":
            return
        x, rt = op.operands[0], op.results[0].type
        f = x.owner
        if not isinstance(f, Operation) or len(f.results) != 1 or not x.has_one_use():
            return
        if not (sized(x.type) and sized(rt)) or not x.type.get_shape():
            return
        shape = list(x.type.get_shape())
        d = t.constant_int_value(op.operands[1])
        if d is None or not -len(shape) <= d < len(shape):
            return
        d %= len(shape)
        if 2 * rt.get_shape()[d] > shape[d] or list(rt.get_shape()) != shape[:d] + [rt.get_shape()[d]] + shape[d + 1 :]:
            return
        if f.name in (*t.ELEMENTWISE_UNARY, *t.ELEMENTWISE_SCALAR):
            arity = 1
        elif f.name in t.ELEMENTWISE_BINARY:
            arity = 2
        elif f.name in ReduceWithoutKeepdim.NAMES:
            dims, keep = t.constant_list_ints(f.operands[1]), f.operands[2].owner
            if dims is None or not isinstance(keep, t.ConstantBoolOp) or not keep.value.value.data:
                return
            if any(not -len(shape) <= r < len(shape) or r % len(shape) == d for r in dims):
                return
            arity = 1
        else:
            return
        new: list[Operation] = []
        operands: list[SSAValue] = []
        for o in f.operands[:arity]:
            if not sized(o.type) or o.type.get_dtype() != x.type.get_dtype() and f.name in t.ELEMENTWISE_BINARY:
                return
            oshape = list(o.type.get_shape())
            od = d - (len(shape) - len(oshape))
            if od < 0 or oshape[od] == 1:  # broadcast along d: read as it is
                operands.append(o)
                continue
            if oshape[od] != shape[d]:
                return
            dim = t.ConstantIntOp(od)
            oshape[od] = rt.get_shape()[d]
            piece = new_op(op.name, [o, dim.result, *op.operands[2:]], t.ValueTensorType(oshape, o.type.get_dtype()))
            new += [dim, piece]
            operands.append(piece.results[0])
        moved = new_op(f.name, [*operands, *f.operands[arity:]], rt)
        rewriter.replace(op, [*new, moved], [moved.results[0]])
        erase_dead(rewriter, [f])
