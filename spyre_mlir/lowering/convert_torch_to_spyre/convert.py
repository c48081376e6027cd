"""The pass: the lowerings registered, the device ops they take, and the border placed
function by function."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr, UnrealizedConversionCastOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker
from xdsl.rewriter import InsertPoint, Rewriter

from spyre_mlir.analysis.origins import carrying
from spyre_mlir.diagnostics import Unsupported
from spyre_mlir.dialects import spyre
from spyre_mlir.dialects import torch as t
from spyre_mlir.lowering.convert_torch_to_spyre.border import Border, Lowering
from spyre_mlir.lowering.convert_torch_to_spyre.convolution import LowerConvolution
from spyre_mlir.lowering.convert_torch_to_spyre.elementwise import (
    LowerBinary,
    LowerClamp,
    LowerPow,
    LowerUnary,
    LowerWhere,
)
from spyre_mlir.lowering.convert_torch_to_spyre.functions import (
    LowerActivations,
    LowerBinaryFunctions,
    LowerUnaryFunctions,
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
from spyre_mlir.lowering.convert_torch_to_spyre.reductions import (
    LowerAddmv,
    LowerLayerNorm,
    LowerLogSoftmax,
    LowerReductions,
    LowerSoftmax,
    LowerVariance,
    LowerVectorNorm,
)
from spyre_mlir.lowering.convert_torch_to_spyre.slicing import (
    LowerCat,
    LowerEmbedding,
    LowerFlip,
    LowerIndexPut,
    LowerSlice,
)
from spyre_mlir.lowering.convert_torch_to_spyre.utils import host_tensor_type, is_vtensor
from spyre_mlir.lowering.convert_torch_to_spyre.views import LowerCopy, LowerExpand, LowerMatmul, LowerViews
from spyre_mlir.target.config import DeviceConfig

LOWERINGS: tuple[type[Lowering], ...] = (
    LowerViews,
    LowerCopy,
    LowerExpand,
    LowerEmbedding,
    LowerIndexPut,
    LowerSlice,
    LowerCat,
    LowerFlip,
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
    LowerLogSoftmax,
    LowerVariance,
    LowerVectorNorm,
    LowerAddmv,
    LowerLayerNorm,
    LowerConvolution,
    LowerUnaryFunctions,
    LowerBinaryFunctions,
    LowerActivations,
)


def device_ops(lowerings: Sequence[type[Lowering]]) -> dict[str, str]:
    """The torch ops `lowerings` take, each with what it becomes (their `lowers`, in order);
    an op two of them claim is an error (the first would shadow the second)."""
    found: dict[str, str] = {}
    owner: dict[str, type[Lowering]] = {}
    for cls in lowerings:
        for name, what in cls.lowers.items():
            if name in owner:
                raise ValueError(f"'{name}' is lowered by both {owner[name].__name__} and {cls.__name__}")
            found[name], owner[name] = what, cls
    return found


DEVICE_OPS: dict[str, str] = device_ops(LOWERINGS)
"""Every torch op with a device lowering, and what it becomes (docs/ops.md is generated from it)."""


@dataclass(frozen=True)
class ConvertTorchToSpyrePass(ModulePass):
    """Lower `torch` ops to `spyre` device ops where they can run on the device; the rest stay
    on the host, with transfers at the border."""

    name = "convert-torch-to-spyre"

    strict: bool = False
    """Refuse (naming the op and why) instead of leaving a float op on the host."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = spyre.module_target(op)
        for fn in op.walk():
            if isinstance(fn, func.FuncOp) and not fn.is_declaration:
                self.convert_function(fn, target)

    def convert_function(self, fn: func.FuncOp, target: DeviceConfig) -> None:
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
        for op in block.ops:  # a later pass refused the device ops these became (spyre.REFUSED)
            reason = op.attributes.get(spyre.REFUSED)
            if isinstance(reason, StringAttr):
                refused[op] = reason.data
        module = fn.get_toplevel_object()
        assert isinstance(module, ModuleOp)
        PatternRewriteWalker(
            carrying(
                module, GreedyRewritePatternApplier([cls(border, refused, target, self.strict) for cls in LOWERINGS])
            ),
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
