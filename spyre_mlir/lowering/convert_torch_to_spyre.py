"""`convert-torch-to-spyre`: select spyre ops for torch ops, and place the host/device border.

    func args (!torch.vtensor)     -> host tensors, then spyre.to_device (generic layout)
    torch.vtensor.literal           -> arith.constant (host), then spyre.to_device
    aten.mm / addmm / linear        -> spyre.matmul (+ spyre.pointwise for bias, alpha, beta)
    aten.t / permute / transpose    -> spyre.permute (a free view: same bytes, permuted layout)
    aten.view / reshape / _unsafe_view -> spyre.reshape (free view; restickify first if needed)
    aten.add / sub / mul (Tensor, Scalar), relu, gelu (none | tanh) -> spyre.pointwise
    aten.clone                      -> its input (value semantics)
    func.return                     -> spyre.from_device to the original dtype

One pattern per torch op; values cross from `!torch.vtensor` to device tensors through
`builtin.unrealized_conversion_cast`, which cancel once every op is converted. Unsupported ops
are found before anything is rewritten and reported by name, result type and reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.builder import ImplicitBuilder
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseResourceAttr,
    Float16Type,
    Float32Type,
    FloatAttr,
    FunctionType,
    ModuleOp,
    TensorType,
    UnrealizedConversionCastOp,
    f32,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from spyre_mlir.dialects import spyre
from spyre_mlir.dialects import torch as t
from spyre_mlir.layout import Layout

HOST_FLOAT_TYPES = (Float32Type, Float16Type, BFloat16Type)
"""Host element types the device path accepts (they become DL16 on the device)."""

SUPPORTED_OPS: dict[str, str] = {
    "torch.aten.mm": "spyre.matmul",
    "torch.aten.addmm": "spyre.matmul + spyre.pointwise (bias)",
    "torch.aten.linear": "spyre.matmul (+ spyre.pointwise for the bias); free views around it",
    "torch.aten.t": "spyre.permute (free view)",
    "torch.aten.permute": "spyre.permute (free view)",
    "torch.aten.transpose.int": "spyre.permute (free view)",
    "torch.aten.view": "spyre.reshape (free view)",
    "torch.aten.reshape": "spyre.reshape (free view)",
    "torch.aten._unsafe_view": "spyre.reshape (free view)",
    "torch.aten.clone": "its input (value semantics)",
    "torch.aten.add.Tensor": "spyre.pointwise: addf",
    "torch.aten.add.Scalar": "spyre.pointwise: addf",
    "torch.aten.sub.Tensor": "spyre.pointwise: subf",
    "torch.aten.sub.Scalar": "spyre.pointwise: subf",
    "torch.aten.mul.Tensor": "spyre.pointwise: mulf",
    "torch.aten.mul.Scalar": "spyre.pointwise: mulf (x * 1 folds to x)",
    "torch.aten.relu": "spyre.pointwise: maximumf(x, 0)",
    "torch.aten.gelu": "spyre.pointwise: erf form (none) or tanh form (tanh)",
}
"""Every torch op this pass lowers, and what it becomes (docs/ops.md is generated from it)."""

_STRUCTURAL = (
    t.ConstantIntOp,
    t.ConstantFloatOp,
    t.ConstantBoolOp,
    t.ConstantStrOp,
    t.ConstantNoneOp,
    t.ConstantDeviceOp,
    t.PrimListConstructOp,
    t.ValueTensorLiteralOp,
)


# region Helpers


def host_type(vt: Attribute, where: Operation) -> TensorType:
    """The host tensor type of a `!torch.vtensor` (float dtypes only)."""
    if not isinstance(vt, t.ValueTensorType) or not vt.has_sizes or not vt.has_dtype:
        raise PassFailedException(f"'{where.name}': {vt} is not a ranked tensor with a known dtype")
    shape = vt.get_shape()
    if any(d < 0 for d in shape):
        raise PassFailedException(f"'{where.name}': dynamic shape {vt} is not supported (shapes must be static)")
    if any(d == 0 for d in shape):
        raise PassFailedException(f"'{where.name}': empty tensor {vt} is not supported on the device")
    dtype = vt.get_dtype()
    if not isinstance(dtype, HOST_FLOAT_TYPES):
        raise PassFailedException(
            f"'{where.name}': dtype {dtype} of {vt} is not supported on the device (f32, f16 and bf16 become DL16)"
        )
    return TensorType(dtype, shape)


def device_type_of(vt: Attribute, where: Operation, layout: Layout | None = None) -> TensorType:
    shape = host_type(vt, where).get_shape()
    return spyre.device_tensor_type(shape, layout)


def _from_device_value(v: SSAValue) -> SSAValue:
    """The device value behind a converted `!torch.vtensor` value."""
    owner = v.owner
    if isinstance(owner, UnrealizedConversionCastOp) and spyre.is_device_tensor(owner.inputs[0].type):
        return owner.inputs[0]
    raise AssertionError(f"operand {v} was not converted before its use")


def _finish(rewriter: PatternRewriter, op: Operation, new_ops: Sequence[Operation], value: SSAValue) -> None:
    """Replace `op` by `new_ops`, exposing `value` (a device tensor) as op's vtensor result."""
    cast = UnrealizedConversionCastOp.get([value], [op.results[0].type])
    rewriter.replace(op, [*new_ops, cast], [cast.results[0]])


def pointwise(
    inputs: Sequence[SSAValue], shape: Sequence[int], body: Callable[..., SSAValue]
) -> spyre.PointwiseOp:
    """spyre.pointwise over `inputs` whose body is built by `body(*block_args)` with arith/math."""
    block = Block(arg_types=[f32] * len(inputs))
    with ImplicitBuilder(block):
        result = body(*block.args)
        spyre.YieldOp(result)
    return spyre.PointwiseOp(inputs, spyre.device_tensor_type(shape), Region(block))


def const(value: float) -> SSAValue:
    return arith.ConstantOp(FloatAttr(float(value), f32)).result


def addf(a: SSAValue, b: SSAValue) -> SSAValue:
    return arith.AddfOp(a, b).result


def subf(a: SSAValue, b: SSAValue) -> SSAValue:
    return arith.SubfOp(a, b).result


def mulf(a: SSAValue, b: SSAValue) -> SSAValue:
    return arith.MulfOp(a, b).result


def scalar_of(v: SSAValue, op: Operation, what: str) -> float:
    value = t.constant_float_value(v)
    if value is None:
        raise PassFailedException(f"'{op.name}': {what} must be a constant number, got {v}")
    return value


def _shape(v: SSAValue) -> tuple[int, ...]:
    assert isinstance(v.type, TensorType)
    return v.type.get_shape()


def _layout(v: SSAValue) -> Layout:
    return spyre.device_layout(v.type)


# endregion
# region Border patterns


class LowerLiteral(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: t.ValueTensorLiteralOp, rewriter: PatternRewriter):
        host = host_type(op.result.type, op)
        value = op.value
        if isinstance(value, DenseResourceAttr):
            value = DenseResourceAttr.from_params(value.resource_handle.data, TensorType(value.type.element_type, value.type.get_shape()))
        cst = arith.ConstantOp(value, host)
        dev = spyre.ToDeviceOp(cst.result, spyre.device_tensor_type(host.get_shape()))
        _finish(rewriter, op, [cst, dev], dev.result)


class LowerReturn(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.ReturnOp, rewriter: PatternRewriter):
        if not any(isinstance(v.type, t.ValueTensorType) for v in op.arguments):
            return
        new_ops: list[Operation] = []
        results: list[SSAValue] = []
        for v in op.arguments:
            if not isinstance(v.type, t.ValueTensorType):
                raise PassFailedException(f"'func.return': cannot return {v.type} from the device")
            back = spyre.FromDeviceOp(_from_device_value(v), host_type(v.type, op))
            new_ops.append(back)
            results.append(back.result)
        rewriter.replace(op, [*new_ops, func.ReturnOp(*results)])


def convert_signature(fn: func.FuncOp) -> None:
    """vtensor arguments become host tensors, each followed by one spyre.to_device."""
    block = fn.body.block
    inserted: list[Operation] = []
    for arg in list(block.args):
        if not isinstance(arg.type, t.ValueTensorType):
            continue
        torch_type = arg.type
        host = host_type(torch_type, fn)
        cast = UnrealizedConversionCastOp.get([arg], [torch_type])  # placeholder user, retargeted below
        arg.replace_all_uses_with(cast.results[0])
        new_arg = Rewriter.replace_value_with_new_type(arg, host)
        dev = spyre.ToDeviceOp(new_arg, spyre.device_tensor_type(host.get_shape()))
        cast.operands[0] = dev.result
        inserted += [dev, cast]
    for op in reversed(inserted):
        block.insert_op_before(op, block.first_op) if block.first_op else block.add_op(op)
    results = []
    for r in fn.function_type.outputs.data:
        results.append(host_type(r, fn) if isinstance(r, t.ValueTensorType) else r)
    fn.function_type = FunctionType.from_lists([a.type for a in block.args], results)


# endregion
# region Op patterns


class LowerMatmul(RewritePattern):
    """mm, addmm and linear: spyre.matmul, then bias/alpha/beta in one spyre.pointwise."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: t.AtenMmOp | t.AtenAddmmOp | t.AtenLinearOp, rewriter: PatternRewriter):
        ops: list[Operation] = []
        if isinstance(op, t.AtenLinearOp):
            x = _from_device_value(op.input)
            w = _from_device_value(op.weight)
            bias = None if isinstance(op.bias.type, t.NoneType) else _from_device_value(op.bias)
            xs = _shape(x)
            if len(_shape(w)) == 1:
                raise PassFailedException(f"'{op.name}': a 1-D weight is not supported yet")
            if len(xs) != 2:  # flatten leading dims: a free view in the generic layout
                x = _reshape(ops, x, (math.prod(xs[:-1]), xs[-1]), op)
            wt = _permute(ops, w, (1, 0))
            lhs, rhs, alpha, beta = x, wt, 1.0, 1.0
        elif isinstance(op, t.AtenAddmmOp):
            lhs, rhs = _from_device_value(op.mat1), _from_device_value(op.mat2)
            bias = _from_device_value(op.self_)
            alpha, beta = scalar_of(op.alpha, op, "alpha"), scalar_of(op.beta, op, "beta")
            xs = None
        else:
            lhs, rhs, bias, alpha, beta, xs = _from_device_value(op.self_), _from_device_value(op.mat2), None, 1.0, 1.0, None
        m, n = _shape(lhs)[0], _shape(rhs)[1]
        mm = spyre.MatmulOp(lhs, rhs, spyre.device_tensor_type((m, n)))
        ops.append(mm)
        out = mm.result
        if bias is not None and beta != 0.0 or alpha != 1.0:
            inputs = [out] + ([bias] if bias is not None and beta != 0.0 else [])

            def body(c: SSAValue, *b: SSAValue) -> SSAValue:
                r = mulf(c, const(alpha)) if alpha != 1.0 else c
                if b:
                    r = addf(r, mulf(b[0], const(beta)) if beta != 1.0 else b[0])
                return r

            pw = pointwise(inputs, (m, n), body)
            ops.append(pw)
            out = pw.result
        if xs is not None and len(xs) != 2:
            out = _reshape(ops, out, (*xs[:-1], n), op)
        _finish(rewriter, op, ops, out)


def _permute(ops: list[Operation], v: SSAValue, perm: Sequence[int]) -> SSAValue:
    layout = _layout(v).permuted(tuple(perm))
    p = spyre.PermuteOp(v, perm, spyre.device_tensor_type(layout.shape, layout))
    ops.append(p)
    return p.result


def _reshape(ops: list[Operation], v: SSAValue, shape: Sequence[int], where: Operation) -> SSAValue:
    shape = tuple(shape)
    if _shape(v) == shape:
        return v
    layout = _layout(v).reshaped(shape)
    if layout is None:  # not a view of this layout: move to the generic layout first
        generic = Layout.generic(_shape(v), 2)
        if _layout(v) != generic:
            r = spyre.RestickifyOp(v, spyre.device_tensor_type(_shape(v)))
            ops.append(r)
            v = r.result
            layout = generic.reshaped(shape)
    if layout is None:
        raise PassFailedException(
            f"'{where.name}': reshaping {_shape(v)} to {shape} moves stick padding "
            f"(the last dim {_shape(v)[-1]} is not a multiple of 64 and does not survive); not supported yet"
        )
    rs = spyre.ReshapeOp(v, spyre.device_tensor_type(shape, layout))
    ops.append(rs)
    return rs.result


class LowerViews(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(
        self,
        op: t.AtenTOp | t.AtenPermuteOp | t.AtenTransposeIntOp | t.AtenViewOp | t.AtenReshapeOp | t.AtenUnsafeViewOp | t.AtenCloneOp,
        rewriter: PatternRewriter,
    ):
        x = _from_device_value(op.self_)
        rank = len(_shape(x))
        ops: list[Operation] = []
        if isinstance(op, t.AtenCloneOp):
            out = x
        elif isinstance(op, t.AtenTOp):
            out = _permute(ops, x, (1, 0)) if rank == 2 else x
        elif isinstance(op, t.AtenPermuteOp):
            dims = t.constant_list_ints(op.dims)
            if dims is None:
                raise PassFailedException(f"'{op.name}': dims must be constant")
            out = _permute(ops, x, [d % rank for d in dims])
        elif isinstance(op, t.AtenTransposeIntOp):
            d0, d1 = t.constant_int_value(op.dim0), t.constant_int_value(op.dim1)
            if d0 is None or d1 is None:
                raise PassFailedException(f"'{op.name}': dims must be constant")
            perm = list(range(rank))
            perm[d0 % rank], perm[d1 % rank] = perm[d1 % rank], perm[d0 % rank]
            out = _permute(ops, x, perm)
        else:
            out = _reshape(ops, x, host_type(op.results[0].type, op).get_shape(), op)
        _finish(rewriter, op, ops, out)


class LowerArithmetic(RewritePattern):
    """add/sub/mul with a tensor or a scalar; alpha folds into the body."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self,
        op: t.AtenAddTensorOp | t.AtenAddScalarOp | t.AtenSubTensorOp | t.AtenSubScalarOp | t.AtenMulTensorOp | t.AtenMulScalarOp,
        rewriter: PatternRewriter,
    ):
        x = _from_device_value(op.self_)
        shape = host_type(op.results[0].type, op).get_shape()
        kind = op.name.split(".")[2]
        fn = {"add": addf, "sub": subf, "mul": mulf}[kind]
        alpha = scalar_of(op.alpha, op, "alpha") if hasattr(op, "alpha") else 1.0
        if isinstance(op.other.type, t.ValueTensorType):
            y = _from_device_value(op.other)
            pw = pointwise([x, y], shape, lambda a, b: fn(a, mulf(b, const(alpha)) if alpha != 1.0 else b))
        else:
            s = scalar_of(op.other, op, "other") * alpha
            if kind == "mul" and s == 1.0:
                _finish(rewriter, op, [], x)  # x * 1 == x exactly, NaN included
                return
            pw = pointwise([x], shape, lambda a: fn(a, const(s)))
        _finish(rewriter, op, [pw], pw.result)


class LowerActivations(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: t.AtenReluOp | t.AtenGeluOp, rewriter: PatternRewriter):
        x = _from_device_value(op.self_)
        shape = _shape(x)
        if isinstance(op, t.AtenReluOp):
            pw = pointwise([x], shape, lambda a: arith.MaximumfOp(a, const(0.0)).result)
        else:
            mode = t.constant_str_value(op.approximate)
            if mode == "none":
                # x * 0.5 * (1 + erf(x / sqrt(2)))
                pw = pointwise(
                    [x], shape, lambda a: mulf(mulf(a, const(0.5)), addf(mathd.ErfOp(mulf(a, const(math.sqrt(0.5)))).result, const(1.0)))
                )
            elif mode == "tanh":
                # x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
                def body(a: SSAValue) -> SSAValue:
                    cube = mulf(mulf(a, a), a)
                    inner = mulf(addf(a, mulf(cube, const(0.044715))), const(math.sqrt(2.0 / math.pi)))
                    return mulf(mulf(a, const(0.5)), addf(mathd.TanhOp(inner).result, const(1.0)))

                pw = pointwise([x], shape, body)
            else:
                raise PassFailedException(f"'{op.name}': approximate must be a constant \"none\" or \"tanh\", got {op.approximate}")
        _finish(rewriter, op, [pw], pw.result)


# endregion


def unsupported_ops(module: ModuleOp) -> list[tuple[Operation, str]]:
    """Torch ops this pass cannot lower, each with the reason."""
    found = []
    for op in module.walk():
        if not op.name.startswith("torch.") or isinstance(op, _STRUCTURAL):
            continue
        if op.name not in SUPPORTED_OPS:
            found.append((op, "no lowering to the device exists yet"))
            continue
        for v in (*op.operands, *op.results):
            if isinstance(v.type, t.ValueTensorType):
                try:
                    host_type(v.type, op)
                except PassFailedException as e:
                    found.append((op, str(e).split(": ", 1)[1]))
                    break
    return found


@dataclass(frozen=True)
class ConvertTorchToSpyrePass(ModulePass):
    """Lower the `torch` dialect to `spyre` device ops, with transfers at the function border."""

    name = "convert-torch-to-spyre"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        bad = unsupported_ops(op)
        if bad:
            first, reason = bad[0]
            others = f" (and {len(bad) - 1} more: {', '.join(sorted({o.name for o, _ in bad[1:]}))})" if len(bad) > 1 else ""
            result = f" producing {first.results[0].type}" if first.results else ""
            raise PassFailedException(f"'{first.name}'{result} cannot run on the device: {reason}{others}")
        for fn in op.walk():
            if isinstance(fn, func.FuncOp) and not fn.is_declaration:
                convert_signature(fn)
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [LowerLiteral(), LowerMatmul(), LowerViews(), LowerArithmetic(), LowerActivations(), LowerReturn()]
            ),
            apply_recursively=False,
        ).rewrite_module(op)
        # casts back to !torch.vtensor are dead now; so are the torch constants
        for o in reversed(list(op.walk())):
            if isinstance(o, (UnrealizedConversionCastOp, *_STRUCTURAL)) and not any(r.uses for r in o.results):
                o.detach()
                o.erase()
        leftovers = [o.name for o in op.walk() if o.name.startswith("torch.") or isinstance(o, UnrealizedConversionCastOp)]
        if leftovers:
            raise PassFailedException(f"convert-torch-to-spyre left {', '.join(sorted(set(leftovers)))} unconverted")
