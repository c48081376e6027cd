"""Reductions and normalisations, along any dims: the device reduces along the stick (last)
dim, so a reduction along another dim moves that dim to the stick dim first (a transpose on the
card: a permute and a restickify) and back."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.dialects import math as mathd
from xdsl.ir import Operation, SSAValue

from spyre_mlir.dialects import spyre
from spyre_mlir.dialects import torch as t
from spyre_mlir.layout import Layout
from spyre_mlir.lowering.convert_torch_to_spyre.border import Lowering
from spyre_mlir.lowering.convert_torch_to_spyre.functions import function_pointwise, select
from spyre_mlir.lowering.convert_torch_to_spyre.movement import permute, positive_dim, swap, to_generic
from spyre_mlir.lowering.convert_torch_to_spyre.utils import (
    NotOnDevice,
    addf,
    const,
    divf,
    mulf,
    pointwise_append,
    result_shape,
    scalar_of,
    shape_of,
    subf,
)


def _reduce(ops: list[Operation], x: SSAValue, kind: str, dim: int) -> SSAValue:
    """spyre.reduce along `dim` (keepdim), along the stick dim."""
    shape = shape_of(x)
    dim = positive_dim(dim, shape)
    if not shape or shape[dim] == 1:  # over one element: sum, mean and max of it are the element
        return x
    assert dim == len(shape) - 1, "the caller moves the reduced dim to the stick dim"
    out_shape = (*shape[:-1], 1)
    r = spyre.ReduceOp(kind, x, dim, spyre.device_tensor_type(out_shape, Layout.splat(out_shape, 2)))
    ops.append(r)
    return r.result


def along_stick(
    ops: list[Operation], x: SSAValue, dim: int, fn: Callable[[list[Operation], SSAValue], SSAValue]
) -> SSAValue:
    """`fn` (ops along the last dim) applied along `dim`: for another dim than the last, with
    `dim` moved to the stick dim (a transpose on the card) and the result moved back (a view)."""
    shape = shape_of(x)
    dim = positive_dim(dim, shape)
    last = len(shape) - 1
    if dim == last or not shape:
        return fn(ops, x)
    perm = swap(len(shape), dim, last)
    moved = to_generic(ops, permute(ops, x, perm))
    return permute(ops, fn(ops, moved), perm)


def reduce_dims(ops: list[Operation], x: SSAValue, kind: str, dims: Sequence[int]) -> SSAValue:
    """x reduced along each of `dims` (keepdim), the last dim first (the smallest transposes
    after). A mean along several dims is the mean of the means along each: every group has as
    many elements."""
    shape = shape_of(x)
    for d in sorted({positive_dim(d, shape) for d in dims}, reverse=True):
        if shape and shape[d] > 1:  # (a 0-d tensor reduces to itself)
            x = along_stick(ops, x, d, lambda ops, v: _reduce(ops, v, kind, -1))
    return x


def reduced_dims(op: Operation, dims_v: SSAValue) -> list[int]:
    """The dims a reduction's `dim` operand names: all of them for None or an empty list."""
    rank = len(t.vtensor_type(op.operands[0]).get_shape())
    if isinstance(dims_v.type, t.NoneType):
        return list(range(rank))
    dims = t.constant_list_ints(dims_v)
    if dims is None:
        raise NotOnDevice("the reduced dims are not constant")
    return dims if dims else list(range(rank))


def float_dtype(op: Operation, v: SSAValue) -> None:
    """A dtype argument: a floating-point one is the device's format (its values are 16-bit
    device values whatever their host dtype); another stays on the host."""
    if isinstance(v.type, t.NoneType):
        return
    code = t.constant_int_value(v)
    if code not in (5, 6, 15):  # float16, float32, bfloat16
        raise NotOnDevice(f"a dtype argument ({code}) that is not a 16-bit or 32-bit float")


_KINDS = {"mean": "mean", "sum": "sum", "amax": "max", "amin": "min", "max": "max", "min": "min"}


class LowerReductions(Lowering):
    """mean / sum / amax / amin along any dims (all of them for none given), with or without
    keepdim, with a floating-point dtype argument; max and min of every element."""

    lowers = {
        **{
            f"torch.aten.{name}": f"spyre.reduce {kind} along each dim (moved to the stick dim): a splat result"
            for name, kind in (("mean.dim", "mean"), ("sum.dim_IntList", "sum"), ("amax", "max"), ("amin", "min"))
        },
        **{
            f"torch.aten.{name}": f"spyre.reduce {kind} along every dim"
            for name, kind in (("mean", "mean"), ("sum", "sum"), ("max", "max"), ("min", "min"))
        },
    }

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        name = op.name.split(".")[2]
        rank = len(t.vtensor_type(op.operands[0]).get_shape())
        if op.name in ("torch.aten.mean", "torch.aten.sum", "torch.aten.max", "torch.aten.min"):
            dims = list(range(rank))
            if len(op.operands) > 1:
                float_dtype(op, op.operands[1])
        else:
            dims = reduced_dims(op, op.operands[1])
            if len(op.operands) > 3:
                float_dtype(op, op.operands[3])
        ops: list[Operation] = []
        r = reduce_dims(ops, self.dev(op.operands[0], op), _KINDS[name], dims)
        return ops, self.reshape(ops, r, result_shape(op))


def _count(op: Operation, dims: Sequence[int]) -> int:
    shape = t.vtensor_type(op.operands[0]).get_shape()
    return math.prod(shape[positive_dim(d, shape)] for d in set(dims)) if shape else 1


class LowerVariance(Lowering):
    """var and var_mean (std is sqrt of var): the mean along the dims, the squared deviations'
    sum along them, divided by N - correction (N: the elements each result reduces)."""

    lowers = {
        "torch.aten.var.correction": "spyre.reduce mean, spyre.pointwise (x - mean)^2, spyre.reduce sum, / (N - correction)",
        "torch.aten.var_mean.correction": "spyre.reduce mean, spyre.pointwise (x - mean)^2, spyre.reduce sum, / (N - correction)",
    }

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue | list[SSAValue]]:
        x_v, dims_v, correction_v, keep_v = op.operands
        dims = reduced_dims(op, dims_v)
        correction = 1.0 if isinstance(correction_v.type, t.NoneType) else scalar_of(correction_v, op, "correction")
        x = self.dev(x_v, op)
        ops: list[Operation] = []
        mean = reduce_dims(ops, x, "mean", dims)
        deviations = pointwise_append(ops, [x, mean], shape_of(x), lambda a, m: mulf(subf(a, m), subf(a, m)))
        total = reduce_dims(ops, deviations, "sum", dims)
        scale = 1.0 / max(_count(op, dims) - correction, 0.0) if _count(op, dims) > correction else math.inf
        var = pointwise_append(ops, [total], shape_of(total), lambda v: mulf(v, const(scale)))
        results = [self.reshape(ops, var, result_shape(op))]
        if op.name == "torch.aten.var_mean.correction":
            results.append(self.reshape(ops, mean, result_shape(op)))
        return ops, results if len(results) > 1 else results[0]


class LowerVectorNorm(Lowering):
    """linalg_vector_norm along dims, scaled by the largest |x| so that no stored power leaves
    the device format's range (as LAPACK's nrm2): m = max |x|, then m (sum (|x| / m)^p)^(1/p)
    (m = 0: 0); p = 1 the sum of |x|, p = inf / -inf the max / min of |x|, p = 0 the count of
    nonzero elements."""

    lowers = {
        "torch.aten.linalg_vector_norm": "spyre.reduce max |x|, spyre.pointwise (|x| / m)^p, spyre.reduce sum, m s^(1/p)"
    }

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        x_v, ord_v, dims_v, _keep_v, dtype_v = op.operands
        p = scalar_of(ord_v, op, "ord")
        dims = reduced_dims(op, dims_v)
        float_dtype(op, dtype_v)
        x = self.dev(x_v, op)
        ops: list[Operation] = []
        shape = shape_of(x)
        magnitude = pointwise_append(ops, [x], shape, lambda a: mathd.AbsFOp(a).result)
        if math.isinf(p):
            r = reduce_dims(ops, magnitude, "max" if p > 0 else "min", dims)
        elif p == 0:
            nonzero = function_pointwise(ops, [x], shape, lambda a: select(a, const(1.0), const(0.0)))
            r = reduce_dims(ops, nonzero, "sum", dims)
        elif p == 1:
            r = reduce_dims(ops, magnitude, "sum", dims)
        else:
            m = reduce_dims(ops, magnitude, "max", dims)
            powers = pointwise_append(ops, [magnitude, m], shape, lambda a, b: _power(divf(a, b), p))
            total = reduce_dims(ops, powers, "sum", dims)
            r = pointwise_append(ops, [total, m], shape_of(total), lambda s, b: _scaled_root(s, b, p))
        return ops, self.reshape(ops, r, result_shape(op))


class LowerAddmv(Lowering):
    """addmv(self, mat, vec, beta, alpha) (mv reaches the device as one): the products of
    mat's rows with vec summed along the stick dim, as torch-adapt takes a product with one
    column, then beta self + alpha r."""

    lowers = {"torch.aten.addmv": "spyre.pointwise mat * vec, spyre.reduce sum, spyre.pointwise beta self + alpha r"}

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        self_v, mat_v, vec_v, beta_v, alpha_v = op.operands
        beta, alpha = scalar_of(beta_v, op, "beta"), scalar_of(alpha_v, op, "alpha")
        mat, vec = self.dev(mat_v, op), self.dev(vec_v, op)
        ops: list[Operation] = []
        products = pointwise_append(ops, [mat, vec], shape_of(mat), mulf)
        r = _reduce(ops, products, "sum", -1)
        inputs = [r] + ([self.dev(self_v, op)] if beta != 0.0 else [])

        def body(p: SSAValue, *b: SSAValue) -> SSAValue:
            out = mulf(p, const(alpha)) if alpha != 1.0 else p
            if b:
                out = addf(out, mulf(b[0], const(beta)) if beta != 1.0 else b[0])
            return out

        return ops, pointwise_append(ops, [self.reshape(ops, r, result_shape(op)), *inputs[1:]], result_shape(op), body)


def _power(a: SSAValue, p: float) -> SSAValue:
    """a^p for a in [0, 1] (a NaN where m = 0 gives 0/0: the root turns it to 0 below)."""
    if p == 2:
        return mulf(a, a)
    return mathd.ExpOp(mulf(mathd.LogOp(a).result, const(p))).result


def _scaled_root(s: SSAValue, m: SSAValue, p: float) -> SSAValue:
    root = mathd.SqrtOp(s).result if p == 2 else mathd.ExpOp(mulf(mathd.LogOp(s).result, const(1.0 / p))).result
    return select(m, mulf(m, root), m)  # (m = 0: every |x| is 0, the norm too)


class LowerSoftmax(Lowering):
    """softmax along a dim: m = max, e = exp(x - m), y = e / sum(e) (along the stick dim, the
    dim moved there and back for another)."""

    lowers = {
        "torch.aten._softmax": "spyre.reduce max, spyre.pointwise exp(x - m), spyre.reduce sum, spyre.pointwise divide (along the dim, moved to the stick dim)"
    }

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        x = self.dev(op.operands[0], op)
        dim = t.constant_int_value(op.operands[1])
        if dim is None:
            raise NotOnDevice("dim is not constant")
        ops: list[Operation] = []
        return ops, along_stick(ops, x, dim, self.along_last)

    @staticmethod
    def along_last(ops: list[Operation], x: SSAValue) -> SSAValue:
        _, e, total = _max_exp_sum(ops, x)
        return pointwise_append(ops, [e, total], shape_of(x), divf)


class LowerLogSoftmax(LowerSoftmax):
    """log_softmax along a dim: m = max, s = sum(exp(x - m)), y = x - m - log(s)."""

    lowers = {
        "torch.aten._log_softmax": "spyre.reduce max, spyre.pointwise exp(x - m), spyre.reduce sum, spyre.pointwise x - m - log(s) (along the dim, moved to the stick dim)"
    }

    @staticmethod
    def along_last(ops: list[Operation], x: SSAValue) -> SSAValue:
        m, _, total = _max_exp_sum(ops, x)
        return pointwise_append(
            ops, [x, m, total], shape_of(x), lambda a, b, c: subf(subf(a, b), mathd.LogOp(c).result)
        )


def _max_exp_sum(ops: list[Operation], x: SSAValue) -> tuple[SSAValue, SSAValue, SSAValue]:
    """Along the last dim: m = max(x), e = exp(x - m), sum(e)."""
    m = _reduce(ops, x, "max", -1)
    e = pointwise_append(ops, [x, m], shape_of(x), lambda a, b: mathd.ExpOp(subf(a, b)).result)
    return m, e, _reduce(ops, e, "sum", -1)


class LowerLayerNorm(Lowering):
    """native_layer_norm over the trailing dims of the normalised shape: mean, var =
    mean((x - mean)^2) (means along each dim in turn), y = (x - mean) * rsqrt(var + eps) * w
    + b; also returns mean and rstd."""

    lowers = {
        "torch.aten.native_layer_norm": "spyre.reduce mean, spyre.pointwise (x - mean)^2, spyre.reduce mean, rsqrt, normalise (the normalised dims)"
    }

    def lower(self, op: Operation) -> tuple[list[Operation], list[SSAValue]]:
        x_v, shape_v, w_v, b_v, eps_v = op.operands
        norm = t.constant_list_ints(shape_v)
        x = self.dev(x_v, op)
        shape = shape_of(x)
        if not norm or tuple(norm) != shape[len(shape) - len(norm) :]:
            raise NotOnDevice(f"a normalised shape {norm} that is not the trailing dims of {shape}")
        dims = list(range(len(shape) - len(norm), len(shape)))
        eps = scalar_of(eps_v, op, "eps")
        w = None if isinstance(w_v.type, t.NoneType) else self.dev(w_v, op)
        b = None if isinstance(b_v.type, t.NoneType) else self.dev(b_v, op)
        ops: list[Operation] = []
        mean = reduce_dims(ops, x, "mean", dims)
        d = pointwise_append(ops, [x, mean], shape, subf)
        var = reduce_dims(ops, pointwise_append(ops, [d], shape, lambda a: mulf(a, a)), "mean", dims)
        rstd = pointwise_append(ops, [var], shape_of(var), lambda v: mathd.RsqrtOp(addf(v, const(eps))).result)
        extra = [v for v in (w, b) if v is not None]

        def body(dv: SSAValue, r: SSAValue, *wb: SSAValue) -> SSAValue:
            y = mulf(dv, r)
            i = 0
            if w is not None:
                y = mulf(y, wb[i])
                i += 1
            if b is not None:
                y = addf(y, wb[i])
            return y

        y = pointwise_append(ops, [d, rstd, *extra], shape, body)
        stats = t.vtensor_type(op.results[1]).get_shape()
        return ops, [y, self.reshape(ops, mean, stats), self.reshape(ops, rstd, stats)]
