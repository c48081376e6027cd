"""Moves of elements between lanes (a rotary embedding's rotate_half): as a product by a
signed permutation, in one swap of the stick dim, or with their signs moved onto a factor."""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, Float32Type, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from spyre_mlir.dialects import torch as t
from spyre_mlir.target.constants import F16_LANES
from spyre_mlir.transforms.torch_adapt.utils import erase_dead, new_op


def _lane_piece(v: SSAValue) -> tuple[SSAValue, int, int, bool, list[Operation]] | None:
    """(x, start, end, negated, ops) when v is x[..., start:end] (a step-1 slice of the last dim
    with constant bounds), negated or not, each op read by nothing else; else None."""
    ops: list[Operation] = []
    owner = v.owner
    negated = isinstance(owner, Operation) and owner.name == "torch.aten.neg"
    if negated:
        assert isinstance(owner, Operation)
        if not v.has_one_use():
            return None
        ops.append(owner)
        v = owner.operands[0]
        owner = v.owner
    if not (isinstance(owner, Operation) and owner.name == "torch.aten.slice.Tensor" and v.has_one_use()):
        return None
    x = owner.operands[0]
    xs = t.sizes_of(x)
    dim, start, end, step = (t.constant_int_value(o) for o in owner.operands[1:5])
    if not xs or dim is None or start is None or end is None or step != 1 or dim % len(xs) != len(xs) - 1:
        return None
    size = xs[-1]
    start, end = (max(0, min(size, i + size if i < 0 else i)) for i in (start, end))
    return (x, start, end, negated, [*ops, owner]) if start < end else None


def _cat_of_lane_pieces(
    op: Operation,
) -> tuple[t.PrimListConstructOp, Sequence[int], list[tuple[SSAValue, int, int, bool, list[Operation]]]] | None:
    """(the list, the cat's shape, its pieces) when op is cat([±x[..., a1:b1], ...], -1) of
    pieces of one x (`_lane_piece`), its list read by nothing else; else None."""
    if op.name != "torch.aten.cat" or not isinstance(listed := op.operands[0].owner, t.PrimListConstructOp):
        return None
    rs, dim = t.sizes_of(op.results[0]), t.constant_int_value(op.operands[1])
    if not rs or dim is None or dim % len(rs) != len(rs) - 1 or not listed.results[0].has_one_use():
        return None
    pieces = [_lane_piece(e) for e in listed.elements]
    if any(p is None for p in pieces) or len({id(p[0]) for p in pieces if p is not None}) != 1:
        return None
    return listed, rs, [p for p in pieces if p is not None]


def _moves_lanes(found: Sequence[tuple[SSAValue, int, int, bool, list[Operation]]]) -> bool:
    """Whether a cat of these pieces (`_cat_of_lane_pieces`) moves elements between lanes: a
    piece starts or ends inside a stick of x, or starts inside a stick of the cat."""
    offset = 0
    for _, start, end, _, _ in found:
        if start % F16_LANES or end % F16_LANES or offset % F16_LANES:
            return True
        offset += end - start
    return False


LANE_PRODUCT_MAX = 4 * F16_LANES
"""The widest last dim (and cat) `LaneMovesAsProduct` moves by a product: 4 sticks, a rotary
embedding's head of up to 256, whose signed permutation matrix is 256 x 256."""


_SAME_DIMS = frozenset(
    {
        "torch.aten.mul.Scalar",
        "torch.aten.div.Scalar",
        "torch.aten.add.Scalar",
        "torch.aten.sub.Scalar",
        "torch.aten.neg",
        "torch.aten.clone",
        "torch.aten.alias",
    }
)


_BROADCASTING = frozenset({"torch.aten.mul.Tensor", "torch.aten.add.Tensor", "torch.aten.sub.Tensor"})


def _dim_through_view(old: Sequence[int] | None, new: Sequence[int] | None, dim: int) -> int | None:
    """Where dim `dim` of `old` is in `new` when a reshape keeps it whole (the same extent, and
    the same number of elements before and after it); else None."""
    if not old or not new:
        return None
    before, after = math.prod(old[:dim]), math.prod(old[dim + 1 :])
    for j, n in enumerate(new):
        if n == old[dim] and math.prod(new[:j]) == before and math.prod(new[j + 1 :]) == after:
            return j
    return None


def _only_contracted(v: SSAValue, dim: int, seen: set[SSAValue] | None = None) -> bool:
    """Whether every use of v reaches, through element-wise ops and views that keep dim `dim`
    whole, only matmuls that contract along it (the A operand's last dim, the B operand's dim
    before last) or sums along it: then a NaN anywhere along `dim` makes the same products NaN
    whether or not it was spread along `dim` first. Any other reader (a return, a cache update,
    a reduction along another dim) may see the spread."""
    seen = set() if seen is None else seen
    if v in seen:
        return True
    seen.add(v)
    rank = len(t.sizes_of(v) or ())
    for use in v.uses:
        op = use.operation
        name, out = op.name, op.results[0] if op.results else None
        out_rank = len(t.sizes_of(out) or ()) if out is not None else 0
        if name in ("torch.aten.bmm", "torch.aten.mm", "torch.aten.matmul"):
            if not ((use.index == 0 and dim == rank - 1) or (use.index == 1 and dim == rank - 2)):
                return False
        elif name == "torch.aten.linear":
            if use.index != 0 or dim != rank - 1:
                return False
        elif name == "torch.aten.sum.dim_IntList":  # a product's sum along the dim (ProductsWithOneColumn)
            dims = t.constant_list_ints(op.operands[1])
            if use.index != 0 or dims is None or [d % rank for d in dims] != [dim]:
                return False
        elif out is None or not rank:
            return False
        elif name in _SAME_DIMS and use.index == 0:
            if not _only_contracted(out, dim, seen):
                return False
        elif name in _BROADCASTING or name == "torch.aten.expand":
            if not _only_contracted(out, dim + out_rank - rank, seen):
                return False
        elif name == "torch.aten.unsqueeze":
            d = t.constant_int_value(op.operands[1])
            if d is None or not _only_contracted(out, dim + (1 if d % (rank + 1) <= dim else 0), seen):
                return False
        elif name in (t.AtenViewOp.name, "torch.aten._unsafe_view", "torch.aten.reshape"):
            moved = _dim_through_view(t.sizes_of(v), t.sizes_of(out), dim)
            if moved is None or not _only_contracted(out, moved, seen):
                return False
        elif isinstance(op, t.PrimListConstructOp):  # pieces of a cat: rows stay rows
            cats = [u.operation for u in op.result.uses]
            if not cats or any(c.name != "torch.aten.cat" or len(t.sizes_of(c.results[0]) or ()) != rank for c in cats):
                return False
            if not all(_only_contracted(c.results[0], dim, seen) for c in cats):
                return False
        elif name == t.AtenTransposeIntOp.name:
            a, b = (t.constant_int_value(o) for o in op.operands[1:3])
            if a is None or b is None:
                return False
            a, b = a % rank, b % rank
            if not _only_contracted(out, b if dim == a else a if dim == b else dim, seen):
                return False
        elif name == t.AtenPermuteOp.name:
            perm = t.constant_list_ints(op.operands[1])
            if perm is None or not _only_contracted(out, [q % rank for q in perm].index(dim), seen):
                return False
        else:
            return False
    return True


class LaneMovesAsProduct(RewritePattern):
    """cat([±x[..., a1:b1], ±x[..., a2:b2], ...], -1) with a piece that starts or ends inside a
    stick (a rotary embedding's rotate_half, cat(-x[..., h:], x[..., :h])), x's last dim D and
    the cat's N at most LANE_PRODUCT_MAX:

        -> linear(x, P),  P[j, i] = ±1 where output lane j takes x's lane i, else 0  (N x D)

    One matmul with a constant (sent once) in place of the lane moves: a swap of the stick dim,
    slices, a negation, a cat and a swap back. Exact for finite x: each output is one product
    by ±1, summed with zeros in fp32 and stored. A NaN in x would spread over its row's
    outputs (NaN x 0) where the cat keeps it in its lane, so the rewrite is taken only where
    that cannot show: when the result reaches nothing but matmuls that contract along the
    moved dim (`_only_contracted`: a rotary embedding's q and k on their way to the attention
    scores, where a NaN in a row makes the row's products NaN either way), and only with DL16
    numerics, which hold no infinity (inf x 0 would be NaN; the module's target's `numerics`)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        matched = _cat_of_lane_pieces(op)
        if matched is None:
            return
        listed, rs, found = matched
        x, xs = found[0][0], t.sizes_of(found[0][0])
        if xs is None or list(xs[:-1]) != list(rs[:-1]) or max(xs[-1], rs[-1]) > LANE_PRODUCT_MAX:
            return
        dtype = t.vtensor_type(op.results[0]).get_dtype()
        if (
            not _moves_lanes(found)
            or not isinstance(dtype, Float32Type)
            or not _only_contracted(op.results[0], len(rs) - 1)
        ):
            return
        d, n = xs[-1], rs[-1]
        weights = [0.0] * (n * d)
        j = 0
        for _, start, end, negated, _ in found:
            for i in range(start, end):
                weights[j * d + i] = -1.0 if negated else 1.0
                j += 1
        w = t.ValueTensorLiteralOp(
            DenseIntOrFPElementsAttr.from_list(TensorType(dtype, [n, d]), weights), t.ValueTensorType([n, d], dtype)
        )
        none = t.ConstantNoneOp()
        moved = new_op("torch.aten.linear", [x, w.result, none.result], op.results[0].type)
        rewriter.replace(op, [w, none, moved], [moved.results[0]])
        erase_dead(rewriter, [listed, *(o for p in found for o in p[4])])


def _strided_lane_piece(v: SSAValue) -> tuple[SSAValue, int, int, bool, list[Operation]] | None:
    """(x, start, step, negated, ops) when v is unsqueeze(±x[..., start::step], -1) (a slice of
    the last dim with constant bounds and step, to its end or not), each op read by nothing
    else; else None."""
    owner = v.owner
    if not (isinstance(owner, Operation) and owner.name == "torch.aten.unsqueeze" and v.has_one_use()):
        return None
    rank, d = len(t.sizes_of(v) or ()), t.constant_int_value(owner.operands[1])
    if d is None or d % max(rank, 1) != rank - 1:
        return None
    ops: list[Operation] = [owner]
    v = owner.operands[0]
    owner = v.owner
    negated = isinstance(owner, Operation) and owner.name == "torch.aten.neg" and v.has_one_use()
    if negated:
        assert isinstance(owner, Operation)
        ops.append(owner)
        v = owner.operands[0]
        owner = v.owner
    if not (isinstance(owner, Operation) and owner.name == "torch.aten.slice.Tensor" and v.has_one_use()):
        return None
    x, xs = owner.operands[0], t.sizes_of(owner.operands[0])
    dim, start, step = (t.constant_int_value(owner.operands[i]) for i in (1, 2, 4))
    if not xs or dim is None or start is None or not step or step < 1 or dim % len(xs) != len(xs) - 1:
        return None
    start = max(0, min(xs[-1], start + xs[-1] if start < 0 else start))
    return x, start, step, negated, [*ops, owner]


class InterleavedLaneMovesAsProduct(RewritePattern):
    """view(cat([unsqueeze(±x[..., s1::k1], -1), unsqueeze(±x[..., s2::k2], -1), ...], -1),
    x.shape[:-1] + [N]), the pieces interleaved lane by lane (GPT-J's and CodeGen's
    rotate_every_two, stack((-x[..., 1::2], x[..., ::2]), -1).flatten(-2)), x's last dim and N
    at most LANE_PRODUCT_MAX:

        -> linear(x, P),  P[i * n + p, s_p + i * k_p] = ±1 for piece p of n

    as `LaneMovesAsProduct`: one matmul by a constant in place of strided slices, a negation, a
    cat along a new dim of n lanes and a view that moves them; taken under the same conditions
    (only contracting readers, DL16 numerics)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name != "torch.aten.view" or not isinstance(cat := op.operands[0].owner, Operation):
            return
        if cat.name != "torch.aten.cat" or not isinstance(listed := cat.operands[0].owner, t.PrimListConstructOp):
            return
        cs, rs, dim = t.sizes_of(cat.results[0]), t.sizes_of(op.results[0]), t.constant_int_value(cat.operands[1])
        if not cs or not rs or dim is None or dim % len(cs) != len(cs) - 1 or not cat.results[0].has_one_use():
            return
        if not listed.results[0].has_one_use() or list(rs) != [*cs[:-2], cs[-2] * cs[-1]]:
            return
        pieces = [_strided_lane_piece(e) for e in listed.elements]
        if any(p is None for p in pieces) or len({id(p[0]) for p in pieces if p is not None}) != 1:
            return
        found = [p for p in pieces if p is not None]
        x, xs = found[0][0], t.sizes_of(found[0][0])
        n, length = len(found), cs[-2]
        if xs is None or list(xs[:-1]) != list(rs[:-1]) or max(xs[-1], rs[-1]) > LANE_PRODUCT_MAX:
            return
        if any(start + (length - 1) * step >= xs[-1] for _, start, step, _, _ in found):
            return
        dtype = t.vtensor_type(op.results[0]).get_dtype()
        if not isinstance(dtype, Float32Type) or not _only_contracted(op.results[0], len(rs) - 1):
            return
        d, width = xs[-1], rs[-1]
        weights = [0.0] * (width * d)
        for p, (_, start, step, negated, _) in enumerate(found):
            for i in range(length):
                weights[(i * n + p) * d + start + i * step] = -1.0 if negated else 1.0
        w = t.ValueTensorLiteralOp(
            DenseIntOrFPElementsAttr.from_list(TensorType(dtype, [width, d]), weights),
            t.ValueTensorType([width, d], dtype),
        )
        none = t.ConstantNoneOp()
        moved = new_op("torch.aten.linear", [x, w.result, none.result], op.results[0].type)
        rewriter.replace(op, [w, none, moved], [moved.results[0]])
        erase_dead(rewriter, [cat, listed, *(o for p in found for o in p[4])])


class LaneMovesInOneSwap(RewritePattern):
    """cat([±x[..., a1:b1], ±x[..., a2:b2], ...], -1) with a piece that starts or ends inside a
    stick (a rotary embedding's rotate_half, cat(-x[..., h:], x[..., :h])):

        -> transpose(cat([±t[.., a1:b1, ..], ±t[.., a2:b2, ..], ...], p), p, -1), t = transpose(x, p, -1)

    with p the last other dim of extent > 1 (none: left as it is). The lowering would swap the
    stick dim with p for each slice, the negation and the cat (a block transpose there and
    back for each); here x is swapped once, its pieces are boxes of whole sticks along p, and
    the result is swapped back. Exact: the same elements, moved, the same negations.

    When the cat's only reader is a product by s (a rotary embedding's rotate_half(k) * sin),
    the negations move onto s instead: cat(...) * (s * S), S the lanes' signs (a constant of
    the cat's last dim). Exact too (a negation is), and s * S is one op for every layer that
    reads the same s (CSE), where each layer would negate its own pieces."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        matched = _cat_of_lane_pieces(op)
        if matched is None:
            return
        listed, rs, found = matched
        x = found[0][0]
        xs = t.sizes_of(x)
        partner = next((d for d in range(len(rs) - 2, -1, -1) if rs[d] > 1), None)
        if not _moves_lanes(found) or partner is None or xs is None or xs[:-1] != rs[:-1]:
            return
        dtype = t.vtensor_type(op.results[0]).get_dtype()
        last = len(rs) - 1

        def swapped(shape: Sequence[int]) -> t.ValueTensorType:
            out = list(shape)
            out[partner], out[last] = out[last], out[partner]
            return t.ValueTensorType(out, dtype)

        signs = _signs_onto_factor(op, found, rewriter) if any(p[3] for p in found) else False
        p_c, last_c = t.ConstantIntOp(partner), t.ConstantIntOp(last)
        one = t.ConstantIntOp(1)
        xt = new_op(t.AtenTransposeIntOp.name, [x, p_c.result, last_c.result], swapped(xs))
        ops: list[Operation] = [p_c, last_c, one, xt]
        parts: list[SSAValue] = []
        for _, start, end, negated, _ in found:
            bounds = t.ConstantIntOp(start), t.ConstantIntOp(end)
            shape = [*xs[:-1], end - start]
            box = new_op(
                "torch.aten.slice.Tensor",
                [xt.results[0], p_c.result, bounds[0].result, bounds[1].result, one.result],
                swapped(shape),
            )
            ops += [*bounds, box]
            if negated and not signs:
                box = new_op("torch.aten.neg", [box.results[0]], swapped(shape))
                ops.append(box)
            parts.append(box.results[0])
        list_type = listed.results[0].type
        assert isinstance(list_type, t.ListType)
        joined_list = t.PrimListConstructOp(parts, list_type)
        joined = new_op("torch.aten.cat", [joined_list.result, p_c.result], swapped(rs))
        back = new_op(t.AtenTransposeIntOp.name, [joined.results[0], p_c.result, last_c.result], op.results[0].type)
        rewriter.replace(op, [*ops, joined_list, joined, back], [back.results[0]])
        erase_dead(rewriter, [listed, *(o for p in found for o in p[4])])


class NegationsOntoFactor(RewritePattern):
    """cat([±x[..., a1:b1], ±x[..., a2:b2], ...], -1) of pieces of whole sticks, one negated at
    least (a rotary embedding's rotate_half at heads of 128), whose only reader is a product by
    s (rotate_half(q) * sin):

        -> cat([x[..., a1:b1], x[..., a2:b2], ...], -1) * (s * S)

    with S the lanes' signs (a constant of the cat's last dim). Exact (a negation is). The pieces are then slices alone, which the cat's kernel copies
    (spyre-fuse's sliced concats), where a negated piece took a slice kernel and a negation
    kernel of its own; s * S is one op for every layer that reads the same s (CSE). Pieces
    that start or end inside a stick are LaneMovesInOneSwap's."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        matched = _cat_of_lane_pieces(op)
        if matched is None:
            return
        listed, _, found = matched
        if _moves_lanes(found) or not any(p[3] for p in found) or not _signs_onto_factor(op, found, rewriter):
            return
        for v in list(listed.elements):
            if isinstance(neg := v.owner, Operation) and neg.name == "torch.aten.neg":
                rewriter.replace(neg, [], [neg.operands[0]])


def _signs_onto_factor(
    cat: Operation, found: Sequence[tuple[SSAValue, int, int, bool, list[Operation]]], rewriter: PatternRewriter
) -> bool:
    """When the cat's only reader is mul.Tensor(cat, s) (either order) with s of its dtype,
    replace s there by s * S, S the signs of the pieces' lanes (-1 where a piece is negated),
    and return True: the pieces are then taken without their negations. Else False."""
    uses = list(cat.results[0].uses)
    if len(uses) != 1 or (product := uses[0].operation).name != "torch.aten.mul.Tensor":
        return False
    other = product.operands[1 - uses[0].index]
    dtype = t.vtensor_type(cat.results[0]).get_dtype()
    shape = t.sizes_of(other)
    if (
        other is cat.results[0]
        or shape is None
        or not isinstance(dtype, Float32Type)
        or t.vtensor_type(other).get_dtype() != dtype
    ):
        return False
    lanes = [-1.0 if negated else 1.0 for _, start, end, negated, _ in found for _ in range(start, end)]
    n = len(lanes)
    if shape and shape[-1] not in (1, n):
        return False
    signs = t.ValueTensorLiteralOp(
        DenseIntOrFPElementsAttr.from_list(TensorType(dtype, [n]), lanes), t.ValueTensorType([n], dtype)
    )
    signed = new_op("torch.aten.mul.Tensor", [other, signs.result], t.ValueTensorType([*shape[:-1], n], dtype))
    rewriter.insert([signs, signed], InsertPoint.before(product))
    product.operands[1 - uses[0].index] = signed.results[0]
    rewriter.notify_op_modified(product)
    return True
