"""Equivalent forms of single ops: pow by multiplications, max.dim as amax, a split as slices,
a slice of a cat as its pieces, the tanh form of gelu, a 0-d constant operand as a number."""

from __future__ import annotations

import math

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from spyre_mlir.dialects import torch as t
from spyre_mlir.transforms.torch_adapt.utils import (
    binary_with_scalar,
    erase_dead,
    is_close,
    new_op,
    scalar_constant,
    sized,
)


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
            new.append(new_op("torch.aten.mul.Tensor", [a, b], rt))
            return new[-1].results[0]

        def unary(name: str, a: SSAValue) -> SSAValue:
            new.append(new_op(f"torch.aten.{name}", [a], rt))
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
    """max.dim / min.dim(x, d, keepdim) -> amax / amin(x, [d], keepdim), and where its indices
    are read, argmax / argmin(x, d, keepdim) for them (an index made from floats: the host's,
    by design; both take the first of equal extremes, as max.dim does)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name not in ("torch.aten.max.dim", "torch.aten.min.dim") or len(op.results) != 2:
            return
        kind = op.name.split(".")[2]
        dims = t.PrimListConstructOp([op.operands[1]], t.ListType(t.IntType()))
        values = new_op(f"torch.aten.a{kind}", [op.operands[0], dims.result, op.operands[2]], op.results[0].type)
        new: list[Operation] = [dims, values]
        index = None
        if op.results[1].uses:
            arg = new_op(f"torch.aten.arg{kind}", [op.operands[0], op.operands[1], op.operands[2]], op.results[1].type)
            new.append(arg)
            index = arg.results[0]
        rewriter.replace(op, new, [values.results[0], index])


class ViewAsItsOwnDtype(RewritePattern):
    """view.dtype(x, x's own dtype) -> x (vLLM's vocabulary-parallel embedding views its
    result as the dtype it has)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name != "torch.aten.view.dtype" or op.results[0].type != op.operands[0].type:
            return
        rewriter.replace_op(op, [], [op.operands[0]])


class SplitIntoSlices(RewritePattern):
    """ListUnpack(split_with_sizes(x, sizes, d)) -> a slice of x along d per piece (and
    split.Tensor(x, size, d) likewise, its pieces `size` long but the last): exact, the same
    elements. A split's result is a list, which the lowering does not take; its slices are
    DMA copies (or views) on the device."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name != "torch.prim.ListUnpack" or not isinstance(split := op.operands[0].owner, Operation):
            return
        if split.name not in ("torch.aten.split_with_sizes", "torch.aten.split.Tensor") or not sized(
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
            piece = new_op(
                "torch.aten.slice.Tensor", [x, dim.result, bounds[0].result, bounds[1].result, one.result], r.type
            )
            new += [*bounds, piece]
            pieces.append(piece.results[0])
            start += size
        rewriter.replace(op, new, pieces)
        erase_dead(rewriter, [split])


def _slice_bounds(op: Operation, extent: int) -> tuple[int, int] | None:
    """[start, end) of a step-1 `slice.Tensor` along a dim of `extent` (PyTorch's clamping of
    None, negative and past-the-end bounds), or None (a step, or bounds not constant)."""
    if t.constant_int_value(op.operands[4]) != 1:
        return None
    bounds = []
    for v, default in ((op.operands[2], 0), (op.operands[3], extent)):
        if isinstance(v.owner, t.ConstantNoneOp):
            bounds.append(default)
            continue
        b = t.constant_int_value(v)
        if b is None:
            return None
        bounds.append(min(max(b + extent if b < 0 else b, 0), extent))
    return bounds[0], bounds[1]


class SliceOfCat(RewritePattern):
    """slice(cat([p_0, ..., p_n], d), d, s, e, 1) -> p_i when [s, e) is exactly p_i's range
    along d, or cat([p_i, ..., p_j], d) when it is several whole pieces: exact, the same
    elements. A merged linear computed as the cat of its parts' products
    (spyre_mlir/vllm/layers.py) and split again by the model (q, k and v; gate and up) is then
    its parts: no slice copies them out of the cat."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name != "torch.aten.slice.Tensor":
            return
        cat = op.operands[0].owner
        if not isinstance(cat, Operation) or cat.name != "torch.aten.cat" or not sized(op.operands[0].type):
            return
        listed = cat.operands[0].owner
        if not isinstance(listed, t.PrimListConstructOp) or not all(sized(e.type) for e in listed.elements):
            return
        shape = op.operands[0].type.get_shape()
        if any(len(e.type.get_shape()) != len(shape) for e in listed.elements):  # type: ignore[attr-defined]
            return  # a legacy empty 1-d piece (cat skips it): not whole pieces along d
        d, cd = t.constant_int_value(op.operands[1]), t.constant_int_value(cat.operands[1])
        if d is None or cd is None or not -len(shape) <= d < len(shape) or d % len(shape) != cd % len(shape):
            return
        d %= len(shape)
        bounds = _slice_bounds(op, shape[d])
        if bounds is None:
            return
        ends = [0]
        for e in listed.elements:
            et = e.type
            assert sized(et)  # (checked above)
            ends.append(ends[-1] + et.get_shape()[d])
        if bounds[0] not in ends or bounds[1] not in ends or bounds[1] <= bounds[0]:
            return
        i, j = ends.index(bounds[0]), ends.index(bounds[1])
        pieces = list(listed.elements[i:j])
        if len(pieces) == 1:
            if pieces[0].type != op.results[0].type:
                return
            rewriter.replace_op(op, [], [pieces[0]])
        else:
            list_type = listed.results[0].type
            assert isinstance(list_type, t.ListType)  # (a list construct's result)
            new_list = t.PrimListConstructOp(pieces, list_type)
            joined = new_op("torch.aten.cat", [new_list.results[0], cat.operands[1]], op.results[0].type)
            rewriter.replace_op(op, [new_list, joined], [joined.results[0]])
        erase_dead(rewriter, [cat, listed])


class TanhGeluForm(RewritePattern):
    """0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))) -> gelu(x, "tanh"), matched from
    the final multiplication in any operand order of its commutative steps."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name != "torch.aten.mul.Tensor" or len(op.operands) != 2:
            return
        for half, one_plus in (op.operands, reversed(op.operands)):
            x = self._match(half, one_plus)
            if x is not None and x.type == op.results[0].type:
                gelu = new_op("torch.aten.gelu", [x, (mode := t.ConstantStrOp("tanh")).result], x.type)
                chain = [o for o in (half.owner, one_plus.owner) if isinstance(o, Operation)]
                rewriter.replace(op, [mode, gelu], [gelu.results[0]])
                erase_dead(rewriter, self._chain(chain))
                return

    @staticmethod
    def _match(half: SSAValue, one_plus: SSAValue) -> SSAValue | None:
        h = binary_with_scalar(half, "mul")
        o = binary_with_scalar(one_plus, "add")
        if h is None or o is None or not is_close(h[1], 0.5) or not is_close(o[1], 1.0):
            return None
        x, tanh = h[0], o[0]
        if not (isinstance(tanh.owner, Operation) and tanh.owner.name == "torch.aten.tanh"):
            return None
        inner = binary_with_scalar(tanh.owner.operands[0], "mul")
        if inner is None or not is_close(inner[1], math.sqrt(2 / math.pi)):
            return None
        s = inner[0].owner
        if not (
            isinstance(s, Operation)
            and s.name == "torch.aten.add.Tensor"
            and t.constant_float_value(s.operands[2]) == 1.0
        ):
            return None
        for lin, cube_term in (s.operands[:2], reversed(s.operands[:2])):
            c = binary_with_scalar(cube_term, "mul")
            if lin is not x or c is None or not is_close(c[1], 0.044715):
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
        c = scalar_constant(other)
        if c is None:
            return
        new_c = t.ConstantFloatOp(c)
        scalar = new_op(f"torch.aten.{kind}.Scalar", [x, new_c.result, *op.operands[2:]], op.results[0].type)
        rewriter.replace(op, [new_c, scalar], [scalar.results[0]])
