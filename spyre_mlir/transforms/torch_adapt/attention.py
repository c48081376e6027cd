"""Attention: heads from a transposed linear, scalings on one operand of a matmul, and
grouped query heads as rows of one product."""

from __future__ import annotations

import math

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from spyre_mlir.dialects import torch as t
from spyre_mlir.dialects.spyre.origin import OriginAttr, origin_of, set_origin
from spyre_mlir.target.constants import F16_LANES
from spyre_mlir.transforms.torch_adapt.utils import ELEMENT_MOVES, VIEWS, erase_dead, int_list, new_op

HEAD_VIEWS = (
    *VIEWS,
    t.AtenPermuteOp.name,
    t.AtenTransposeIntOp.name,
    "torch.aten.expand",
    t.AtenMulScalarOp.name,
    "torch.aten.div.Scalar",
)
"""Ops a head tensor may pass through on its way to the attention's matmuls (views, and a
scale by a number, which runs in any layout: SDPA's math form scales q and k)."""


HEAD_READERS = (t.AtenBmmOp.name, "torch.aten.matmul")


def _feeds_only_matmuls(v: SSAValue) -> bool:
    """Whether v is read, and every path from it, through views, permutes, expands and
    scalings, ends in a batched matmul (the attention's scores or context)."""
    uses = list(v.uses)
    return bool(uses) and all(
        u.operation.name in HEAD_READERS
        or (u.operation.name in HEAD_VIEWS and u.index == 0 and _feeds_only_matmuls(u.operation.results[0]))
        for u in uses
    )


class HeadsFromTransposedLinear(RewritePattern):
    """An attention head split of a Linear whose heads are no whole sticks, computed transposed:

        permute(view(addmm(b, x, permute(w, [1, 0])), [B, S, H, D]), [0, 2, 1, 3])
          -> permute(view(mm(w, permute(x, [1, 0])) + view(b, [H * D, 1]), [H, D, B, S]), [2, 0, 3, 1])

    (x: (B * S, K), w: (H * D, K), b: (H * D,); alpha = beta = 1; D not a multiple of a
    stick's 64 elements; S a multiple of 64, so that sticks along the sequence are full (the
    corpus's 23 tokens would fill 23 of 64 lanes); the heads go only, through views and
    scalings, to batched matmuls: element-wise work on them, e.g. a rotary embedding, would
    read them sticked along the sequence and cost relayouts of its own.) The same products and
    sums in other tile shapes: the same result in the device model's f64 reference mode, within
    the fp32 accumulation-order bound otherwise (docs/numerics.md).
    In the generic layout the result (H * D, B * S) is sticked along the sequence, so the
    heads are a view: no relayout for the split, none for K^T (the scores' B operand), one
    for Q and one for V (to be sticked along D), and one for x^T, shared by the three, in
    place of two each for Q and V and one for K."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name != t.AtenPermuteOp.name or t.constant_list_ints(op.operands[1]) != [0, 2, 1, 3]:
            return
        view = op.operands[0].owner
        if not (isinstance(view, Operation) and view.name in VIEWS and view.results[0].has_one_use()):
            return
        mm = view.operands[0].owner
        if not (isinstance(mm, Operation) and mm.name == t.AtenAddmmOp.name and mm.results[0].has_one_use()):
            return
        if t.constant_float_value(mm.operands[3]) != 1.0 or t.constant_float_value(mm.operands[4]) != 1.0:
            return
        b, x, wt = mm.operands[0], mm.operands[1], mm.operands[2]
        wp = wt.owner
        if not (
            isinstance(wp, Operation)
            and wp.name == t.AtenPermuteOp.name
            and t.constant_list_ints(wp.operands[1]) == [1, 0]
        ):
            return
        w = wp.operands[0]
        split, xs, ws, bs, rt = (
            t.sizes_of(view.results[0]),
            t.sizes_of(x),
            t.sizes_of(w),
            t.sizes_of(b),
            op.results[0].type,
        )
        if split is None or xs is None or ws is None or bs is None or len(split) != 4 or len(xs) != 2 or len(ws) != 2:
            return
        B, S, H, D = split
        (M, K), N = xs, ws[0]
        if M != B * S or N != H * D or ws[1] != K or bs != (N,) or D % F16_LANES == 0 or S % F16_LANES:
            return
        if not _feeds_only_matmuls(op.results[0]):  # last: it walks the heads' readers
            return
        dtype = t.vtensor_type(op.results[0]).get_dtype()
        swap_ops, swap = int_list([1, 0])
        xt = new_op(t.AtenPermuteOp.name, [x, swap], t.ValueTensorType([K, M], dtype))
        prod = new_op(t.AtenMmOp.name, [w, xt.results[0]], t.ValueTensorType([N, M], dtype))
        col_ops, col = int_list([N, 1])
        bias = new_op(t.AtenViewOp.name, [b, col], t.ValueTensorType([N, 1], dtype))
        one = t.ConstantIntOp(1)
        add = new_op(
            t.AtenAddTensorOp.name, [prod.results[0], bias.results[0], one.result], t.ValueTensorType([N, M], dtype)
        )
        heads_ops, heads = int_list([H, D, B, S])
        split_view = new_op(t.AtenViewOp.name, [add.results[0], heads], t.ValueTensorType([H, D, B, S], dtype))
        order_ops, order = int_list([2, 0, 3, 1])
        out = new_op(t.AtenPermuteOp.name, [split_view.results[0], order], rt)
        ops = [*swap_ops, xt, prod, *col_ops, bias, one, add, *heads_ops, split_view, *order_ops, out]
        rewriter.replace(op, ops, [out.results[0]])
        erase_dead(rewriter, [view, mm, wp])


def _scaling_under_moves(v: SSAValue) -> Operation | None:
    """The mul.Scalar by a constant that v is, through ELEMENT_MOVES, each op (and the
    scaling) read by nothing else; else None."""
    while isinstance(owner := v.owner, Operation) and v.has_one_use():
        if owner.name == t.AtenMulScalarOp.name and t.constant_float_value(owner.operands[1]) is not None:
            return owner
        if owner.name not in ELEMENT_MOVES:
            return None
        v = owner.operands[0]
    return None


def _unclaim_moves(v: SSAValue, scaling: Operation) -> None:
    """The moves from `scaling` to v hold the torch ops' values no longer once the scaling is
    moved to the other operand: their origins keep their ops and claim no value (-1)."""
    while isinstance(owner := v.owner, Operation) and owner is not scaling:
        origin = origin_of(owner)
        if origin is not None:
            set_origin(owner, OriginAttr(origin.op_ids, [-1] * len(origin.value_ids)))
        v = owner.operands[0]


class ScalingsOnOneOperand(RewritePattern):
    """A product of two scaled operands scaled once (SDPA's decomposition scales q and k
    each by sqrt(scale), for fp16 range):

        bmm(m(x * c), m'(y * d)) -> bmm(m(x * (c * d)), m'(y))

    m and m' move or copy elements only (ELEMENT_MOVES), each op read by nothing else. Each
    product is x * y * c * d either way; one rounding of a scaling is gone (exact when c * d
    is a power of two, as SDPA's scale 1/sqrt(D) is for heads of 4^n lanes), and the operand
    that is the whole K cache, transposed, is no longer scaled at every decode step."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name != t.AtenBmmOp.name:
            return
        lhs, rhs = (_scaling_under_moves(v) for v in op.operands)
        if lhs is None or rhs is None or rhs.operands[0].type != rhs.results[0].type:
            return
        c, d = t.constant_float_value(lhs.operands[1]), t.constant_float_value(rhs.operands[1])
        assert c is not None and d is not None
        if not math.isfinite(c * d):
            return
        for v, scaling in zip(op.operands, (lhs, rhs)):
            _unclaim_moves(v, scaling)
        both = t.ConstantFloatOp(c * d)
        scaled = new_op(t.AtenMulScalarOp.name, [lhs.operands[0], both.result], lhs.results[0].type)
        rewriter.replace(lhs, [both, scaled], [scaled.results[0]])
        rewriter.replace(rhs, [], [rhs.operands[0]])


def _repeated_kv(v: SSAValue) -> tuple[SSAValue, int, list[Operation]] | None:
    """(kv, R, ops) when v = f(view(clone(expand(unsqueeze(kv, 2), [B, G, R, L, D])), [B, G * R,
    L, D])), f a permute fixing dims 0 and 1, a scaling by a number, an expand to the same shape
    and last a view to [B * G * R, X, Y], each op read by nothing else; ops are the matched
    ops, readers first (f's last view first, the unsqueeze last); else None."""
    chain: list[Operation] = []
    while True:
        owner = v.owner
        if not isinstance(owner, Operation) or not v.has_one_use():
            return None
        if owner.name in VIEWS and not chain and len(t.sizes_of(v) or ()) == 3:
            chain.append(owner)
        elif owner.name == t.AtenPermuteOp.name and (t.constant_list_ints(owner.operands[1]) or [])[:2] == [0, 1]:
            chain.append(owner)
        elif (
            owner.name in (t.AtenMulScalarOp.name, "torch.aten.div.Scalar")
            and t.constant_float_value(owner.operands[1]) is not None
        ):
            chain.append(owner)
        elif owner.name == "torch.aten.expand" and t.sizes_of(owner.operands[0]) == t.sizes_of(v):
            chain.append(owner)
        elif owner.name in VIEWS and chain:
            break
        else:
            return None
        v = owner.operands[0]
    heads = t.sizes_of(owner.results[0])
    clone = owner.operands[0].owner
    if not (isinstance(clone, Operation) and clone.name == t.AtenCloneOp.name and clone.results[0].has_one_use()):
        return None
    expand = clone.operands[0].owner
    if not (isinstance(expand, Operation) and expand.name == "torch.aten.expand" and expand.results[0].has_one_use()):
        return None
    unsqueeze = expand.operands[0].owner
    if not (
        isinstance(unsqueeze, Operation)
        and unsqueeze.name == "torch.aten.unsqueeze"
        and t.constant_int_value(unsqueeze.operands[1]) == 2
        and unsqueeze.results[0].has_one_use()
    ):
        return None
    kv, wide, last = unsqueeze.operands[0], t.sizes_of(expand.results[0]), t.sizes_of(chain[0].results[0])
    ks = t.sizes_of(kv)
    if heads is None or wide is None or ks is None or last is None or len(ks) != 4 or len(wide) != 5:
        return None
    b, g, r, length, d = wide
    if (b, g, length, d) != ks or heads != (b, g * r, length, d) or last[0] != b * g * r:
        return None
    return kv, r, [*chain, owner, clone, expand, unsqueeze]


class GroupedHeadsInRows(RewritePattern):
    """GQA's repeat_kv folded into the rows of the attention's products:

        bmm(A, view(f(view(clone(expand(unsqueeze(kv, 2), [B, G, R, L, D])), [B, G * R, L, D]))))
          -> view(bmm(view(A, [B * G, R * M, K]), view(f(kv), [B * G, X, Y])), [B * G * R, M, N])

    (A: (B * G * R, M, K), the query heads of a group consecutive; f a permute of the last two
    dims and a scaling by a number, applied to the G heads of kv instead of their R copies.)
    Each result element is the same products and sums as before, in other tile shapes: the
    same result in the device model's f64 reference mode, within the fp32 accumulation-order
    bound otherwise (docs/numerics.md). The copies of the cache (R x its bytes, written and read every
    step) and their launches are gone."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name != t.AtenBmmOp.name:
            return
        a, rhs = op.operands
        found = _repeated_kv(rhs)
        shapes = t.sizes_of(a), t.sizes_of(op.results[0])
        if found is None or shapes[0] is None or shapes[1] is None:
            return
        kv, r, matched = found
        (batch, m, k), n = shapes[0], shapes[1][2]
        kv_heads = t.sizes_of(kv)
        if batch % r or kv_heads is None:
            return
        groups = batch // r
        dtype = t.vtensor_type(op.results[0]).get_dtype()
        ops: list[Operation] = []
        v = kv
        for f in reversed(matched[:-4]):  # f, applied to kv's G heads
            shape = list(t.sizes_of(f.results[0]) or ())
            if f.name == "torch.aten.expand":
                continue
            if f.name in VIEWS:
                size_ops, sizes = int_list([groups, *shape[1:]])
                new = new_op(t.AtenViewOp.name, [v, sizes], t.ValueTensorType([groups, *shape[1:]], dtype))
                ops += [*size_ops, new]
            else:
                shape[1] = kv_heads[1]
                new = new_op(f.name, [v, *f.operands[1:]], t.ValueTensorType(shape, dtype))
                ops.append(new)
            v = new.results[0]
        rows_ops, rows = int_list([groups, r * m, k])
        lhs = new_op(t.AtenViewOp.name, [a, rows], t.ValueTensorType([groups, r * m, k], dtype))
        prod = new_op(t.AtenBmmOp.name, [lhs.results[0], v], t.ValueTensorType([groups, r * m, n], dtype))
        back_ops, back = int_list([batch, m, n])
        out = new_op(t.AtenViewOp.name, [prod.results[0], back], op.results[0].type)
        rewriter.replace(op, [*ops, *rows_ops, lhs, prod, *back_ops, out], [out.results[0]])
        erase_dead(rewriter, matched)
