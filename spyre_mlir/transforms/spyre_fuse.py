"""`spyre-fuse`: form kernels — each group of device ops becomes one `spyre.kernel` (one
program launch); views and transfers stay on the host side, between launches.

1. Pointwise chains (option `pointwise_chains`, on by default): a spyre.pointwise whose only
   reader is another spyre.pointwise of the same shape and layout is folded into it, the
   bodies concatenated; the intermediate then lives in the SFP's f32 temporaries instead of
   being rounded to the storage format and stored:

       %p = spyre.pointwise %a       { f(a) }          %c = spyre.pointwise %a, %b {
       %c = spyre.pointwise %p, %b   { g(p, b) }  ->     g(f(a), b) }

2. Row groups (option `row_groups`, on by default): a reduction along the stick dim and the
   pointwise ops around it that read and write its layout or its splat (softmax, layer norm,
   RMS norm) become one kernel whose intermediates never leave LX (spyre.RowGroup),
   when only the group's last result is read outside it:

       %m = reduce max %x; %e = pointwise(%x, %m); %s = reduce sum %e; %y = pointwise(%e, %s)
         -> %y = spyre.kernel "k0" (%x) { the four ops; spyre.yield %y }

3. Epilogues (option `epilogues`, on by default): a matmul whose only reader is a pointwise op
   on its layout (bias, activation, residual add) shares its kernel: the op runs on each
   output tile's fp32 sums in LX (the matmul's result is not rounded on its own) and only its
   result is rounded and stored (spyre.Epilogue). A free reshape between the two that moves
   no element (a decoder's `o_proj(h).view(1, 1, d) + residual`: unit dims added) is looked
   through: the pointwise op is rewritten on the matmul's shape and layout, its other inputs
   reshaped to it, and its result reshaped back:

       %m = matmul ..  -> 1x576                 %r' = spyre.reshape %r -> 1x576
       %v = spyre.reshape %m -> 1x1x576    ->   %p' = spyre.pointwise %m, %r'  (1x576)
       %p = spyre.pointwise %v, %r              %p = spyre.reshape %p' -> 1x1x576

4. Sliced concats (option `sliced_concats`, on by default): a spyre.concat and the slices
   it alone reads share a kernel; each such part is DMAed from the slice's input, from its
   start, and the slice is never stored (a rotary embedding's cat(t[h:], t[:h]) along a dim
   of whole sticks: one launch, not three):

       %a = spyre.slice %t start [32, 0]; %b = spyre.slice %t start [0, 0]; %c = spyre.concat %a, %b
         -> %c = spyre.kernel "k0" (%t) { the three ops; spyre.yield %c }

   A pointwise op that alone reads such a concat, placed as its result (the rotary
   embedding's t * cos + cat(t[h:], t[:h]) * sin'), takes the concat and its slices into its
   own kernel instead: each part of an input tile is DMAed from the slice's input, and the
   swapped copy is never stored (spyre.pointwise_sliced_inputs):

       %c = spyre.concat %a, %b; %y = spyre.pointwise %t, %cos, %c, %sin
         -> %y = spyre.kernel "k0" (%t, %cos, %sin) { the slices, the concat, the pointwise op }

5. Attention (option `attention`, on by default): a batched product whose result only a row
   group reads (through a view), and a batched product that alone reads the group's result as
   its A (the scores, the softmax with the mask's add, the context) share one kernel
   (spyre.Attention): each core computes a chunk of rows' scores, their softmax and their
   context in LX, and the scores never reach DDR. Taken where a matrix's whole K^T and V and
   a chunk of 8 rows fit the LX budget, and where there are rows for every core (batches x
   rows >= cores x 8: a decode step's few rows keep their products split over all cores);
   the budget and the cores are the module's `spyre.target`'s:

       %s = matmul %q, %kt; %sv = reshape %s; <row group on %sv, %mask> -> %p; %pv = reshape %p
       %c = matmul %pv, %v
         -> %c = spyre.kernel "k0" (%q, %kt, %mask, %v) { the ops and views; spyre.yield %c }

6. Gathered operands (option `gathered_operands`, on by default): a gather whose result only a
   matmul or a restickify reads, through views, as one operand, shares its kernel
   (spyre.GatheredOperand): the op's loads of that operand gather the rows' sticks from the
   table, and the gathered rows never reach DDR (the pages of a KV cache read once). Where
   the restickify transposes whole 64 x 64 blocks and a matmul alone reads its result as B
   (the keys as K^T), the matmul joins too: each block of its B tiles is gathered and
   transposed in LX, and K^T never reaches DDR either. An attention kernel (5.) takes the
   gathers of its V and of its K^T's keys so, where the LX budget holds their buffers:

       %g = gather %cache[%rows]; %v = permute (reshape %g); %c = matmul %p, %v
         -> %c = spyre.kernel "k0" (%p, %cache, %rows) { the gather, the views, the matmul }

7. One kernel per remaining compute op (matmul, pointwise, reduce, gather, slice, restickify):

       %r = spyre.matmul %a, %b      ->   %r = spyre.kernel "k0" (%a, %b) { spyre.matmul; spyre.yield }

A spyre.pointwise whose kernel could not address an input (one stick stride per loop:
spyre.pointwise_loops; hand-written layouts that spyre-propagate-layouts never leaves)
is refused, naming the op, the two layouts and the reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from spyre_mlir.analysis.buffers import attention_buffers, gathered_scratch
from spyre_mlir.analysis.origins import kernel_origins, part_origin, pointwise_origin
from spyre_mlir.analysis.sticks import slice_strides
from spyre_mlir.dialects import spyre
from spyre_mlir.dialects.spyre import epilogue, pointwise_loops, pointwise_sliced_inputs, row_group
from spyre_mlir.layout import loop_dims
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.target.constants import STICK_BYTES

KERNEL_OPS = (
    spyre.MatmulOp,
    spyre.PointwiseOp,
    spyre.ReduceOp,
    spyre.GatherOp,
    spyre.ScatterOp,
    spyre.SliceOp,
    spyre.ConcatOp,
    spyre.RestickifyOp,
)
"""Ops that compute on the device (one launch each until fusion groups them)."""


@dataclass(frozen=True)
class SpyreFusePass(ModulePass):
    """Group device compute ops into spyre.kernel launches: pointwise chains, row groups,
    matmul epilogues, sliced concats, attention and gathers with their readers share a kernel;
    every other compute op is a kernel of its own."""

    name = "spyre-fuse"

    prefix: str = "k"
    """Kernel names are prefix + a number (the backend numbers graphs: g1_k0, g2_k0, ...)."""

    pointwise_chains: bool = True
    """Fold single-use pointwise producers into their pointwise consumer (off: one launch each)."""

    row_groups: bool = True
    """Reductions and their pointwise neighbours in one kernel (off: one launch each)."""

    epilogues: bool = True
    """A matmul's single pointwise consumer applied to its output tiles (off: a launch of its own)."""

    sliced_concats: bool = True
    """A concat and the slices only it reads in one kernel (off: a launch each)."""

    attention: bool = True
    """The scores product, a row group on its rows and the product reading the group's result
    in one kernel (off: three launches, the scores through DDR)."""

    gathered_operands: bool = True
    """A gather and the matmul or restickify that alone reads its rows in one kernel (off: the
    gathered rows through DDR)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.pointwise_chains:
            for consumer in [o for o in op.walk() if isinstance(o, spyre.PointwiseOp)]:
                while (producer := _foldable_producer(consumer)) is not None:
                    consumer = _fold(producer, consumer)
        taken = {k.sym_name.data for k in op.walk() if isinstance(k, spyre.KernelOp)}
        counter = 0
        if self.attention and self.row_groups:
            config = spyre.module_target(op)
            for group in _row_groups(op):
                if (fused := self._attention_ops(group, config)) is None:
                    continue
                while f"{self.prefix}{counter}" in taken:
                    counter += 1
                taken.add(f"{self.prefix}{counter}")
                _group_kernel(f"{self.prefix}{counter}", fused)
        if self.epilogues:
            for mm in [
                o for o in op.walk() if isinstance(o, spyre.MatmulOp) and not isinstance(o.parent_op(), spyre.KernelOp)
            ]:
                _look_through_reshape(mm)
                users = [u.operation for u in mm.result.uses]
                if (
                    len(users) != 1
                    or not isinstance(users[0], spyre.PointwiseOp)
                    or users[0].parent_block() is not mm.parent_block()
                ):
                    continue
                try:
                    epilogue([mm, users[0]])
                except ValueError:
                    continue
                while f"{self.prefix}{counter}" in taken:
                    counter += 1
                taken.add(f"{self.prefix}{counter}")
                _group_kernel(f"{self.prefix}{counter}", [mm, users[0]])
        if self.row_groups:
            for group in _row_groups(op):
                while f"{self.prefix}{counter}" in taken:
                    counter += 1
                taken.add(f"{self.prefix}{counter}")
                _group_kernel(f"{self.prefix}{counter}", group)
        if self.sliced_concats:
            for pw in [o for o in op.walk() if isinstance(o, spyre.PointwiseOp)]:
                if isinstance(pw.parent_op(), spyre.KernelOp | spyre.PointwiseOp) or not (reads := _sliced_inputs(pw)):
                    continue
                while f"{self.prefix}{counter}" in taken:
                    counter += 1
                taken.add(f"{self.prefix}{counter}")
                _group_kernel(f"{self.prefix}{counter}", [*reads, pw])
            for cat in [o for o in op.walk() if isinstance(o, spyre.ConcatOp)]:
                if isinstance(cat.parent_op(), spyre.KernelOp) or not (slices := _sliced_parts(cat)):
                    continue
                while f"{self.prefix}{counter}" in taken:
                    counter += 1
                taken.add(f"{self.prefix}{counter}")
                _group_kernel(f"{self.prefix}{counter}", [*slices, cat])
        if self.gathered_operands:
            for gather in [o for o in op.walk() if isinstance(o, spyre.GatherOp)]:
                if isinstance(gather.parent_op(), spyre.KernelOp) or (ops := _gathered_ops(gather)) is None:
                    continue
                while f"{self.prefix}{counter}" in taken:
                    counter += 1
                taken.add(f"{self.prefix}{counter}")
                _group_kernel(f"{self.prefix}{counter}", ops)
        for compute in list(op.walk()):
            if not isinstance(compute, KERNEL_OPS) or isinstance(
                compute.parent_op(), spyre.KernelOp | spyre.PointwiseOp
            ):
                continue
            if isinstance(compute, spyre.PointwiseOp):
                _check_pointwise(compute)
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
        kernel_origins(op)

    def _attention_ops(self, group: list[Operation], config: DeviceConfig) -> list[Operation] | None:
        """The ops of an attention kernel around row group `group` (module docstring, 5.), in
        block order, or None where the group is not between two such products, or where the
        kernel would not fit the planner's LX or leave some of the device's cores without rows
        (`config`, the module's target)."""
        block = group[0].parent_block()
        made = {o.results[0] for o in group}
        views: list[Operation] = []
        scores = None
        for v in (v for o in group for v in o.operands if v not in made):
            owner = v.owner
            if isinstance(owner, spyre.ReshapeOp) and isinstance(owner.input.owner, spyre.MatmulOp):
                views, scores = [owner], owner.input.owner
            elif isinstance(owner, spyre.MatmulOp):
                views, scores = [], owner
            if scores is not None:
                break
        uses = list(group[-1].results[0].uses)
        after = uses[0].operation if len(uses) == 1 else None
        if isinstance(after, spyre.ReshapeOp) and len(list(after.result.uses)) == 1:
            views.append(after)
            after = next(iter(after.result.uses)).operation
        if scores is None or not isinstance(after, spyre.MatmulOp):
            return None
        if any(o.parent_block() is not block for o in (scores, after, *views)):
            return None
        try:
            att = spyre.attention([scores, *group, after])
        except ValueError:
            return None
        # a restickify that alone reads the context (through views) and moves whole sticks
        # (the heads side by side for the output projection): stored so by the kernel
        _, _, relayout = spyre.read_through_views(after.result)
        if isinstance(relayout, spyre.RestickifyOp) and relayout.parent_block() is block:
            try:
                att = spyre.attention([scores, *group, after, relayout])
                views += [*att.views, relayout]
            except ValueError:
                pass
        if math.prod(spyre.device_layout(scores.lhs.type).shape[:-1]) < config.cores * config.pt_rows:
            return None
        assert block is not None
        order = {o: i for i, o in enumerate(block.ops)}
        ops = sorted({scores, *group, after, *views}, key=order.__getitem__)
        inputs = list(dict.fromkeys(v for o in ops for v in o.operands if v.owner not in ops))
        bufs = attention_buffers(att, config.pt_rows, inputs, double=False)
        fits = sum(bufs.values())
        if fits * STICK_BYTES > config.planner_lx_bytes:
            return None
        if not self.gathered_operands:
            return ops
        # the pages of K (as K^T) and V gathered in the kernel (6.), or V's alone where K^T's
        # gathered blocks would not fit
        keys, values = _gathered_chain(scores.rhs, block, True), _gathered_chain(after.rhs, block, False)
        for extra in ([*keys, *values], values):
            if not extra:
                continue
            with_gathers = sorted({*ops, *extra}, key=order.__getitem__)
            try:
                form = spyre.kernel_form(
                    [o for o in with_gathers if not isinstance(o, spyre.ReshapeOp | spyre.PermuteOp)]
                )
            except ValueError:
                continue
            scratch = gathered_scratch(bufs["kt"]) if any(g.transposed for g in form.gathered) else 0
            if (fits + scratch) * STICK_BYTES <= config.planner_lx_bytes:
                return with_gathers
        return ops


def _check_pointwise(op: spyre.PointwiseOp) -> None:
    """Refuse a pointwise op whose kernel could not address its inputs (the kernel verifier
    would, and the pass would fail on its own output): hand-written layouts that
    spyre-propagate-layouts never leaves."""
    try:
        pointwise_loops(op)
    except ValueError as e:
        raise PassFailedException(f"'spyre.pointwise': {e} (run spyre-propagate-layouts first)") from None


def _look_through_reshape(mm: spyre.MatmulOp) -> None:
    """When `mm`'s only reader is a spyre.reshape whose only reader is a pointwise op in its
    block, whose inputs can be read on the matmul's shape (`_broadcast_shape`), and the
    reshape moves no element (the op's result placed as the matmul's reshaped:
    `Layout.places_like`), rewrite the op on the matmul's shape and layout (module
    docstring, 3.) so that it can be the epilogue; else leave the IR as it is."""
    uses = list(mm.result.uses)
    view = uses[0].operation if len(uses) == 1 else None
    if not isinstance(view, spyre.ReshapeOp) or len(list(view.result.uses)) != 1:
        return
    pw = next(iter(view.result.uses)).operation
    if not isinstance(pw, spyre.PointwiseOp) or pw.parent_block() is not mm.parent_block():
        return
    out, res = spyre.device_layout(mm.result.type), spyre.device_layout(pw.result.type)
    back = out.reshaped(res.shape)
    if back is None or not back.places_like(res) or len(out.shape) != 2:
        return
    inputs: list[SSAValue] = []
    views: list[spyre.ReshapeOp] = []
    for v in pw.inputs:
        if v is view.result:
            inputs.append(mm.result)
            continue
        lay = spyre.device_layout(v.type)
        shape = _broadcast_shape(lay.shape, res.shape, out.shape)
        flat = lay.reshaped(shape) if shape is not None else None
        if shape is None or flat is None:
            for r in views:  # detached: only their operands' uses to drop
                r.erase()
            return
        views.append(spyre.ReshapeOp(v, spyre.device_tensor_type(shape, flat)))
        inputs.append(views[-1].result)
    body = pw.body.clone()
    moved = spyre.PointwiseOp(inputs, mm.result.type, body)
    try:
        epilogue([mm, moved])
    except ValueError:
        moved.erase()
        for r in views:
            r.erase()
        return
    restored = spyre.ReshapeOp(moved.result, pw.result.type)
    pointwise_origin(restored, [pw])  # pw's result, through a view of the op on the matmul's shape
    for part in (moved, *views):  # that op and the views of its inputs: pw's work, no torch value
        part_origin(part, pw)
    Rewriter.insert_op([*views, moved, restored], InsertPoint.before(pw))
    pw.result.replace_all_uses_with(restored.result)
    Rewriter.erase_op(pw)
    Rewriter.erase_op(view)


def _sliced_parts(cat: spyre.ConcatOp) -> list[spyre.SliceOp]:
    """The slices among `cat`'s inputs, in its block, that only it reads and whose input's
    sticks hold the part by one stride per loop of the concat (`slice_strides`), in order."""
    loops = loop_dims(spyre.device_layout(cat.result.type))
    found: list[spyre.SliceOp] = []
    for v in cat.inputs:
        sl = v.owner
        if (
            isinstance(sl, spyre.SliceOp)
            and sl not in found
            and sl.parent_block() is cat.parent_block()
            and all(u.operation is cat for u in sl.result.uses)
            and slice_strides(sl, loops) is not None
        ):
            found.append(sl)
    block = cat.parent_block()
    assert block is not None
    order = {o: i for i, o in enumerate(block.ops)} if len(found) > 1 else {}
    return sorted(found, key=lambda o: order.get(o, 0))


def _sliced_inputs(pw: spyre.PointwiseOp) -> list[Operation]:
    """The slices and concats of `pw`'s inputs that are concats of slices it can read part by
    part (each concat in its block, read by `pw` alone, placed as `pw`'s result, along one
    loop of it in whole units, every part a slice only the concat reads whose input's sticks
    hold it by one stride per loop: `slice_strides`), in block order; [] if none is."""
    if not any(isinstance(v.owner, spyre.ConcatOp) for v in pw.inputs):
        return []
    try:
        loops = pointwise_loops(pw)[0]
    except ValueError:  # refused with the reason later (_check_pointwise)
        return []
    out = spyre.device_layout(pw.result.type).canonical()
    found: list[Operation] = []
    for v in dict.fromkeys(pw.inputs):
        cat = v.owner
        if (
            not isinstance(cat, spyre.ConcatOp)
            or cat.parent_block() is not pw.parent_block()
            or any(u.operation is not pw for u in cat.result.uses)
            or spyre.device_layout(cat.result.type).canonical() != out
        ):
            continue
        along = [d for d in loops if d.host_dim == cat.dim.value.data]
        slices = _sliced_parts(cat)
        if (
            len(along) != 1
            or len(slices) != len(cat.inputs)
            or any(slice_strides(sl, loops) is None for sl in slices)
            or any(o % along[0].weight for o in cat.offsets())
        ):
            continue
        found += [*slices, cat]
    if not found:
        return []
    block = pw.parent_block()
    assert block is not None
    order = {o: i for i, o in enumerate(block.ops)}
    ops = sorted(found, key=order.__getitem__)
    try:
        pointwise_sliced_inputs([*ops, pw])
    except ValueError:
        return []
    return ops


def _broadcast_shape(
    shape: tuple[int, ...], result: tuple[int, ...], target: tuple[int, ...]
) -> tuple[int, ...] | None:
    """The shape an input of `shape` broadcast to `result` takes to broadcast the same way to
    `target`: `target` itself for a full input; when `result` and `target` differ by unit
    dims only, the input's dims along `result`'s others placed along `target`'s; else None."""
    if shape == result:
        return target
    if [n for n in result if n > 1] != [n for n in target if n > 1]:
        return None
    padded = (1,) * (len(result) - len(shape)) + shape
    kept = iter(padded[i] for i, n in enumerate(result) if n > 1)
    return tuple(next(kept) if n > 1 else 1 for n in target)


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
    value_map = {
        a: produced if v is producer.result else arg_of[v] for a, v in zip(consumer.body.block.args, consumer.inputs)
    }
    block.add_op(spyre.YieldOp(_clone_body(consumer.body.block, value_map, block)))
    fused = spyre.PointwiseOp(inputs, consumer.result.type, Region(block))
    pointwise_origin(fused, [producer, consumer])
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


def _row_groups(module: ModuleOp) -> list[list[Operation]]:
    """Groups of reductions and pointwise ops that form a valid row group (spyre.row_group)
    whose only value read outside is the last op's result."""
    taken: set[Operation] = set()
    groups = []
    positions: dict[Block, dict[Operation, int]] = {}
    """Each block's ops by position (Block.get_operation_index walks the block: quadratic)."""

    def position(op: Operation) -> int:
        block = op.parent_block()
        assert block is not None
        if block not in positions:
            positions[block] = {o: i for i, o in enumerate(block.ops)}
        return positions[block][op]

    for seed in [o for o in module.walk() if isinstance(o, spyre.ReduceOp)]:
        if seed in taken or isinstance(seed.parent_op(), spyre.KernelOp):
            continue
        try:
            row_group([seed])
        except ValueError:
            continue
        # Grow the group to its fixpoint: an op joins when it fits and is a member's user,
        # or a pointwise producer all of whose users are members. row_group checks each op
        # against the group's first reduction only (its layout, dim and splat, which every
        # reduction of a group shares), so an op fits iff it fits [seed, op] in order, and a
        # rejected one never fits this seed. A producer's "all users are members" can only
        # become true when one of its users joins, and that user is visited after it joins:
        # a worklist reaches the same fixpoint as repeated sweeps.
        members: set[Operation] = {seed}
        rejected: set[Operation] = set()
        work: list[spyre.ReduceOp | spyre.PointwiseOp] = [seed]
        while work:
            m = work.pop()
            neighbours = [u.operation for r in m.results for u in r.uses]
            neighbours += [
                v.owner
                for v in m.operands
                if isinstance(v.owner, spyre.PointwiseOp) and all(u.operation in members for u in v.owner.result.uses)
            ]
            for n in neighbours:
                if (
                    n in members
                    or n in taken
                    or n in rejected
                    or not isinstance(n, spyre.ReduceOp | spyre.PointwiseOp)
                    or n.parent_block() is not seed.parent_block()
                ):
                    continue
                try:
                    row_group(sorted((seed, n), key=position))
                except ValueError:
                    rejected.add(n)
                    continue
                members.add(n)
                work.append(n)
        group = _closed_prefix(sorted(members, key=position), members)
        if group is None:
            continue
        try:
            row_group(group)  # the group, as the kernel's lowering will see it
        except ValueError:
            continue
        taken |= set(group)
        groups.append(group)
    return groups


def _closed_prefix(ordered: list[Operation], members: set[Operation]) -> list[Operation] | None:
    """The ops of `ordered` (a grown group, in block order) up to the first one read outside
    the group, when only that one is read outside them and they hold a reduction; else None.

    Growth follows residual adds from one norm into the next (x1 = norm(h); h2 = x1 + f(x1);
    x2 = norm(h2); ...), so a group can span every layer; its first norm's result is read
    outside (by f), and the group ends there. The rest is a later seed's to group."""

    def read_outside(o: Operation, inside: set[Operation]) -> bool:
        return any(u.operation not in inside for r in o.results for u in r.uses)

    first = next((i for i, o in enumerate(ordered) if read_outside(o, members)), None)
    if first is None:
        return None
    group = ordered[: first + 1]
    inside = set(group)
    escaping = [o for o in group if read_outside(o, inside)]
    if len(group) < 2 or escaping != [group[-1]] or not any(isinstance(o, spyre.ReduceOp) for o in group):
        return None
    return group


def _gathered_ops(gather: spyre.GatherOp) -> list[Operation] | None:
    """The gather, the views of its result and the matmul or restickify that alone reads it
    (module docstring, 6.), in order; None where its result is read otherwise."""
    _, views, user = spyre.read_through_views(gather.result)
    if not isinstance(user, spyre.MatmulOp | spyre.RestickifyOp) or any(
        o.parent_block() is not gather.parent_block() for o in (user, *views)
    ):
        return None
    if isinstance(user, spyre.RestickifyOp):  # a block transpose read by a matmul as its B: that matmul's too
        _, after, mm = spyre.read_through_views(user.result)
        if isinstance(mm, spyre.MatmulOp) and all(o.parent_block() is gather.parent_block() for o in (mm, *after)):
            try:
                spyre.kernel_form([gather, user, mm])
                return [gather, *views, user, *after, mm]
            except ValueError:
                pass
    try:
        spyre.kernel_form([gather, user])
    except ValueError:
        return None
    return [gather, *views, user]


def _gathered_chain(v: SSAValue, block: Block | None, transposed: bool) -> list[Operation]:
    """The gather (in `block`, in no kernel) whose rows make `v` through single-use views (or,
    with `transposed`, through a restickify too), with those ops; [] where there is none."""

    def back(v: SSAValue) -> tuple[list[Operation], Operation | None]:
        views: list[Operation] = []
        while isinstance(v.owner, spyre.ReshapeOp | spyre.PermuteOp) and len(list(v.uses)) == 1:
            views.insert(0, v.owner)
            v = v.owner.input
        owner = v.owner
        return views, owner if isinstance(owner, Operation) and len(list(v.uses)) == 1 else None

    views, src = back(v)
    chain = views
    if transposed and isinstance(src, spyre.RestickifyOp):
        before, src2 = back(src.input)
        chain, src = [*before, src, *views], src2
    if not isinstance(src, spyre.GatherOp) or src.parent_block() is not block:
        return []
    if any(o.parent_block() is not block for o in chain):
        return []
    return [src, *chain]


def _group_kernel(name: str, ops: list[Operation]) -> spyre.KernelOp:
    """Move a row group into one spyre.kernel placed where its last op was."""
    inside = set(ops)
    inputs: list[SSAValue] = []
    for o in ops:
        for v in o.operands:
            if v.owner not in inside and v not in inputs:
                inputs.append(v)
    last = ops[-1]
    block = Block(arg_types=[v.type for v in inputs])
    kernel = spyre.KernelOp(name, inputs, [last.results[0].type], Region(block))
    Rewriter.insert_op(kernel, InsertPoint.before(last))
    last.results[0].replace_all_uses_with(kernel.outputs[0])
    arg_of = dict(zip(inputs, block.args))
    for o in ops:
        o.detach()
        for i, v in enumerate(o.operands):
            if v in arg_of:
                o.operands[i] = arg_of[v]
        block.add_op(o)
    block.add_op(spyre.YieldOp(last.results[0]))
    return kernel
