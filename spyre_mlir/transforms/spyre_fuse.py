"""`spyre-fuse`: form kernels — each group of device ops becomes one `spyre.kernel` (one
program launch); views and transfers stay on the host side, between launches.

1. Pointwise chains (option `pointwise_chains`, on by default): a spyre.pointwise whose only
   reader is another spyre.pointwise of the same shape and layout is folded into it, the
   bodies concatenated; the intermediate then lives in the SFP's f32 temporaries instead of
   being rounded to the storage format and stored:

       %p = spyre.pointwise %a       { f(a) }          %c = spyre.pointwise %a, %b {
       %c = spyre.pointwise %p, %b   { g(p, b) }  ->     g(f(a), b) }

2. One kernel per remaining compute op (matmul, pointwise, reduce, gather, slice, restickify):

       %r = spyre.matmul %a, %b      ->   %r = spyre.kernel "k0" (%a, %b) { spyre.matmul; spyre.yield }
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
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

    pointwise_chains: bool = True
    """Fold single-use pointwise producers into their pointwise consumer (off: one launch each)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.pointwise_chains:
            for consumer in [o for o in op.walk() if isinstance(o, spyre.PointwiseOp)]:
                while (producer := _foldable_producer(consumer)) is not None:
                    consumer = _fold(producer, consumer)
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



def _foldable_producer(consumer: spyre.PointwiseOp) -> spyre.PointwiseOp | None:
    """An input of `consumer` made by a pointwise op that nobody else reads, with the
    consumer's result type (so the producer's inputs broadcast to the consumer's result as
    they did to its own)."""
    if isinstance(consumer.parent_op(), spyre.KernelOp):
        return None
    for v in consumer.inputs:
        producer = v.owner
        if (
            isinstance(producer, spyre.PointwiseOp)
            and producer.result.type == consumer.result.type
            and all(u.operation is consumer for u in producer.result.uses)
        ):
            return producer
    return None


def _fold(producer: spyre.PointwiseOp, consumer: spyre.PointwiseOp) -> spyre.PointwiseOp:
    """One pointwise op computing consumer(producer(...), ...): inputs are the consumer's, with
    the producer's in place of its result (each value once); bodies are cloned in order."""
    inputs: list[SSAValue] = []
    for v in consumer.inputs:
        for w in producer.inputs if v is producer.result else [v]:
            if w not in inputs:
                inputs.append(w)
    block = Block(arg_types=[consumer.body.block.args[0].type] * len(inputs))
    arg_of = dict(zip(inputs, block.args))
    value_map: dict[SSAValue, SSAValue] = {a: arg_of[v] for a, v in zip(producer.body.block.args, producer.inputs)}
    produced = _clone_body(producer.body.block, value_map, block)
    value_map = {a: produced if v is producer.result else arg_of[v] for a, v in zip(consumer.body.block.args, consumer.inputs)}
    block.add_op(spyre.YieldOp(_clone_body(consumer.body.block, value_map, block)))
    fused = spyre.PointwiseOp(inputs, consumer.result.type, Region(block))
    Rewriter.replace_op(consumer, fused)
    Rewriter.erase_op(producer)
    return fused


def _clone_body(body: Block, value_map: dict[SSAValue, SSAValue], into: Block) -> SSAValue:
    """Clone the ops of a pointwise body into `into`; the value its yield returns."""
    for body_op in body.ops:
        if isinstance(body_op, spyre.YieldOp):
            return value_map[body_op.values[0]]
        clone: Operation = body_op.clone(value_mapper=value_map)
        into.add_op(clone)
    raise AssertionError("a verified pointwise body ends with spyre.yield")
