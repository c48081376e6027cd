"""`spyre-fuse`: form kernels — each group of device ops becomes one `spyre.kernel` (one
program launch). This first version forms one kernel per compute op (matmul, pointwise,
reduce, restickify); views and transfers stay on the host side, between launches.

    %r = spyre.matmul %a, %b            ->   %r = spyre.kernel "k0" (%a, %b) { spyre.matmul; spyre.yield }
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from spyre_mlir.dialects import spyre

KERNEL_OPS = (spyre.MatmulOp, spyre.PointwiseOp, spyre.ReduceOp, spyre.GatherOp, spyre.SliceOp, spyre.RestickifyOp)
"""Ops that compute on the device (one launch each until fusion groups them)."""


@dataclass(frozen=True)
class SpyreFusePass(ModulePass):
    """Group device compute ops into spyre.kernel launches (one op per kernel for now)."""

    name = "spyre-fuse"

    prefix: str = "k"
    """Kernel names are prefix + a number (the backend numbers graphs: g1_k0, g2_k0, ...)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        taken = {k.sym_name.data for k in op.walk() if isinstance(k, spyre.KernelOp)}
        counter = 0
        for compute in list(op.walk()):
            if not isinstance(compute, KERNEL_OPS) or isinstance(compute.parent_op(), spyre.KernelOp | spyre.PointwiseOp):
                continue
            while f"{self.prefix}{counter}" in taken:
                counter += 1
            name = f"{self.prefix}{counter}"
            taken.add(name)
            inputs = list(compute.operands)
            block = Block(arg_types=[v.type for v in inputs])
            kernel = spyre.KernelOp(name, inputs, [r.type for r in compute.results], Region(block))
            Rewriter.insert_op(kernel, InsertPoint.before(compute))
            compute.results[0].replace_all_uses_with(kernel.outputs[0])
            compute.detach()
            for i, arg in enumerate(block.args):
                compute.operands[i] = arg
            block.add_op(compute)
            block.add_op(spyre.YieldOp(compute.results[0]))

