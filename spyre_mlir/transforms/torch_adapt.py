"""`torch-adapt`: mathematically equivalent rewrites at the torch level that let the device path
take an op it otherwise could not, or take it in fewer launches. Each rewrite states how exact it
is (fp32 on the host; the device then computes in DL16 either way).

    pow(x, 1)          -> x                                 exact
    pow(x, 2)          -> x * x                             exact (one rounding, as pow)
    pow(x, 3)          -> (x * x) * x                       <= 1 fp32 ulp apart; what eager's CPU kernel computes
    pow(x, 4)          -> (x * x) * (x * x)                 <= 1 fp32 ulp apart; likewise
    pow(x, -1)         -> reciprocal(x)                     exact
    pow(x, -2)         -> reciprocal(x * x)                 <= 1 fp32 ulp apart
    pow(x, 0.5)        -> sqrt(x)                           exact (both correctly rounded; NaN for x < 0)
    pow(x, -0.5)       -> rsqrt(x)                          <= 1 fp32 ulp apart
    max.dim(x, d, k)   -> amax(x, [d], k)                   exact, when the indices are unused
    split_with_sizes(x, sizes, d) -> a slice of x along d per piece
                                                            exact, when the pieces are unpacked
    _softmax(x, d)     -> view(_softmax(view(x, rows), -1))  exact, when the dims after d have extent 1
    bmm(A, B)          -> sum(A * transpose(B), -1, keepdim)  the same products, for B of one column;
                                                            each product stored in DL16 before the sum
    0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
                       -> gelu(x, approximate="tanh")       same formula (gelu_new / gelu_pytorch_tanh);
                                                            roundings of the chain differ by a few fp32 ulp
    op.Tensor(x, c)    -> op.Scalar(x, c)                   exact, for add/sub/mul/div whose other operand
                                                            is a 0-d constant tensor (scalar_tensor(c),
                                                            a 0-d literal) of x's dtype
    reduce(x, [d], keepdim=False) -> view(reduce(x, [d], keepdim=True), shape)
                                                            exact, for mean.dim / sum.dim_IntList / amax / amin
    f(view(x, s))      -> view(f(x), s)                     exact (an element-wise op commutes with a
                                                            reshape), for f a unary element-wise op (relu,
                                                            gelu, exp, ..., x op c for add/sub/mul/div.Scalar),
                                                            and for add/sub/mul/div.Tensor,
    g(view(a, s), view(b, s)) -> view(g(a, b), s)           minimum, maximum when a and b have one shape
                                                            and the view keeps the last dim (a free view):
                                                            a Linear's activation then sits right after its
                                                            matmul and runs as the matmul's epilogue, in the
                                                            matmul's layout (aot_autograd flattens a Linear
                                                            on a 3-d input to view -> addmm -> view)
    permute(x, p) op c -> permute(x op c, p)                exact, for add/sub/mul/div.Scalar when x is (through
                                                            views read by nothing else) an element-wise op's
                                                            result: the scaling joins it (SDPA's q * c after a
                                                            head split becomes a step of the projection's epilogue)
    view(view(x, s1), s2) -> view(x, s2)                    exact; and view(x, shape of x) -> x (x not a graph input)
    permute(view(addmm(b, x, w^T), [B, S, H, D]), [0, 2, 1, 3])
                       -> permute(view(w @ x^T + b[:, None], [H, D, B, S]), [2, 0, 3, 1])
                                                            the same products and sums (exact on the device;
                                                            fp32 rounding apart on the host), for heads D
                                                            that are no whole sticks: the heads are then a
                                                            view of the result sticked along the sequence
    cat([±x[..., a1:b1], ±x[..., a2:b2], ...], -1)
                       -> linear(x, P)                      exact for finite x (each output one product
                                                            by ±1), for x and the cat at most 4 sticks
                                                            wide and a piece ending inside a stick, the
                                                            result read only by matmuls contracting
                                                            along it (a NaN spread along a row shows
                                                            nowhere else) and DL16 numerics (no inf):
                                                            P the signed permutation
                       and likewise for pieces interleaved lane by lane,
                       view(cat([unsqueeze(±x[..., s::k], -1), ...], -1), [..., N]) (GPT-J's rotary)
                       otherwise
                       -> transpose(cat([±t[a1:b1], ±t[a2:b2], ...], p), p, -1),  t = transpose(x, p, -1)
                                                            exact (the same elements moved, the same
                                                            negations), when a piece ends inside a stick
                                                            (a rotary embedding's rotate_half): one swap of
                                                            the stick dim with dim p for the whole cat,
                                                            where the lowering would swap every piece and
                                                            the result apart
    cat([±x[..., a1:b1], ...], -1) * s
                       -> cat([x[..., a1:b1], ...], -1) * (s * S)
                                                            exact, for pieces of whole sticks (rotate_half
                                                            at heads of 128) read only by the product: S
                                                            the lanes' signs; no negation kernel, and the
                                                            pieces are slices the cat's kernel copies
    bmm(m(x * c), m'(y * d)) -> bmm(m(x * (c * d)), m'(y))  <= 1 fp32 ulp apart per element (one
                                                            rounding of a scaling fewer; none when c * d
                                                            is a power of two), m and m' moves and copies
                                                            (views, permutes, expands, clones): SDPA's
                                                            sqrt(scale) on q and on k becomes the scale
                                                            on q, and k (the whole transposed K cache, at
                                                            every step) is not scaled at all
    bmm(A, view(f(view(clone(expand(unsqueeze(kv, 2), [B, G, R, L, D])), [B, G * R, L, D]))))
                       -> view(bmm(view(A, [B * G, R * M, K]), view(f(kv))), [B * G * R, M, N])
                                                            the same products and sums, for GQA's repeat_kv
                                                            (f: a permute of the last two dims, a scaling):
                                                            the R query heads of a group are rows of one
                                                            product with their shared K or V, instead of
                                                            the cache copied R times
    slice(f(a, b), d) -> f(slice(a, d), slice(b, d))         exact, for f element-wise or a reduction along
                                                            other dims, read only by the slice, the slice
                                                            keeping at most half of d: generate's last-position
                                                            logits slice moves before the final norm

The pass runs first in spyre-pipeline; `convert-torch-to-spyre` without it stays correct (it
refuses what it cannot lower exactly, e.g. integer exponents, and the op runs on the CPU).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeGuard

from xdsl.context import Context
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, Float32Type, ModuleOp, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.rewriter import InsertPoint

from spyre_mlir.dialects import torch as t
from spyre_mlir.target.constants import F16_LANES


def _new(name: str, operands: Sequence[SSAValue], result_type: Attribute) -> Operation:
    return t.torch_op_class(name).create(operands=list(operands), result_types=[result_type])


def _scalar_constant(v: SSAValue) -> float | None:
    """The number a 0-d constant tensor holds: `scalar_tensor(c)` with a constant c, or a 0-d
    (or one-element) dense literal; else None."""
    owner = v.owner
    if isinstance(owner, Operation) and owner.name == "torch.aten.scalar_tensor":
        return t.constant_float_value(owner.operands[0])
    if isinstance(owner, t.ValueTensorLiteralOp) and isinstance(owner.value, DenseIntOrFPElementsAttr):
        values = owner.value.get_values()
        if len(values) == 1 and isinstance(v.type, t.ValueTensorType) and v.type.has_sizes and not v.type.get_shape():
            return float(values[0])
    return None


def _binary_with_scalar(v: SSAValue, kind: str) -> tuple[SSAValue, float] | None:
    """(x, c) when v = kind(x, c) with a constant number c (mul: either side; add: alpha 1)."""
    op = v.owner
    if not isinstance(op, Operation) or op.name not in (f"torch.aten.{kind}.Tensor", f"torch.aten.{kind}.Scalar"):
        return None
    if kind == "add" and t.constant_float_value(op.operands[2]) != 1.0:
        return None
    a, b = op.operands[0], op.operands[1]
    if (c := t.constant_float_value(b)) is not None:
        return a, c
    if kind == "mul" and (c := t.constant_float_value(a)) is not None:
        return b, c
    return None


def _sized(x: Attribute) -> TypeGuard[t.ValueTensorType]:
    """A `!torch.vtensor` type of known rank."""
    return isinstance(x, t.ValueTensorType) and x.has_sizes


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-6)


def _erase_dead(rewriter: PatternRewriter, ops: Sequence[Operation]) -> None:
    """Erase the ops of a matched chain that lost their last use (torch ops have no effects
    to keep; constants are left to the canonical clean-up)."""
    for op in ops:
        if op.parent is not None and all(not r.uses for r in op.results):
            rewriter.erase(op)


class PowToMultiplications(RewritePattern):
    """pow(x, c) for c in {1, 2, 3, 4, -1, -2, 0.5, -0.5}: multiplications, reciprocal, sqrt, rsqrt."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name != "torch.aten.pow.Tensor_Scalar":
            return
        c = t.constant_float_value(op.operands[1])
        x, rt = op.operands[0], op.results[0].type
        if c is None or x.type != rt:
            return
        if c == 1:
            rewriter.replace(op, [], [x])
            return
        new: list[Operation] = []

        def mul(a: SSAValue, b: SSAValue) -> SSAValue:
            new.append(_new("torch.aten.mul.Tensor", [a, b], rt))
            return new[-1].results[0]

        def unary(name: str, a: SSAValue) -> SSAValue:
            new.append(_new(f"torch.aten.{name}", [a], rt))
            return new[-1].results[0]

        if c in (2, -2):
            r = mul(x, x)
        elif c == 3:
            r = mul(mul(x, x), x)
        elif c == 4:
            sq = mul(x, x)
            r = mul(sq, sq)
        elif c == 0.5:
            r = unary("sqrt", x)
        elif c == -0.5:
            r = unary("rsqrt", x)
        elif c == -1:
            r = x
        else:
            return
        if c in (-1, -2):
            r = unary("reciprocal", r)
        rewriter.replace(op, new, [r])


class MaxDimToAmax(RewritePattern):
    """max.dim(x, d, keepdim) whose indices nobody reads -> amax(x, [d], keepdim)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name != "torch.aten.max.dim" or len(op.results) != 2 or op.results[1].uses:
            return
        dims = t.PrimListConstructOp([op.operands[1]], t.ListType(t.IntType()))
        amax = _new("torch.aten.amax", [op.operands[0], dims.result, op.operands[2]], op.results[0].type)
        rewriter.replace(op, [dims, amax], [amax.results[0], None])


class SplitIntoSlices(RewritePattern):
    """ListUnpack(split_with_sizes(x, sizes, d)) -> a slice of x along d per piece (and
    split.Tensor(x, size, d) likewise, its pieces `size` long but the last): exact, the same
    elements. A split's result is a list, which the lowering does not take; its slices are
    DMA copies (or views) on the device."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name != "torch.prim.ListUnpack" or not isinstance(split := op.operands[0].owner, Operation):
            return
        if split.name not in ("torch.aten.split_with_sizes", "torch.aten.split.Tensor") or not _sized(
            split.operands[0].type
        ):
            return
        x, xs = split.operands[0], split.operands[0].type.get_shape()
        d = t.constant_int_value(split.operands[2])
        if d is None or not -len(xs) <= d < len(xs) or split.results[0].uses.get_length() != 1:
            return
        d %= len(xs)
        if split.name == "torch.aten.split_with_sizes":
            sizes = t.constant_list_ints(split.operands[1])
        else:
            size = t.constant_int_value(split.operands[1])
            sizes = [min(size, xs[d] - i) for i in range(0, xs[d], size)] if size and size > 0 else None
        if sizes is None or sum(sizes) != xs[d] or len(sizes) != len(op.results):
            return
        dim, one = t.ConstantIntOp(d), t.ConstantIntOp(1)
        new: list[Operation] = [dim, one]
        pieces: list[SSAValue] = []
        start = 0
        for size, r in zip(sizes, op.results):
            bounds = t.ConstantIntOp(start), t.ConstantIntOp(start + size)
            piece = _new(
                "torch.aten.slice.Tensor", [x, dim.result, bounds[0].result, bounds[1].result, one.result], r.type
            )
            new += [*bounds, piece]
            pieces.append(piece.results[0])
            start += size
        rewriter.replace(op, new, pieces)
        _erase_dead(rewriter, [split])


class TanhGeluForm(RewritePattern):
    """0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))) -> gelu(x, "tanh"), matched from
    the final multiplication in any operand order of its commutative steps."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name != "torch.aten.mul.Tensor" or len(op.operands) != 2:
            return
        for half, one_plus in (op.operands, reversed(op.operands)):
            x = self._match(half, one_plus)
            if x is not None and x.type == op.results[0].type:
                gelu = _new("torch.aten.gelu", [x, (mode := t.ConstantStrOp("tanh")).result], x.type)
                chain = [o for o in (half.owner, one_plus.owner) if isinstance(o, Operation)]
                rewriter.replace(op, [mode, gelu], [gelu.results[0]])
                _erase_dead(rewriter, self._chain(chain))
                return

    @staticmethod
    def _match(half: SSAValue, one_plus: SSAValue) -> SSAValue | None:
        h = _binary_with_scalar(half, "mul")
        o = _binary_with_scalar(one_plus, "add")
        if h is None or o is None or not _close(h[1], 0.5) or not _close(o[1], 1.0):
            return None
        x, tanh = h[0], o[0]
        if not (isinstance(tanh.owner, Operation) and tanh.owner.name == "torch.aten.tanh"):
            return None
        inner = _binary_with_scalar(tanh.owner.operands[0], "mul")
        if inner is None or not _close(inner[1], math.sqrt(2 / math.pi)):
            return None
        s = inner[0].owner
        if not (
            isinstance(s, Operation)
            and s.name == "torch.aten.add.Tensor"
            and t.constant_float_value(s.operands[2]) == 1.0
        ):
            return None
        for lin, cube_term in (s.operands[:2], reversed(s.operands[:2])):
            c = _binary_with_scalar(cube_term, "mul")
            if lin is not x or c is None or not _close(c[1], 0.044715):
                continue
            p = c[0].owner
            if (
                isinstance(p, Operation)
                and p.name == "torch.aten.pow.Tensor_Scalar"
                and p.operands[0] is x
                and t.constant_float_value(p.operands[1]) == 3.0
            ):
                return x
        return None

    @staticmethod
    def _chain(roots: list[Operation]) -> list[Operation]:
        """The ops feeding the matched roots, users before producers (for erasing)."""
        order: list[Operation] = []
        stack = list(roots)
        while stack:
            o = stack.pop()
            if o in order or o.name.startswith("torch.constant"):
                continue
            order.append(o)
            stack.extend(
                v.owner for v in o.operands if isinstance(v.owner, Operation) and v.owner.name.startswith("torch.aten.")
            )
        return order


class ScalarTensorOperand(RewritePattern):
    """add/sub/mul/div.Tensor(x, a 0-d constant tensor c) -> the .Scalar overload with c."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        kind = op.name.removeprefix("torch.aten.").removesuffix(".Tensor")
        if kind not in ("add", "sub", "mul", "div") or op.name != f"torch.aten.{kind}.Tensor":
            return
        if kind == "div" and len(op.operands) != 2:
            return
        x, other = op.operands[0], op.operands[1]
        if not isinstance(other.type, t.ValueTensorType) or x.type != op.results[0].type:
            return
        c = _scalar_constant(other)
        if c is None:
            return
        new_c = t.ConstantFloatOp(c)
        scalar = _new(f"torch.aten.{kind}.Scalar", [x, new_c.result, *op.operands[2:]], op.results[0].type)
        rewriter.replace(op, [new_c, scalar], [scalar.results[0]])


def _ints(values: Sequence[int]) -> tuple[list[Operation], SSAValue]:
    """The ops of a constant int list, and the list."""
    items = [t.ConstantIntOp(v) for v in values]
    lst = t.PrimListConstructOp([i.result for i in items], t.ListType(t.IntType()))
    return [*items, lst], lst.result


class SoftmaxOverTrailingUnits(RewritePattern):
    """_softmax(x, d) whose dims after d all have extent 1 -> view(_softmax(view(x, x.shape[:d + 1]),
    -1), x.shape): exact, the same rows normalised (ConvBERT's dynamic convolution weights,
    (46, 9, 1) along dim 1); the lowering reduces along the last dim only."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name != "torch.aten._softmax" or not _sized(x_type := op.operands[0].type):
            return
        shape = list(x_type.get_shape())
        d = t.constant_int_value(op.operands[1])
        if d is None or not -len(shape) <= d < len(shape) or d % len(shape) == len(shape) - 1:
            return
        d %= len(shape)
        if any(n != 1 for n in shape[d + 1 :]) or op.results[0].type != x_type:
            return
        inner = t.ValueTensorType(shape[: d + 1], x_type.get_dtype())
        to_rows, rows = _ints(shape[: d + 1])
        back, full = _ints(shape)
        last = t.ConstantIntOp(-1)
        flat = _new("torch.aten.view", [op.operands[0], rows], inner)
        soft = _new("torch.aten._softmax", [flat.results[0], last.result, op.operands[2]], inner)
        out = _new("torch.aten.view", [soft.results[0], full], x_type)
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
        if not (_sized(a.type) and _sized(b.type) and _sized(r)) or b.type.get_shape()[2] != 1:
            return
        (n, m, k), dtype = a.type.get_shape(), a.type.get_dtype()
        one, two = t.ConstantIntOp(1), t.ConstantIntOp(2)
        bt = _new(t.AtenTransposeIntOp.name, [b, one.result, two.result], t.ValueTensorType([n, 1, k], dtype))
        products = _new("torch.aten.mul.Tensor", [a, bt.results[0]], t.ValueTensorType([n, m, k], dtype))
        last_ops, last = _ints([-1])
        keep, none = t.ConstantBoolOp(True), t.ConstantNoneOp()
        total = _new("torch.aten.sum.dim_IntList", [products.results[0], last, keep.result, none.result], r)
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
        kept = _new(op.name, [op.operands[0], op.operands[1], true.result, *op.operands[3:]], kept_type)
        size_ops, sizes = _ints(rt.get_shape())
        view = _new(t.AtenViewOp.name, [kept.results[0], sizes], rt)
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
        if not (_sized(x.type) and _sized(rt)) or not x.type.get_shape():
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
            if not _sized(o.type) or o.type.get_dtype() != x.type.get_dtype() and f.name in t.ELEMENTWISE_BINARY:
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
            piece = _new(op.name, [o, dim.result, *op.operands[2:]], t.ValueTensorType(oshape, o.type.get_dtype()))
            new += [dim, piece]
            operands.append(piece.results[0])
        moved = _new(f.name, [*operands, *f.operands[arity:]], rt)
        rewriter.replace(op, [*new, moved], [moved.results[0]])
        _erase_dead(rewriter, [f])


VIEWS = (t.AtenViewOp.name, t.AtenReshapeOp.name, t.AtenUnsafeViewOp.name)
LANE_MOVES = (t.AtenPermuteOp.name, t.AtenTransposeIntOp.name)
"""Views that move elements between lanes on the device."""


def _elementwise_below(v: SSAValue) -> bool:
    """Whether v is, through views read by nothing else, the result of an element-wise op
    (an op an element-wise reader could join: a pointwise chain, a matmul's epilogue)."""
    while isinstance(v.owner, Operation) and v.owner.name in (*VIEWS, *LANE_MOVES) and v.has_one_use():
        v = v.owner.operands[0]
    return (
        isinstance(v.owner, Operation)
        and v.owner.name in (*t.ELEMENTWISE_UNARY, *t.ELEMENTWISE_BINARY, *t.ELEMENTWISE_SCALAR)
        and v.has_one_use()
    )


class ElementwiseBeforeView(RewritePattern):
    """f(view(x, s)) -> view(f(x), s); g(view(a, s), view(b, s)) -> view(g(a, b), s) when a and
    b have one shape, and the view keeps the last dim (so it is a free view on the device:
    each element stays in its lane; a view that moves elements between lanes is left where
    a pointwise op can do the moving). The new view reuses the old one's size list. f may
    be x op c (SDPA's math form scales q and k so) when x is, through views read by nothing
    else, an element-wise op's result, which the scaling then joins; after a product (a
    bmm's scores) it stays with the ops that follow it (the mask's add, the softmax).

    permute(x, p) op c -> permute(x op c, p) (or a transpose) only when x is, through views
    read by nothing else, an element-wise op's result: the scaling then joins that op
    (a pointwise chain, a matmul's epilogue) instead of running as a kernel of its own, and
    the permute's relayout, if one is needed, stays one relayout. Activations stay after a
    permute: a pointwise kernel there does the moving, or reads its input from LX where
    spyre-onchip-relayout transposed it (pointwise -> transpose -> pointwise)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name in t.ELEMENTWISE_UNARY or op.name in t.ELEMENTWISE_SCALAR:
            arity = 1
        elif op.name in t.ELEMENTWISE_BINARY:
            arity = 2
        else:
            return
        if len(op.results) != 1:
            return
        views = [v.owner for v in op.operands[:arity]]
        if op.name in t.ELEMENTWISE_SCALAR and isinstance(views[0], Operation) and views[0].name in LANE_MOVES:
            view = views[0]
            if not view.results[0].has_one_use() or not _elementwise_below(view.operands[0]):
                return
            source = view.operands[0]
            src_type, out_type = source.type, op.results[0].type
            if not (_sized(src_type) and _sized(out_type)):
                return
            inner = _new(
                op.name,
                [source, *op.operands[1:]],
                t.ValueTensorType(list(src_type.get_shape()), out_type.get_dtype()),
            )
            moved = _new(view.name, [inner.results[0], *view.operands[1:]], op.results[0].type)
            rewriter.replace(op, [inner, moved], [moved.results[0]])
            _erase_dead(rewriter, [view])
            return
        reshapes = [w for w in views if isinstance(w, Operation) and w.name in VIEWS]
        if len(reshapes) != len(views):
            return
        sources = [w.operands[0] for w in reshapes]
        if op.name in t.ELEMENTWISE_SCALAR and not _elementwise_below(sources[0]):
            return  # a scaling joins an element-wise producer only (after a product it stays with what follows)
        types = [x for x in (v.type for v in sources) if _sized(x)]
        rt = op.results[0].type
        if len(types) != len(sources) or not _sized(rt):
            return
        shape = types[0].get_shape()
        if any(x.get_shape() != shape for x in types) or any(w.results[0].type != rt for w in reshapes):
            return  # sources of different shapes, or a broadcast / dtype change at the op
        if not shape or not rt.get_shape() or shape[-1] != rt.get_shape()[-1]:
            return  # the view moves elements between lanes: left where the op can do the moving
        inner = _new(op.name, [*sources, *op.operands[arity:]], t.ValueTensorType(list(shape), rt.get_dtype()))
        view = _new(reshapes[0].name, [inner.results[0], reshapes[0].operands[1]], rt)
        rewriter.replace(op, [inner, view], [view.results[0]])
        _erase_dead(rewriter, reshapes)


class ViewOfView(RewritePattern):
    """view(view(x, s1), s2) -> view(x, s2); view(x, s) of x's own shape -> x, for an x some op
    computes. (A Linear's activation moved before its view leaves the view back to 2-d
    reading the view to 3-d: the matmul's result then feeds the next matmul directly.)"""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name not in VIEWS or len(op.results) != 1:
            return
        inner = op.operands[0].owner
        if isinstance(inner, Operation) and inner.name in VIEWS:
            source = inner.operands[0]
            new = _new(op.name, [source, op.operands[1]], op.results[0].type)
            rewriter.replace(op, [new], [new.results[0]])
            _erase_dead(rewriter, [inner])
            return
        same = (
            op.operands[0].type == op.results[0].type
            and isinstance(op.results[0].type, t.ValueTensorType)
            and op.results[0].type.has_sizes
        )
        if same and isinstance(inner, Operation):  # (a graph input stays behind its view: no result aliases an input)
            rewriter.replace(op, [], [op.operands[0]])


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
        swap_ops, swap = _ints([1, 0])
        xt = _new(t.AtenPermuteOp.name, [x, swap], t.ValueTensorType([K, M], dtype))
        prod = _new(t.AtenMmOp.name, [w, xt.results[0]], t.ValueTensorType([N, M], dtype))
        col_ops, col = _ints([N, 1])
        bias = _new(t.AtenViewOp.name, [b, col], t.ValueTensorType([N, 1], dtype))
        one = t.ConstantIntOp(1)
        add = _new(
            t.AtenAddTensorOp.name, [prod.results[0], bias.results[0], one.result], t.ValueTensorType([N, M], dtype)
        )
        heads_ops, heads = _ints([H, D, B, S])
        split_view = _new(t.AtenViewOp.name, [add.results[0], heads], t.ValueTensorType([H, D, B, S], dtype))
        order_ops, order = _ints([2, 0, 3, 1])
        out = _new(t.AtenPermuteOp.name, [split_view.results[0], order], rt)
        ops = [*swap_ops, xt, prod, *col_ops, bias, one, add, *heads_ops, split_view, *order_ops, out]
        rewriter.replace(op, ops, [out.results[0]])
        _erase_dead(rewriter, [view, mm, wp])


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
    numerics, which hold no infinity (inf x 0 would be NaN; TorchAdaptPass `numerics`)."""

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
        moved = _new("torch.aten.linear", [x, w.result, none.result], op.results[0].type)
        rewriter.replace(op, [w, none, moved], [moved.results[0]])
        _erase_dead(rewriter, [listed, *(o for p in found for o in p[4])])


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
        moved = _new("torch.aten.linear", [x, w.result, none.result], op.results[0].type)
        rewriter.replace(op, [w, none, moved], [moved.results[0]])
        _erase_dead(rewriter, [cat, listed, *(o for p in found for o in p[4])])


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
        xt = _new(t.AtenTransposeIntOp.name, [x, p_c.result, last_c.result], swapped(xs))
        ops: list[Operation] = [p_c, last_c, one, xt]
        parts: list[SSAValue] = []
        for _, start, end, negated, _ in found:
            bounds = t.ConstantIntOp(start), t.ConstantIntOp(end)
            shape = [*xs[:-1], end - start]
            box = _new(
                "torch.aten.slice.Tensor",
                [xt.results[0], p_c.result, bounds[0].result, bounds[1].result, one.result],
                swapped(shape),
            )
            ops += [*bounds, box]
            if negated and not signs:
                box = _new("torch.aten.neg", [box.results[0]], swapped(shape))
                ops.append(box)
            parts.append(box.results[0])
        list_type = listed.results[0].type
        assert isinstance(list_type, t.ListType)
        joined_list = t.PrimListConstructOp(parts, list_type)
        joined = _new("torch.aten.cat", [joined_list.result, p_c.result], swapped(rs))
        back = _new(t.AtenTransposeIntOp.name, [joined.results[0], p_c.result, last_c.result], op.results[0].type)
        rewriter.replace(op, [*ops, joined_list, joined, back], [back.results[0]])
        _erase_dead(rewriter, [listed, *(o for p in found for o in p[4])])


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
    signed = _new("torch.aten.mul.Tensor", [other, signs.result], t.ValueTensorType([*shape[:-1], n], dtype))
    rewriter.insert([signs, signed], InsertPoint.before(product))
    product.operands[1 - uses[0].index] = signed.results[0]
    rewriter.notify_op_modified(product)
    return True


ELEMENT_MOVES = (*VIEWS, *LANE_MOVES, t.AtenCloneOp.name, "torch.aten.expand", "torch.aten.unsqueeze")
"""Ops that move or copy elements and compute none (a scaling commutes with them)."""


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
        both = t.ConstantFloatOp(c * d)
        scaled = _new(t.AtenMulScalarOp.name, [lhs.operands[0], both.result], lhs.results[0].type)
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
                size_ops, sizes = _ints([groups, *shape[1:]])
                new = _new(t.AtenViewOp.name, [v, sizes], t.ValueTensorType([groups, *shape[1:]], dtype))
                ops += [*size_ops, new]
            else:
                shape[1] = kv_heads[1]
                new = _new(f.name, [v, *f.operands[1:]], t.ValueTensorType(shape, dtype))
                ops.append(new)
            v = new.results[0]
        rows_ops, rows = _ints([groups, r * m, k])
        lhs = _new(t.AtenViewOp.name, [a, rows], t.ValueTensorType([groups, r * m, k], dtype))
        prod = _new(t.AtenBmmOp.name, [lhs.results[0], v], t.ValueTensorType([groups, r * m, n], dtype))
        back_ops, back = _ints([batch, m, n])
        out = _new(t.AtenViewOp.name, [prod.results[0], back], op.results[0].type)
        rewriter.replace(op, [*ops, *rows_ops, lhs, prod, *back_ops, out], [out.results[0]])
        _erase_dead(rewriter, matched)


ADAPTATIONS: tuple[type[RewritePattern], ...] = (
    TanhGeluForm,
    PowToMultiplications,
    MaxDimToAmax,
    SplitIntoSlices,
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
    """Apply every adaptation to a fixed point (see the module docstring for the list)."""

    name = "torch-adapt"

    numerics: str = "dl16"
    """The device's numerics mode: the lane moves become products only with "dl16", which holds
    no infinity (LaneMovesAsProduct)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        products = (LaneMovesAsProduct, InterleavedLaneMovesAsProduct)
        adaptations = [cls() for cls in ADAPTATIONS if self.numerics == "dl16" or cls not in products]
        PatternRewriteWalker(GreedyRewritePatternApplier(adaptations), walk_reverse=True).rewrite_module(op)
