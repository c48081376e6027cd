"""The pass: the lowerings registered, the device ops they take, and the border placed
function by function."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr, UnrealizedConversionCastOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker
from xdsl.rewriter import InsertPoint, Rewriter

from spyre_mlir.diagnostics import Unsupported
from spyre_mlir.dialects import spyre
from spyre_mlir.dialects import torch as t
from spyre_mlir.lowering.convert_torch_to_spyre.border import Border, Lowering
from spyre_mlir.lowering.convert_torch_to_spyre.convolution import LowerConvolution
from spyre_mlir.lowering.convert_torch_to_spyre.elementwise import (
    BINARY,
    UNARY,
    LowerBinary,
    LowerClamp,
    LowerPow,
    LowerUnary,
    LowerWhere,
)
from spyre_mlir.lowering.convert_torch_to_spyre.host_policy import (
    HOST_CONSTANT,
    INDEX_ARITHMETIC,
    host_by_design,
    host_ops,
    mark_host_constants,
    mark_index_arithmetic,
)
from spyre_mlir.lowering.convert_torch_to_spyre.indexing import LowerConstantPad, LowerIndex, LowerRepeat
from spyre_mlir.lowering.convert_torch_to_spyre.reductions import LowerLayerNorm, LowerReductions, LowerSoftmax
from spyre_mlir.lowering.convert_torch_to_spyre.slicing import LowerCat, LowerEmbedding, LowerIndexPut, LowerSlice
from spyre_mlir.lowering.convert_torch_to_spyre.utils import host_tensor_type, is_vtensor
from spyre_mlir.lowering.convert_torch_to_spyre.views import LowerCopy, LowerExpand, LowerMatmul, LowerViews

LOWERINGS: tuple[type[Lowering], ...] = (
    LowerViews,
    LowerCopy,
    LowerExpand,
    LowerEmbedding,
    LowerIndexPut,
    LowerSlice,
    LowerCat,
    LowerIndex,
    LowerRepeat,
    LowerConstantPad,
    LowerMatmul,
    LowerUnary,
    LowerBinary,
    LowerPow,
    LowerClamp,
    LowerWhere,
    LowerReductions,
    LowerSoftmax,
    LowerLayerNorm,
    LowerConvolution,
)


DEVICE_OPS: dict[str, str] = {
    "torch.aten.mm": "spyre.matmul",
    "torch.aten.bmm": "spyre.matmul (batched)",
    "torch.aten.addmm": "spyre.matmul + spyre.pointwise (bias, alpha, beta)",
    "torch.aten.linear": "spyre.matmul (+ spyre.pointwise for the bias); free views around it",
    "torch.aten.t": "spyre.permute (free view)",
    "torch.aten.permute": "spyre.permute (free view)",
    "torch.aten.transpose.int": "spyre.permute (free view)",
    "torch.aten.view": "spyre.reshape (free view)",
    "torch.aten.reshape": "spyre.reshape (free view)",
    "torch.aten._unsafe_view": "spyre.reshape (free view)",
    "torch.aten.clone": "its input (value semantics)",
    "torch.aten.alias": "its input (value semantics)",
    "torch.aten.copy": "its source, of the destination's shape (value semantics)",
    "torch.aten.unsqueeze": "spyre.reshape (free view)",
    "torch.aten.squeeze.dims": "spyre.reshape (free view)",
    "torch.aten.squeeze.dim": "spyre.reshape (free view)",
    "torch.aten.expand": "spyre.pointwise copy (the broadcast is materialised); along the stick dim from elements that share sticks: broadcast along another dim between two transposes",
    "torch.aten.embedding": "spyre.gather: row DMAs at indices the host hands over at launch",
    "torch.aten.index_put": "spyre.scatter: rows at host indices along one dim, written in place into the destination (a KV-cache update); the destination read by nothing else",
    "torch.aten.slice.Tensor": "spyre.slice (a step strides the copy); along the stick dim with a step or off a stick boundary: transposed to another dim, sliced there and transposed back",
    "torch.aten.select.int": "spyre.slice of one row + spyre.reshape dropping the dim; along the stick dim: transposed to another dim first",
    "torch.aten.cat": "spyre.concat (DMA copies of each piece to its offset); along the stick dim with a piece ending inside a stick: transposed to another dim, joined there and transposed back",
    "torch.aten.index.Tensor": "spyre.gather: rows at host indices (integer index tensors on any dims; the row numbers computed on the host) of the tensor with the indexed dims moved first, viewed and permuted to the result",
    "torch.aten.index_select": "spyre.gather: rows at host indices along the dim, as index.Tensor",
    "torch.aten.repeat": "spyre.concat of the copies along each repeated dim (as cat)",
    "torch.aten.constant_pad_nd": "spyre.concat of the tensor between host-built constant blocks (sent once) along each padded dim; negative padding stays on the host",
    "torch.aten.gelu": "spyre.pointwise: erf form (none) or tanh form (tanh)",
    "torch.aten.pow.Tensor_Scalar": "spyre.pointwise exp(c log x) for non-integer c; torch-adapt makes x*x..., sqrt, rsqrt",
    "torch.aten.clamp": "spyre.pointwise: maximumf / minimumf with constants",
    "torch.aten.where.self": "spyre.pointwise: select on the condition (sent as a 0/1 mask); with two scalar values it builds a mask on the host",
    **{name: f"spyre.pointwise: {doc}" for name, (_, doc) in UNARY.items()},
    **{
        f"torch.aten.{k}.{o}": f"spyre.pointwise: {doc}"
        + (" (x * 1, x / 1 fold to x)" if o == "Scalar" and k in ("mul", "div") else "")
        for k, (_, doc) in BINARY.items()
        for o in ("Tensor", "Scalar")
        if k not in ("minimum", "maximum")
    },
    "torch.aten.minimum": "spyre.pointwise: minimumf",
    "torch.aten.maximum": "spyre.pointwise: maximumf",
    "torch.aten.mean.dim": "spyre.reduce mean (last dim, keepdim): a splat result",
    "torch.aten.sum.dim_IntList": "spyre.reduce sum (last dim, keepdim): a splat result",
    "torch.aten.amax": "spyre.reduce max (last dim, keepdim): a splat result",
    "torch.aten.amin": "spyre.reduce min (last dim, keepdim): a splat result",
    "torch.aten._softmax": "spyre.reduce max, spyre.pointwise exp(x - m), spyre.reduce sum, spyre.pointwise divide (last dim)",
    "torch.aten.native_layer_norm": "spyre.reduce mean, spyre.pointwise (x - mean)^2, spyre.reduce mean, rsqrt, normalise (last dim)",
    "torch.aten.convolution": "1-d and 2-d, channels last: each tap a strided spyre.slice (a zero border by spyre.concat), spyre.matmul over the taps side by side or batched per tap and summed, batched over groups; a patch embedding one batched spyre.matmul over a relayout of the image; depthwise one spyre.pointwise multiply-add; transposed and 3-d on the host",
}
"""Every torch op with a device lowering, and what it becomes (docs/ops.md is generated from it)."""


@dataclass(frozen=True)
class ConvertTorchToSpyrePass(ModulePass):
    """Lower `torch` ops to `spyre` device ops where they can run on the device; the rest stay
    on the host, with transfers at the border."""

    name = "convert-torch-to-spyre"

    strict: bool = False
    """Refuse (naming the op and why) instead of leaving a float op on the host."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in op.walk():
            if isinstance(fn, func.FuncOp) and not fn.is_declaration:
                self.convert_function(fn)

    def convert_function(self, fn: func.FuncOp) -> None:
        block = fn.body.block
        # arguments become host tensors seen through casts; literals stay host values
        for arg in list(block.args):
            if is_vtensor(arg):
                torch_type = arg.type
                cast = UnrealizedConversionCastOp.get([arg], [torch_type])
                arg.replace_all_uses_with(cast.results[0])
                new_arg = Rewriter.replace_value_with_new_type(arg, host_tensor_type(torch_type, fn))
                cast.operands[0] = new_arg
                Rewriter.insert_op(cast, InsertPoint.at_start(block))
        border = Border()
        mark_host_constants(block)
        mark_index_arithmetic(block)
        refused: dict[Operation, str] = {
            op: host_by_design(op)[1] for op in block.ops if {INDEX_ARITHMETIC, HOST_CONSTANT} & op.attributes.keys()
        }
        PatternRewriteWalker(
            GreedyRewritePatternApplier([cls(border, refused, self.strict) for cls in LOWERINGS]),
            apply_recursively=False,
        ).rewrite_region(fn.body)
        for lit in [o for o in block.ops if isinstance(o, t.ValueTensorLiteralOp)]:
            if not lit.result.uses:  # every reader took its arith.constant
                Rewriter.erase_op(lit)
        # what stayed on the host reads host values (also through lists), and says why it is there
        for host_op, reason, _ in host_ops(block.ops):
            host_op.attributes["spyre.host"] = StringAttr(refused.get(host_op, reason))
            for i, v in enumerate(host_op.operands):
                if is_vtensor(v):
                    host_op.operands[i] = border.host(v, host_op)
                elif isinstance(v.owner, t.PrimListConstructOp):
                    lst = v.owner
                    for j, e in enumerate(lst.elements):
                        if is_vtensor(e):
                            lst.operands[j] = border.host(e, lst)
        if self.strict:
            for host_op, reason, by_design in host_ops(block.ops):
                if not by_design:
                    raise Unsupported(
                        f"'{host_op.name}' producing {_types(host_op)} cannot run on the device: {reason}"
                    )
        ret = block.last_op
        assert isinstance(ret, func.ReturnOp)
        results = []
        mutated = {k: j for j, k in spyre.aliased_arguments(fn).items()}
        for i, v in enumerate(list(ret.arguments)):
            if is_vtensor(v):
                host_v = _mirror(v, block.args[mutated[i]], ret) if i in mutated else None
                host_v = host_v or border.host(v, ret)
                cast = UnrealizedConversionCastOp.get([host_v], [host_tensor_type(v.type, ret)])
                Rewriter.insert_op(cast, InsertPoint.before(ret))
                ret.operands[i] = cast.results[0]
            results.append(ret.operands[i].type)
        fn.function_type = FunctionType.from_lists([a.type for a in block.args], results)
        _fold_casts(block)


def _mirror(v: SSAValue, arg: SSAValue, ret: Operation) -> SSAValue | None:
    """The host copy of a mutated argument's new contents `v` when they stay on the device as
    the argument's copy: a `spyre.from_device mirror`, which keeps the caller's tensor equal to
    the device's without a transfer. They do when they are the argument's device copy written in
    place (through views and scatters: a KV cache's update), or a buffer the function computed
    in the layout the function takes the argument in (a sliding-window cache's roll): the host
    executor then keeps that buffer as the argument's copy (runtime/host.py, `adopted`). None
    otherwise: the new contents go to the host."""
    owner = v.owner
    if not (isinstance(owner, UnrealizedConversionCastOp) and spyre.is_device_tensor(owner.inputs[0].type)):
        return None
    dev = root = owner.inputs[0]
    while isinstance(root.owner, spyre.PermuteOp | spyre.ReshapeOp | spyre.ScatterOp):
        root = root.owner.dest if isinstance(root.owner, spyre.ScatterOp) else root.owner.input
    in_place = isinstance(root.owner, spyre.ToDeviceOp) and root.owner.input is arg
    takes = [u.operation for u in arg.uses if isinstance(u.operation, spyre.ToDeviceOp)]
    if not in_place and not any(op.permutation is None and op.result.type == root.type == dev.type for op in takes):
        return None
    back = spyre.FromDeviceOp(dev, host_tensor_type(v.type, ret), mirror=True)
    cast = UnrealizedConversionCastOp.get([back.result], [v.type])
    Rewriter.insert_op([back, cast], InsertPoint.before(ret))
    return cast.results[0]


def _types(op: Operation) -> str:
    return ", ".join(str(r.type) for r in op.results) or "nothing"


def _fold_casts(block: Block) -> None:
    """cast(cast(x)) back to x's type -> x; then drop what is dead."""
    changed = True
    while changed:
        changed = False
        for op in list(block.ops):
            if isinstance(op, UnrealizedConversionCastOp):
                src = op.inputs[0]
                if isinstance(src.owner, UnrealizedConversionCastOp) and src.owner.inputs[0].type == op.outputs[0].type:
                    op.outputs[0].replace_all_uses_with(src.owner.inputs[0])
                    changed = True
            if isinstance(
                op, (UnrealizedConversionCastOp, arith.ConstantOp, spyre.ToDeviceOp, spyre.FromDeviceOp, *t.VALUE_OPS)
            ) and not any(r.uses for r in op.results):
                op.detach()
                op.erase()
                changed = True
