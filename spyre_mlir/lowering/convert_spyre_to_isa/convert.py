"""The `convert-spyre-to-isa` pass: programs for the planned kernels, launches for the kernel ops."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp, i64
from xdsl.ir import Block, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from spyre_mlir.dialects import spyre, spyre_isa
from spyre_mlir.lowering.convert_spyre_to_isa import (  # noqa: F401 (importing a family registers its lowerings)
    attention,
    matmul,
    movement,
    pointwise,
)
from spyre_mlir.lowering.convert_spyre_to_isa.instructions import fold_streams
from spyre_mlir.lowering.convert_spyre_to_isa.kernel import lower_kernel
from spyre_mlir.lowering.convert_spyre_to_isa.onchip import onchip_plan  # and its lowering
from spyre_mlir.lowering.convert_spyre_to_isa.plan import kernel_plan


def kernel_key(kernel: spyre.KernelOp) -> tuple:
    """What two kernels must share to lower to the same program: everything but their names
    and origins (which torch ops they compute).

        key = (input types, output types, properties but sym_name and origin (by name), attributes,
               for each op inside: name, properties, attributes but spyre.origin, result types,
                                   operands as numbers (values numbered in order of definition))

    A value from outside the kernel (none today: kernels are isolated) keys by its identity."""
    number: dict[SSAValue, int] = {}
    ops: list[tuple] = []
    for block in kernel.body.blocks:
        for a in block.args:
            number[a] = len(number)
        ops.append(("block", tuple(a.type for a in block.args)))
    for inner in kernel.body.walk():
        for region in inner.regions:
            for block in region.blocks:
                for a in block.args:
                    number[a] = len(number)
        ops.append(
            (
                inner.name,
                tuple(inner.properties.items()),
                tuple((k, v) for k, v in inner.attributes.items() if k != spyre.ORIGIN_ATTR),
                tuple(number.get(v, id(v)) for v in inner.operands),
                tuple(r.type for r in inner.results),
                tuple(tuple(a.type for b in r.blocks for a in b.args) for r in inner.regions),
            )
        )
        for r in inner.results:
            number[r] = len(number)
    return (
        tuple(v.type for v in kernel.inputs),
        tuple(r.type for r in kernel.outputs),
        tuple(sorted((k, v) for k, v in kernel.properties.items() if k not in ("sym_name", "origin"))),
        tuple(kernel.attributes.items()),
        tuple(ops),
    )


@dataclass(frozen=True)
class ConvertSpyreToIsaPass(ModulePass):
    """Lower planned spyre.kernel ops to spyre_isa programs and launches, for the cores and
    LX of the module's `spyre.target` (a kernel's buffers and an `onchip` mark's areas must
    lie inside its LX)."""

    name = "convert-spyre-to-isa"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        config = spyre.module_target(op)
        kernels = [k for k in op.walk() if isinstance(k, spyre.KernelOp)]
        first_func = next((f for f in op.ops if isinstance(f, func.FuncOp)), None)
        onchip = {k: onchip_plan(k, config.cores, config.lx_bytes) for k in kernels if k.onchip is not None}
        """Checked before any kernel becomes a launch: the check reads the producer and consumer kernels."""
        done: dict[tuple, spyre_isa.ProgramOp] = {}
        """Programs by `kernel_key`: the layers of a model repeat their
        kernels, and a repeat launches the first one's program (its launch names the kernel)."""
        for kernel in kernels:
            name = kernel.sym_name.data
            key = kernel_key(kernel)
            prog = done.get(key)
            if prog is None:
                plan = kernel_plan(kernel, config.cores, config.lx_bytes, onchip.get(kernel))
                arg_types = [v.type for v in kernel.inputs] + [r.type for r in kernel.outputs]
                block = Block(arg_types=arg_types)
                for a, arg_name in zip(block.args, [f"in{i}" for i in range(len(kernel.inputs))] + ["out"]):
                    a.name_hint = arg_name
                code = lower_kernel(plan)
                for s in fold_streams(code.per_core, block.args):
                    block.add_op(s)
                prog = spyre_isa.ProgramOp(plan.name, arg_types, len(kernel.inputs), Region(block))
                if plan.in_place is not None:
                    prog.attributes[spyre_isa.IN_PLACE_ATTR] = IntegerAttr(plan.in_place, 64)
                for attr_name, (lo, hi) in sorted(code.resident.items()):
                    prog.attributes[attr_name] = DenseArrayBase.from_list(i64, [lo, hi])
                done[key] = prog
                if first_func is not None:
                    Rewriter.insert_op(prog, InsertPoint.before(first_func))
                else:
                    op.body.block.add_op(prog)
            launch = spyre_isa.LaunchOp(
                prog.sym_name.data, list(kernel.inputs), [r.type for r in kernel.outputs], kernel=name
            )
            if kernel.origin is not None:
                launch.attributes[spyre.ORIGIN_ATTR] = kernel.origin
            Rewriter.replace_op(kernel, launch)
